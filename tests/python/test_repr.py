"""Tensor printing must match PyTorch character for character.

repr() is compared whole for the dtypes torch prints without a suffix (float32, int64,
bool); for every other dtype only the data part (TensorImpl::to_string, csrc/core/format.cpp)
is compared with torch._tensor_str._tensor_str(t, 7), since the suffix belongs to the
Python layer. Data reach lucid through torch's tolist(), so every value is exactly
representable in the target dtype and no rounding difference can creep in.
"""

import math

import pytest
import torch
from torch._tensor_str import _tensor_str

import lucid

nan, inf = float("nan"), float("inf")

FLOAT_DTYPES = [torch.float16, torch.bfloat16, torch.float32, torch.float64]
INT_DTYPES = [torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64]


def lucid_dtype(dt):
    return getattr(lucid, str(dt).split(".")[1])


def to_lucid(t):
    return lucid.tensor(t.tolist(), dtype=lucid_dtype(t.dtype))


def check_repr(t):
    """Whole repr, for tensors whose dtype torch leaves unprinted."""
    assert t.dtype in (torch.float32, torch.int64, torch.bool)
    # on the CPU, as torch's: a tensor on another device than the CPU prints its device
    got = repr(lucid.tensor(t.tolist(), device="cpu"))
    assert got == repr(t).replace("torch.", "lucid.")


def check_data(t):
    """The data part only, for any dtype."""
    assert to_lucid(t)._to_string() == _tensor_str(t, 7)


def randn(*shape, seed=0, scale=1.0):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(*shape, generator=g) * scale


def randint(lo, hi, *shape, seed=0):
    g = torch.Generator().manual_seed(seed)
    return torch.randint(lo, hi, shape, generator=g)


@pytest.fixture
def printoptions():
    """Sets the same print options in torch and lucid; restores the defaults after."""
    if not hasattr(lucid, "set_printoptions"):
        pytest.skip("lucid.set_printoptions not exposed yet")

    def set_both(**kw):
        torch.set_printoptions(**kw)
        lucid.set_printoptions(**kw)

    yield set_both
    torch.set_printoptions(profile="default", sci_mode=None)
    lucid.set_printoptions(profile="default", sci_mode=None)


# ---- values: notation, alignment, nan/inf, signs --------------------------------------

FLOAT_VALUES = [
    [1.5], [0.0], [-0.0], [1.0, 2.0, 3.0], [1.5, -2.25, 3.0], [0.1, 0.2, 0.3],
    [-1.0, 2.0, -3.0], [100.0, -100.0], [2.5, 0.125, 0.375], [1 / 3, 2 / 3],
    # sci-mode boundaries: max/min ratio 1000, max 1e8, min 1e-4
    [1000.0, 1.0], [1001.0, 1.0], [1e8], [1.1e8], [1e-4], [9e-5], [1e-5, 1.0], [1e9, 1.0],
    [123456.789, 0.001], [0.12345, 0.00015], [12345678.0, 0.5], [1e20, 1e19], [65504.0, 1.0],
    # non-finite values and zeros stay out of the width and mode decisions
    [nan], [inf], [-inf], [nan, 1.5], [inf, -inf, nan], [0.0, nan], [-0.0, 0.0, 1.0],
    [-0.0, 0.5], [-nan, 2.0], [-1e-5, 0.0, 5.0], [inf, 1e-6], [nan, 3.0, -0.0],
]


@pytest.mark.parametrize("values", FLOAT_VALUES)
def test_float32_repr(values):
    check_repr(torch.tensor(values))
    check_repr(torch.tensor(values[0]))  # 0-d


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("values", FLOAT_VALUES)
def test_float_data(dtype, values):
    check_data(torch.tensor(values, dtype=dtype))
    check_data(torch.tensor(values[0], dtype=dtype))


@pytest.mark.parametrize("dtype", INT_DTYPES)
def test_int_data(dtype):
    neg = -2 if dtype != torch.uint8 else 2
    check_data(torch.tensor([0, 1, 2, 100], dtype=dtype))
    check_data(torch.tensor(7, dtype=dtype))
    check_data(torch.tensor([[1, neg], [3, 4]], dtype=dtype))
    info = torch.iinfo(dtype)
    check_data(torch.tensor([info.min, info.max, 0], dtype=dtype))


def test_int64_repr():
    check_repr(torch.tensor([1, 2, 3]))
    check_repr(torch.tensor(-5))
    check_repr(torch.tensor([-(2**63), 2**63 - 1]))
    check_repr(torch.tensor([[1, -20], [300, 4]]))


@pytest.mark.parametrize(
    "values", [True, False, [True], [True, False, True], [[True, True], [False, True]]]
)
def test_bool_repr(values):
    check_repr(torch.tensor(values))


