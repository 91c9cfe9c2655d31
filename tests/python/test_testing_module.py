"""lucid.testing (torch.testing): assert_close's outcomes and messages against
torch.testing.assert_close on the same inputs, assert_allclose, and make_tensor."""

import dataclasses
import math
import warnings

import pytest
import torch

import lucid
import lucid.testing
from conftest import DTYPE_NAMES


def outcome(fn):
    """None when fn passes, else (exception type name, message with torch's names as lucid's)."""
    try:
        fn()
    except Exception as e:
        return type(e).__name__, str(e).replace("torch.", "lucid.")
    return None


def same_outcome(build, **kwargs):
    """build(m) gives (actual, expected) from module m (lucid or torch): assert_close ends
    the same way for both, message included. Returns the outcome."""
    ours = outcome(lambda: lucid.testing.assert_close(*build(lucid), **kwargs))
    theirs = outcome(lambda: torch.testing.assert_close(*build(torch), **kwargs))
    assert ours == theirs
    return ours


NAN, INF = float("nan"), float("inf")
PASSING = [
    lambda m: (m.tensor([1.0, 2.0]), m.tensor([1.0, 2.0])),
    lambda m: (m.tensor([1.0, 2.0]), m.tensor([1.0, 2.0 + 2e-6])),
    lambda m: (m.tensor([1.0, 2.0], dtype=m.float16), m.tensor([1.0, 2.001], dtype=m.float16)),
    lambda m: (m.tensor([1.0, 2.0], dtype=m.bfloat16), m.tensor([1.0, 2.01], dtype=m.bfloat16)),
    lambda m: (m.tensor([1, 2, 3]), m.tensor([1, 2, 3])),
    lambda m: (m.tensor([True, False]), m.tensor([True, False])),
    lambda m: (m.tensor([1 + 1j, 2j]), m.tensor([1 + 1j, 2j + 1e-7])),
    lambda m: (m.tensor([INF, -INF]), m.tensor([INF, -INF])),
    lambda m: ([m.tensor(1.0), (m.tensor([2]), 3)], [m.tensor(1.0), (m.tensor([2]), 3)]),
    lambda m: ({"a": m.tensor([1.0]), "b": [None, True]}, {"b": [None, True], "a": m.tensor([1.0])}),
    lambda m: (1.0, 1.0 + 1e-8), lambda m: (3, 3), lambda m: (1 + 2j, 1 + 2j), lambda m: (None, None),
    lambda m: (m.Size([2, 3]), m.Size([2, 3])),
    lambda m: (m.tensor([]), m.tensor([])),
    lambda m: (m.zeros(3, 4).t(), m.zeros(4, 3)),  # (strides are not checked by default)
]


@pytest.mark.parametrize("build", PASSING)
def test_passing(build):
    assert same_outcome(build) is None


FAILING = [
    lambda m: (m.tensor([1.0, 2.0, 3.0]), m.tensor([1.0, 2.5, 3.0])),
    lambda m: (m.tensor([[1.0, 2.0], [3.0, 4.0]]), m.tensor([[1.0, 2.0], [3.0, 0.0]])),
    lambda m: (m.tensor([1, 2, 3]), m.tensor([1, 5, 0])),
    lambda m: (m.tensor([-128, 127], dtype=m.int8), m.tensor([127, -128], dtype=m.int8)),
    lambda m: (m.tensor([True, False]), m.tensor([True, True])),
    lambda m: (m.tensor([1 + 1j, 2j]), m.tensor([1 + 1j, 3j])),
    lambda m: (m.tensor([1.0, NAN]), m.tensor([1.0, 2.0])),
    lambda m: (m.tensor([NAN]), m.tensor([NAN])),
    lambda m: (m.tensor([INF, 1.0]), m.tensor([-INF, 1.0])),
    lambda m: (m.tensor([1.0, 2.0], dtype=m.float16), m.tensor([1.0, 2.01], dtype=m.float16)),
    lambda m: (m.tensor(1.0), m.tensor(2.0)),
    lambda m: (m.tensor(3), m.tensor(0)),
    lambda m: (m.tensor([1.0]), m.tensor([1.0, 2.0])),
    lambda m: (m.tensor([1.0]), m.tensor([1.0], dtype=m.float64)),
    lambda m: (m.tensor([1.0]), 1.0),
    lambda m: ([m.tensor([1.0]), m.tensor([2.0])], [m.tensor([1.0])]),
    lambda m: ({"a": m.tensor([1.0])}, {"b": m.tensor([1.0])}),
    lambda m: ([m.tensor([1.0]), {"x": [m.tensor([1.0, 5.0])]}], [m.tensor([1.0]), {"x": [m.tensor([1.0, 6.0])]}]),
    lambda m: (1.0, 1.1), lambda m: (1, 2), lambda m: (1 + 1j, 1 + 2j), lambda m: (0.0, 1.0),
    lambda m: (True, False), lambda m: (None, 1), lambda m: ("a", "a"),
]


