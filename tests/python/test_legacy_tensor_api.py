"""The legacy Tensor API that real PyTorch programs use, against PyTorch:
lucid.Tensor(...) and the typed classes (lucid.FloatTensor, ...), Tensor.type /
type_as, the is_<backend> flags, ranges as indices, and the size= keyword of the
creation functions."""

import pytest
import torch

import lucid
from conftest import DEVICES, assert_same, dtype_name, to_lucid

pytestmark = pytest.mark.usefixtures("cpu_default")  # tests of the CPU (conftest.py)

LEGACY = ["FloatTensor", "DoubleTensor", "HalfTensor", "BFloat16Tensor", "LongTensor", "IntTensor",
          "ShortTensor", "CharTensor", "ByteTensor", "BoolTensor"]


def both(expr):
    """expr evaluated with `torch` bound to lucid, then to torch."""
    return eval(expr, {"torch": lucid}), eval(expr, {"torch": torch})


def raises_like(expr):
    """expr raises in torch, and lucid raises the same exception type."""
    with pytest.raises(Exception) as te:
        eval(expr, {"torch": torch})
    with pytest.raises(te.type):
        eval(expr, {"torch": lucid})


# ---- lucid.Tensor(...) ---------------------------------------------------------------
@pytest.mark.parametrize("expr", [
    "torch.Tensor([1, 2])", "torch.Tensor([[1, 2], [3, 4]])", "torch.Tensor((1.5, 2))", "torch.Tensor((2, 3))",
    "torch.Tensor([True, False])", "torch.Tensor([])", "torch.Tensor(())", "torch.Tensor()",
    "torch.Tensor([1, 2], device='cpu')",
])
def test_tensor_from_data(expr):
    lt, tt = both(expr)
    assert type(lt) is lucid.Tensor
    assert_same(lt, tt)


@pytest.mark.parametrize("expr", [
    "torch.Tensor(2, 3)", "torch.Tensor(4)", "torch.Tensor(0)", "torch.Tensor(torch.Size([2, 3]))",
    "torch.Tensor(torch.Size([]))", "torch.Tensor(2, 0, 3)", "torch.Tensor(3, device='cpu')",
])
def test_tensor_uninitialised_of_size(expr):
    lt, tt = both(expr)
    assert type(lt) is lucid.Tensor
    assert lt.shape == tt.shape and lt.stride() == tt.stride()
    assert dtype_name(lt.dtype) == dtype_name(tt.dtype) == "float32"


def test_tensor_follows_default_dtype():
    lucid.set_default_dtype(lucid.float64)
    torch.set_default_dtype(torch.float64)
    try:
        for expr in ("torch.Tensor([1, 2])", "torch.Tensor(2)"):
            lt, tt = both(expr)
            assert dtype_name(lt.dtype) == dtype_name(tt.dtype) == "float64"
    finally:
        torch.set_default_dtype(torch.float32)


def test_tensor_of_tensor_is_an_alias():
    for dt in ("float32", "int64", "float64"):
        src = lucid.arange(6).reshape(2, 3).to(getattr(lucid, dt))
        out = lucid.Tensor(src)
        ref = torch.Tensor(torch.arange(6).reshape(2, 3).to(getattr(torch, dt)))
        assert out is not src
        assert_same(out, ref)
        out[0, 0] = 7
        assert src[0, 0].item() == 7  # same memory, as torch's alias
    a = lucid.ones(2, requires_grad=True)
    b = lucid.Tensor(a)
    assert b.requires_grad and b.grad_fn is not None
    b.sum().backward()
    assert a.grad.tolist() == [1.0, 1.0]


def test_tensor_from_numpy():
    np = pytest.importorskip("numpy")
    assert_same(lucid.Tensor(np.array([1, 2])), torch.Tensor(np.array([1, 2])))
    assert_same(lucid.Tensor(np.int64(3)).zero_(), torch.Tensor(np.int64(3)).zero_())