COMPLEX_VALUES = [
    [1 + 2j, 3 - 4j], [1.5 + 0.5j, -2j], [complex(nan, 1), complex(1, inf)],
    [1e-5 + 1j, 1e5 - 0.5j], [complex(1, -0.0), 0j], [0j], [1e10 + 1e-10j],
    [-1 - 1j, 2.5 + 100j], [complex(-inf, nan), 1 + 1j],
]


@pytest.mark.parametrize("values", COMPLEX_VALUES)
def test_complex_data(values):
    check_data(torch.tensor(values, dtype=torch.complex64))
    check_data(torch.tensor(values[0], dtype=torch.complex64))


# ---- shapes: nesting, wrapping, summarization -------------------------------------------

SHAPES = [
    (5,), (30,), (100,), (2, 3), (3, 4, 5), (2, 2, 2, 2), (1, 1, 1),
    # over the threshold of 1000 elements: summarized with edgeitems=3
    (1001,), (2000,), (40, 30), (1001, 1), (1, 1001), (10, 10, 11), (3, 400), (400, 3),
    (7, 7, 7, 7), (13, 200), (2, 3, 1, 2, 200),
]


@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_shapes_repr(shape):
    check_repr(randn(*shape))
    check_repr(randn(*shape, scale=1e6, seed=1))  # sci mode
    check_repr(randn(*shape, seed=2).mul(100).round())  # integer-valued floats: "12."
    check_repr(randint(-1000, 1000, *shape))
    check_repr(randn(*shape, seed=3) > 0)


@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16, torch.float64, torch.int16])
def test_shapes_data(shape, dtype):
    t = randn(*shape, scale=50.0) if dtype.is_floating_point else randint(-99, 99, *shape)
    check_data(t.to(dtype))


@pytest.mark.parametrize("shape", [(5,), (30,), (3, 4), (2, 3, 4), (40, 30)], ids=str)
def test_shapes_complex(shape):
    check_data(torch.complex(randn(*shape), randn(*shape, seed=1)))
    check_data(randint(0, 10, *shape).to(torch.complex64))


def test_empty():
    check_repr(torch.tensor([]))
    check_repr(torch.tensor([[], []]))  # size=(2, 0)
    assert lucid.zeros((0, 3))._to_string() == "[]"
    assert repr(lucid.zeros((0, 3), device="cpu")) == "tensor([], size=(0, 3))"


def test_mixed_magnitudes_random():
    g = torch.Generator().manual_seed(0)
    pool = torch.tensor([0.0, -0.0, nan, inf, -inf, 1.0, -1.0, 1e-6, 1e9, 0.5, 123.456, 1e4, 3e-3])
    scale = torch.tensor([1.0, -1.0, 2.5, 1e-3, 1e3])
    for _ in range(100):
        n = int(torch.randint(1, 26, (1,), generator=g))
        v = pool[torch.randint(0, len(pool), (n,), generator=g)]
        v = v * scale[torch.randint(0, len(scale), (n,), generator=g)]
        check_repr(v)
        check_data(v.to(torch.float16))
        check_data(torch.complex(v, v.flip(0)))


# ---- print options -----------------------------------------------------------------------


@pytest.mark.parametrize("precision", [0, 1, 2, 8])
def test_precision(printoptions, precision):
    printoptions(precision=precision)
    check_repr(torch.tensor([1.23456789, -0.5, 100.0]))
    check_repr(torch.tensor([1e-6, 1.0]))


@pytest.mark.parametrize("sci_mode", [True, False])
def test_sci_mode(printoptions, sci_mode):
    printoptions(sci_mode=sci_mode)
    for v in ([1.0, 2.0], [1.5, 2.0], [1e-6, 1e9], [0.0, 0.0], [nan]):
        check_repr(torch.tensor(v))
    check_data(torch.tensor([1 + 2j, 3j]))


@pytest.mark.parametrize("threshold", [0, 5, 10])
@pytest.mark.parametrize("edgeitems", [1, 2, 3])
def test_threshold_edgeitems(printoptions, threshold, edgeitems):
    printoptions(threshold=threshold, edgeitems=edgeitems)
    for shape in [(), (5,), (10,), (4, 4), (3, 8, 9)]:
        check_repr(torch.arange(math.prod(shape), dtype=torch.float32).reshape(shape) * 1.5)


@pytest.mark.parametrize("threshold", [0, 5])
def test_edgeitems_zero(printoptions, threshold):
    # torch prints "[...]" (plus a size= suffix, the Python layer's) when summarizing.
    printoptions(threshold=threshold, edgeitems=0)
    for shape in [(), (5,), (10,), (4, 4), (3, 8, 9)]:
        check_data(torch.arange(math.prod(shape), dtype=torch.float32).reshape(shape))


@pytest.mark.parametrize("linewidth", [1, 10, 40, 120])
def test_linewidth(printoptions, linewidth):
    printoptions(linewidth=linewidth)
    check_repr(randn(50))
    check_repr(randn(5, 30))
    check_data(torch.complex(randn(50), randn(50, seed=1)))


def test_profile_full(printoptions):
    printoptions(profile="full")
    check_repr(torch.arange(1200))