@pytest.mark.parametrize("build", FAILING)
def test_failing(build):
    result = same_outcome(build)
    assert result is not None


def test_failing_message_structure():
    result = same_outcome(lambda m: (m.tensor([1.0, 2.0, 3.0]), m.tensor([1.0, 2.5, 3.0])))
    assert result == ("AssertionError", "Tensor-likes are not close!\n\nMismatched elements: 1 / 3 (33.3%)\n"
                      "Greatest absolute difference: 0.5 at index (1,) (up to 1e-05 allowed)\n"
                      "Greatest relative difference: 0.20000000298023224 at index (1,) (up to 1.3e-06 allowed)")
    result = same_outcome(lambda m: (m.tensor([1, 2, 3]), m.tensor([1, 5, 0])))
    assert result[1].startswith("Tensor-likes are not equal!\n\nMismatched elements: 2 / 3 (66.7%)")


@pytest.mark.parametrize("kwargs", [
    {"rtol": 0.3, "atol": 0.0}, {"rtol": 0.0, "atol": 0.5}, {"rtol": 0.0, "atol": 0.0}, {"rtol": 1e-3},
    {"atol": 1e-3}, {"equal_nan": True}, {"check_dtype": False}, {"check_stride": True},
    {"msg": "custom message"}, {"msg": lambda generated: "prefix: " + generated.split("\n")[0]},
])
@pytest.mark.parametrize("build", [
    lambda m: (m.tensor([1.0, 2.0, NAN]), m.tensor([1.2, 2.4, NAN])),
    lambda m: (m.tensor([1.0, 2.0]), m.tensor([1.0, 2.0], dtype=m.float64)),
    lambda m: (m.zeros(3, 4).t(), m.zeros(4, 3).contiguous()),
    lambda m: (m.tensor([1, 2]), m.tensor([1.0, 2.5])),
])
def test_options(kwargs, build):
    same_outcome(build, **kwargs)


def test_allow_subclasses():
    class Sub(lucid.Tensor):
        pass

    x = lucid.tensor([1.0, 2.0])
    lucid.testing.assert_close(x.as_subclass(Sub), x)
    with pytest.raises(TypeError, match="No comparison pair was able to handle inputs"):
        lucid.testing.assert_close(x.as_subclass(Sub), x, allow_subclasses=False)


def test_layout_check_with_sparse():
    def build(m):
        i, v = m.tensor([[0, 1], [1, 0]]), m.tensor([1.0, 2.0])
        sparse = m.sparse_coo_tensor(i, v, (2, 2)).coalesce()
        return sparse, sparse.to_dense()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert same_outcome(build)[1].startswith("The values for attribute 'layout' do not match")
        assert same_outcome(build, check_layout=False) is None

        def values_differ(m):
            i = m.tensor([[0, 1], [1, 0]])
            return (m.sparse_coo_tensor(i, m.tensor([1.0, 2.0]), (2, 2)).coalesce(),
                    m.sparse_coo_tensor(i, m.tensor([1.0, 3.0]), (2, 2)).coalesce())
        assert same_outcome(values_differ)[1].startswith("Sparse COO values are not close!")

        def nnz_differ(m):
            return (m.sparse_coo_tensor(m.tensor([[0, 1]]), m.tensor([1.0, 2.0]), (3,)).coalesce(),
                    m.sparse_coo_tensor(m.tensor([[0]]), m.tensor([1.0]), (3,)).coalesce())
        assert "number of specified values" in same_outcome(nnz_differ)[1]

        def csr(m):
            d = m.tensor([[0.0, 1.0], [2.0, 0.0]])
            return d.to_sparse_csr(), (d * 2).to_sparse_csr()
        assert same_outcome(csr)[1].startswith("Sparse CSR values are not close!")