@pytest.mark.parametrize("expr", [
    "torch.Tensor(-1)", "torch.Tensor(2, -3)", "torch.Tensor(2.5)", "torch.Tensor(True)", "torch.Tensor('ab')",
    "torch.Tensor(None)", "torch.Tensor([1, 'a'])", "torch.Tensor((2, 3), 4)", "torch.Tensor(2, (3,))",
    "torch.Tensor(2, 'a')", "torch.Tensor(2, 3, dtype=torch.float64)", "torch.Tensor([1], dtype=torch.float64)",
    "torch.Tensor(foo=2)", "torch.Tensor(2, device='cuda')", "torch.FloatTensor([1], device='cuda')",
    "torch.LongTensor(torch.ones(2))", "torch.FloatTensor(torch.ones(2, dtype=torch.float64))",
])
def test_constructor_errors(expr):
    raises_like(expr)


def test_isinstance_and_parameter_still_work():
    for t in (lucid.ones(2), lucid.Tensor(2), lucid.FloatTensor([1]), lucid.LongTensor(3), lucid.zeros(())):
        assert isinstance(t, lucid.Tensor) and type(t) is lucid.Tensor
    p = lucid.nn.Parameter(lucid.Tensor(2, 3))
    assert isinstance(p, lucid.nn.Parameter) and isinstance(p, lucid.Tensor)
    assert isinstance(p, lucid.FloatTensor) == isinstance(torch.nn.Parameter(torch.Tensor(2, 3)), torch.FloatTensor)
    assert p.shape == (2, 3) and p.requires_grad
    layer = lucid.nn.Linear(3, 2)
    assert isinstance(layer.weight, lucid.nn.Parameter) and not isinstance(lucid.ones(1), lucid.nn.Parameter)


def test_tensor_subclass_constructs():
    class Mine(lucid.Tensor):
        pass

    class TMine(torch.Tensor):
        pass

    m = Mine([1.0, 2.0])
    assert isinstance(m, Mine) and isinstance(m, lucid.Tensor)
    assert m.tolist() == TMine([1.0, 2.0]).tolist()


# ---- typed classes ---------------------------------------------------------------------
@pytest.mark.parametrize("name", LEGACY)
def test_legacy_classes(name):
    lcls, tcls = getattr(lucid, name), getattr(torch, name)
    assert dtype_name(lcls.dtype) == dtype_name(tcls.dtype) and lcls.is_cuda is tcls.is_cuda is False
    assert repr(lcls) == repr(tcls).replace("torch", "lucid")
    assert_same(lcls([[1, 0], [3, 4]]), tcls([[1, 0], [3, 4]]))
    assert_same(lcls([]), tcls([]))
    assert_same(lcls(), tcls())
    lt, tt = lcls(2, 3), tcls(2, 3)
    assert lt.shape == tt.shape and dtype_name(lt.dtype) == dtype_name(tt.dtype)
    assert lcls(lucid.Size([4])).shape == tcls(torch.Size([4])).shape
    src = lucid.ones(2, dtype=lcls.dtype)
    assert lcls(src).data_ptr() == src.data_ptr()
    for other in LEGACY:
        lt = lucid.ones(2, dtype=getattr(lucid, other).dtype)
        tt = torch.ones(2, dtype=getattr(torch, other).dtype)
        assert isinstance(lt, lcls) == isinstance(tt, tcls)
    assert not isinstance(3, lcls) and not issubclass(lcls, lucid.Tensor)


def test_legacy_float_data_into_int_class():
    assert_same(lucid.LongTensor([1.7, -2.2]), torch.LongTensor([1.7, -2.2]))
    assert_same(lucid.BoolTensor([0, 2]), torch.BoolTensor([0, 2]))


@pytest.mark.filterwarnings("ignore:The torch.cuda.*DtypeTensor constructors")
def test_gpu_legacy_classes():
    for name in LEGACY:
        cls = getattr(lucid.cuda, name)
        assert cls.is_cuda and cls.dtype is getattr(lucid, name).dtype
        assert not isinstance(lucid.ones(1, dtype=cls.dtype), cls)
        assert repr(cls) == f"<class 'lucid.cuda.{name}'>"
    if "gpu" not in DEVICES:
        with pytest.raises(RuntimeError):
            lucid.cuda.FloatTensor(2, device="cpu")
        if not torch.cuda.is_available():
            raises_like("torch.ones(2).type('torch.cuda.FloatTensor')")
            raises_like("torch.cuda.FloatTensor([1])")
        return
    t = lucid.cuda.FloatTensor([1, 2])
    assert t.is_cuda and isinstance(t, lucid.cuda.FloatTensor) and not isinstance(t, lucid.FloatTensor)
    assert t.tolist() == [1.0, 2.0]