def test_dataclasses_compare_field_by_field():
    @dataclasses.dataclass
    class Box:
        a: object
        b: object

    if outcome(lambda: torch.testing.assert_close(Box(torch.ones(1), 3), Box(torch.ones(1), 3))):
        pytest.skip("this torch's assert_close takes no dataclasses (older than lucid's reference)")
    def build(m, delta):
        return Box(m.tensor([1.0, 2.0]), 3), Box(m.tensor([1.0, 2.0 + delta]), 3)
    assert same_outcome(lambda m: build(m, 0.0)) is None
    assert same_outcome(lambda m: build(m, 1.0))[1].endswith("The failure occurred for item ['a']")


def test_numpy_inputs():
    np = pytest.importorskip("numpy")
    lucid.testing.assert_close(np.array([1.0, 2.0]), np.array([1.0, 2.0]))
    lucid.testing.assert_close(np.float32(1.0), np.float32(1.0))
    lucid.testing.assert_close(np.bool_(True), True)
    with pytest.raises(AssertionError, match="Tensor-likes are not close"):
        lucid.testing.assert_close(np.array([1.0, 2.0]), np.array([1.0, 3.0]))


def test_default_tolerance_table():
    from lucid.testing._comparison import default_tolerances
    from torch.testing._comparison import default_tolerances as torch_default_tolerances
    for name in DTYPE_NAMES:
        assert default_tolerances(getattr(lucid, name)) == torch_default_tolerances(getattr(torch, name))


@pytest.mark.skipif(not lucid.gpu.is_available(), reason="needs a GPU")
def test_check_device():
    x = lucid.tensor([1.0, 2.0], device="cpu")
    with pytest.raises(AssertionError, match="'device' do not match"):
        lucid.testing.assert_close(x, x.to("gpu"))
    lucid.testing.assert_close(x, x.to("gpu"), check_device=False)


def test_assert_allclose_is_deprecated():
    with pytest.warns(FutureWarning, match="assert_allclose"):
        lucid.testing.assert_allclose(lucid.tensor([1.0, NAN]), [1.0, NAN])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        lucid.testing.assert_allclose(lucid.tensor([1.0, 2.0]), lucid.tensor([1.0, 2.0 + 1e-4]))  # (looser rtol)
        lucid.testing.assert_allclose([1, 2], lucid.tensor([1.0, 2.0], dtype=lucid.float64))  # (no dtype check)
        ours = outcome(lambda: lucid.testing.assert_allclose(lucid.tensor([1.0, 2.0]), [1.0, 2.1], msg="bad"))
        theirs = outcome(lambda: torch.testing.assert_allclose(torch.tensor([1.0, 2.0]), [1.0, 2.1], msg="bad"))
        assert ours == theirs == ("AssertionError", "bad")
        ours = outcome(lambda: lucid.testing.assert_allclose(lucid.tensor([1.0, 2.0]), [1.0, 2.1]))
        theirs = outcome(lambda: torch.testing.assert_allclose(torch.tensor([1.0, 2.0]), [1.0, 2.1]))
        assert ours == theirs


# ---- make_tensor --------------------------------------------------------------------------------
DEFAULT_RANGES = {"bool": (0, 1), "uint8": (0, 9), "int8": (-9, 9), "int32": (-9, 9), "int64": (-9, 9),
                  "float16": (-9, 9), "bfloat16": (-9, 9), "float32": (-9, 9), "float64": (-9, 9)}


@pytest.mark.parametrize("name", DTYPE_NAMES)
def test_make_tensor_dtypes_and_default_ranges(name, device):
    t = lucid.testing.make_tensor(40, 50, dtype=getattr(lucid, name), device=device)
    assert tuple(t.shape) == (40, 50) and t.dtype == getattr(lucid, name) and t.device.type == device
    parts = [t.real, t.imag] if t.is_complex() else [t.to(lucid.float64)]
    for p in parts:
        lo, hi = p.min().item(), p.max().item()
        low, high = DEFAULT_RANGES.get(name, (-9, 9))
        assert low <= lo and hi <= high and hi - lo > (0.5 if name == "bool" else 5)