# ---- Tensor.type, type_as, is_* --------------------------------------------------------
@pytest.mark.parametrize("dt", ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16",
                                "float32", "float64", "complex64"])
def test_type_string(dt, device):
    lt = lucid.ones(2, dtype=getattr(lucid, dt), device=device)
    tt = torch.ones(2, dtype=getattr(torch, dt))
    want = tt.type().replace("torch.", "lucid.cuda." if device == "gpu" else "lucid.")
    assert lt.type() == want


@pytest.mark.parametrize("spec", ["torch.DoubleTensor", "lucid.DoubleTensor", "torch.IntTensor", "lucid.BoolTensor",
                                  "float64", "int16", "LongTensor", "HalfTensor"])
def test_type_conversion(spec):
    if spec[0].isupper():  # a legacy class
        lspec, tspec = getattr(lucid, spec), getattr(torch, spec)
    elif "." not in spec:  # a dtype
        lspec, tspec = getattr(lucid, spec), getattr(torch, spec)
    else:
        lspec, tspec = spec, spec.replace("lucid.", "torch.")
    src = torch.tensor([[1.5, -2.0], [0.0, 3.25]])
    assert_same(to_lucid(src).type(lspec), src.type(tspec))
    assert_same(to_lucid(src).type(dtype=lspec, non_blocking=True), src.type(dtype=tspec, non_blocking=True))


def test_type_returns_self_when_unchanged():
    t = lucid.ones(2)
    assert t.type(lucid.float32) is t and t.type("lucid.FloatTensor") is t and t.type(lucid.FloatTensor) is t
    assert t.type("torch.FloatTensor") is t and t.type(float).dtype is lucid.float64


def test_type_keeps_autograd():
    a = lucid.ones(2, requires_grad=True)
    b = a.type(lucid.float64)
    b.sum().backward()
    assert a.grad.tolist() == [1.0, 1.0] and a.grad.dtype is lucid.float32


@pytest.mark.parametrize("spec", ["'foo'", "'torch.Foo'", "'FloatTensor'", "'torch.float32'", "5", "[1]"])
def test_type_errors(spec):
    raises_like(f"torch.ones(2).type({spec})")


def test_type_on_gpu():
    if "gpu" not in DEVICES:
        pytest.skip("no GPU")
    t = lucid.ones(2).type("torch.cuda.DoubleTensor")
    assert t.is_cuda and t.dtype is lucid.float64 and t.type() == "lucid.cuda.DoubleTensor"
    assert t.type(lucid.float32).is_cuda  # a dtype keeps the device
    back = t.type(lucid.FloatTensor)
    assert not back.is_cuda and back.dtype is lucid.float32
    assert lucid.ones(1).type_as(t).is_cuda


@pytest.mark.parametrize("other", ["int8", "float64", "bool", "float32"])
def test_type_as(other):
    src = torch.tensor([1.5, 0.0, -3.0])
    ref = torch.ones(1, dtype=getattr(torch, other))
    assert_same(to_lucid(src).type_as(to_lucid(ref)), src.type_as(ref))
    raises_like("torch.ones(2).type_as(3)")


def test_backend_flags():
    lt, tt = lucid.ones(2), torch.ones(2)
    flags = [n for n in dir(torch.Tensor) if n.startswith("is_") and not callable(getattr(tt, n))]
    assert "is_xpu" in flags and "is_mps" in flags
    for name in flags:
        assert getattr(lt, name) == getattr(tt, name), name
    for name in ("is_signed", "is_conj", "is_neg"):
        for dt in ("uint8", "int8", "bool", "float32", "complex64"):
            assert (getattr(lucid.ones(1, dtype=getattr(lucid, dt)), name)()
                    == getattr(torch.ones(1, dtype=getattr(torch, dt)), name)()), (name, dt)
    assert lt.is_same_size(lucid.zeros(2)) and not lt.is_same_size(lucid.zeros(2, 1))
    raises_like("torch.ones(2).is_same_size(3)")