@pytest.mark.parametrize("shape", [(2, 3), ((2, 3),), ([2, 3],), (lucid.Size([2, 3]),)])
def test_make_tensor_shape_forms(shape):
    assert tuple(lucid.testing.make_tensor(*shape, dtype=lucid.float32, device="cpu").shape) == (2, 3)


def test_make_tensor_low_high():
    t = lucid.testing.make_tensor(1000, dtype=lucid.float64, device="cpu", low=2.5, high=3.0)
    assert 2.5 <= t.min().item() and t.max().item() < 3.0
    i = lucid.testing.make_tensor(1000, dtype=lucid.int32, device="cpu", low=-2.5, high=1.2)
    assert set(i.tolist()) == {-2, -1, 0, 1}  # low rounded up, high rounded up and exclusive
    u = lucid.testing.make_tensor(500, dtype=lucid.uint8, device="cpu", low=-100)
    assert u.min().item() >= 0
    big = lucid.testing.make_tensor(100, dtype=lucid.float32, device="cpu", low=-math.inf, high=math.inf)
    assert big.isfinite().all().item()


def test_make_tensor_options():
    x = lucid.testing.make_tensor(3, 4, dtype=lucid.float32, device="cpu", requires_grad=True)
    assert x.requires_grad and x.is_leaf
    nc = lucid.testing.make_tensor(3, 4, dtype=lucid.float32, device="cpu", noncontiguous=True)
    ref = torch.testing.make_tensor(3, 4, dtype=torch.float32, device="cpu", noncontiguous=True)
    assert tuple(nc.shape) == (3, 4) and not nc.is_contiguous()
    assert nc.stride() == ref.stride() and nc.storage_offset() == ref.storage_offset() == 1
    assert lucid.testing.make_tensor(1, dtype=lucid.float32, device="cpu", noncontiguous=True).is_contiguous()
    cl = lucid.testing.make_tensor(2, 3, 4, 5, dtype=lucid.float32, device="cpu", memory_format=lucid.channels_last)
    assert cl.stride() == torch.empty(2, 3, 4, 5, memory_format=torch.channels_last).stride()
    for name in ("int64", "float32", "complex64", "bool"):
        nz = lucid.testing.make_tensor(2000, dtype=getattr(lucid, name), device="cpu", low=0 if name != "bool" else None,
                                       high=2 if name != "bool" else None, exclude_zero=True)
        assert (nz != 0).all().item()


@pytest.mark.parametrize("kwargs,error,words", [
    ({"dtype": "int64", "requires_grad": True}, ValueError, "`requires_grad=True` is not supported"),
    ({"dtype": "float32", "low": 3, "high": 2}, ValueError, "`low` must be less than `high`"),
    ({"dtype": "float32", "low": math.nan}, ValueError, "cannot be NaN"),
    ({"dtype": "uint8", "high": -1}, ValueError, "only supports"),
    ({"dtype": "float32", "noncontiguous": True, "memory_format": "channels_last"}, ValueError, "mutually exclusive"),
])
def test_make_tensor_errors(kwargs, error, words):
    def run(m):
        args = {k: (getattr(m, v) if k in ("dtype", "memory_format") else v) for k, v in kwargs.items()}
        with pytest.raises(error, match=words):
            m.testing.make_tensor(2, 2, 2, 2, device="cpu", **args)
    run(lucid)
    run(torch)


def test_make_tensor_low_equals_high_warns_and_bad_dtype():
    with pytest.warns(FutureWarning, match="low==high"):
        t = lucid.testing.make_tensor(3, dtype=lucid.float32, device="cpu", low=2.0, high=2.0)
    assert t.tolist() == [2.0, 2.0, 2.0]
    with pytest.raises(TypeError, match="is not supported by lucid.testing.make_tensor"):
        lucid.testing.make_tensor(3, dtype="float32", device="cpu")