# ---- ranges and sequences as indices -----------------------------------------------------
KEYS = ["range(3)", "range(0, 4, 2)", "range(3, 0, -1)", "range(-1, -4, -1)", "range(-3, 0)", "range(0)",
        "(slice(None), range(2))", "(range(2), range(2))", "(range(2),)", "((0, 1),)", "[0, 1]",
        "([0, 1], [1, 2])", "(range(1, 3), slice(None), None)", "(Ellipsis, range(4, -1, -2))",
        "(range(0), range(0))"]


@pytest.mark.parametrize("key", KEYS)
def test_range_index_get(key):
    # (CPU: a range is an advanced index, and those have no CUDA kernel yet, issue 19)
    src = torch.arange(20).reshape(4, 5)
    assert_same(to_lucid(src)[eval(key)], src[eval(key)])


@pytest.mark.parametrize("key", KEYS)
def test_range_index_set(key):
    tt = torch.zeros(4, 5)
    lt = lucid.zeros(4, 5)
    tt[eval(key)] = 1.0
    lt[eval(key)] = 1.0
    assert_same(lt, tt)
    tt[eval(key)] = tt[eval(key)] + 2
    lt[eval(key)] = lt[eval(key)] + 2
    assert_same(lt, tt)


@pytest.mark.filterwarnings("ignore:Using a non-tuple sequence")  # torch deprecates this form
def test_list_holding_a_range_is_a_tuple():
    src = torch.arange(20).reshape(4, 5)
    assert_same(to_lucid(src)[[range(2), 0]], src[[range(2), 0]])


@pytest.mark.parametrize("key", ["range(5, 10)", "(slice(None), range(6))", "(range(2), range(3))"])
def test_range_index_errors(key):
    raises_like(f"torch.zeros(4, 5)[{key}]")


# ---- size= keywords ----------------------------------------------------------------------
@pytest.mark.parametrize("expr", [
    "torch.zeros(size=(2, 3))", "torch.zeros(size=[2])", "torch.ones(size=(1, 2), dtype=torch.int64)",
    "torch.ones(size=torch.Size([2, 2]))", "torch.zeros(size=())", "torch.full(size=(2,), fill_value=3.)",
    "torch.full((2,), fill_value=3)", "torch.full(size=[2, 1], fill_value=True)",
    "torch.ones(2).new_zeros(size=(3,))", "torch.ones(2).new_ones(size=(3, 1))",
    "torch.zeros(2, 3)", "torch.ones((2,))",
])
def test_size_keyword_filled(expr):
    lt, tt = both(expr)
    assert_same(lt, tt)


@pytest.mark.parametrize("expr", [
    "torch.empty(size=(2,))", "torch.ones(2).new_empty(size=(3,))", "torch.rand(size=(3,))",
    "torch.randn(size=(4, 2))", "torch.randn(size=[])", "torch.randint(0, 5, size=(3,))",
    "torch.randint(5, size=(3,))", "torch.randint(5, (3,))", "torch.randint(low=1, high=5, size=(3,))",
    "torch.randint(high=5, size=(3,))", "torch.randint(1, high=5, size=(3,))",
    "torch.randint(size=(2,), high=3)", "torch.randint(1, 5, (3,), dtype=torch.int32)",
    "torch.rand(2, 3)", "torch.randn((2,))",
])
def test_size_keyword_random(expr):
    lt, tt = both(expr)
    assert lt.shape == tt.shape and dtype_name(lt.dtype) == dtype_name(tt.dtype)


def test_randint_keyword_bounds():
    lucid.manual_seed(0)
    t = lucid.randint(low=3, high=5, size=(200,))
    assert t.min().item() == 3 and t.max().item() == 4


@pytest.mark.parametrize("expr", [
    "torch.zeros(size=2)", "torch.zeros(2, size=(2,))", "torch.zeros(size=(-1,))",
    "torch.zeros(size=(2.5,))", "torch.zeros(size='ab')", "torch.rand(size=2)", "torch.randn(2, size=(3,))",
    "torch.full(size=(2,))", "torch.randint(5)", "torch.randint(1, 2, 3, 4)", "torch.randint(1, 5)",
    "torch.randint(1, 5, 3)", "torch.randint(low=1, size=(3,))", "torch.randint(3, size=(2,), low=1)",
    "torch.randint(1.5, 5, (2,))", "torch.empty(size=(2,), sizes=(3,))", "torch.ones(2).new_zeros(2, size=(2,))",
])
def test_size_keyword_errors(expr):
    raises_like(expr)
