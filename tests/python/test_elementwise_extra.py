"""The elementwise ops with extra arguments or operands (alpha=, rounding_mode=,
decimals=, eps=, where, clamp, lerp, addcmul/addcdiv, nan_to_num, isclose,
allclose, equal), in-place forms and operators, out=, special values, and
result_type / can_cast, checked against torch; the ops run on every device (on the GPU
against torch's CUDA, through test_elementwise's _check)."""

import math

import pytest
import torch

import lucid

from conftest import DTYPE_NAMES, FLOAT_NAMES, TORCH_VERSION, to_lucid
from test_elementwise import _check, _compare, _pair, _torch_device

NUM_DTYPES = ["bool", "uint8", "int32", "int64", "float16", "bfloat16", "float32", "float64", "complex64"]


def _tensors(data, dtype, device):
    """`data` as a lucid tensor on `device` and a torch tensor on the matching device."""
    return (lucid.tensor(data, dtype=getattr(lucid, dtype), device=device),
            torch.tensor(data, dtype=getattr(torch, dtype), device=_torch_device(device)))


@pytest.mark.parametrize("dtype", NUM_DTYPES)
@pytest.mark.parametrize("alpha", [1, 2, -3, 0.5, True, 2j])
@pytest.mark.parametrize("op", ["add", "sub"])
def test_alpha(op, dtype, alpha, device):
    (la, ta), (lb, tb) = _pair(dtype, (2, 3), 1, device), _pair(dtype, (3,), 2, device)
    _check(lambda: getattr(lucid, op)(la, lb, alpha=alpha), lambda: getattr(torch, op)(ta, tb, alpha=alpha))
    _check(lambda: getattr(la, op)(lb, alpha=alpha), lambda: getattr(ta, op)(tb, alpha=alpha))
    _check(lambda: getattr(lucid, op)(la, 3, alpha=alpha), lambda: getattr(torch, op)(ta, 3, alpha=alpha))
    _check(lambda: getattr(la.clone(), op + "_")(lb, alpha=alpha), lambda: getattr(ta.clone(), op + "_")(tb, alpha=alpha))


@pytest.mark.parametrize("dtype", NUM_DTYPES)
@pytest.mark.parametrize("mode", [None, "trunc", "floor"])
def test_div_rounding_mode(dtype, mode, device):
    (la, ta), (lb, tb) = _pair(dtype, (2, 3), 3, device), _pair(dtype, (3,), 4, device)
    _check(lambda: lucid.div(la, lb, rounding_mode=mode), lambda: torch.div(ta, tb, rounding_mode=mode))
    _check(lambda: la.div(2, rounding_mode=mode), lambda: ta.div(2, rounding_mode=mode))
    _check(lambda: la.clone().div_(lb, rounding_mode=mode), lambda: ta.clone().div_(tb, rounding_mode=mode))


def test_div_bad_rounding_mode():
    with pytest.raises(RuntimeError):
        lucid.div(lucid.ones(2), 2, rounding_mode="round")


@pytest.mark.parametrize("dtype", ["int64", "float32", "float64", "float16"])
@pytest.mark.parametrize("decimals", [0, 1, 2, -1])
def test_round_decimals(dtype, decimals, device):
    data = [1.2345, -2.5, 15.0, 0.5, 1234.5678, -0.049] if "float" in dtype else [15, -25, 4, 0]
    lt, tt = _tensors(data, dtype, device)
    _check(lambda: lucid.round(lt, decimals=decimals), lambda: torch.round(tt, decimals=decimals))
    _check(lambda: lt.round(decimals=decimals), lambda: tt.round(decimals=decimals))
    _check(lambda: lt.clone().round_(decimals=decimals), lambda: tt.clone().round_(decimals=decimals))


@pytest.mark.parametrize("dtype", ["int64", "float32", "float64"])
@pytest.mark.parametrize("eps", [None, 0.0, 0.1])
def test_logit_eps(dtype, eps, device):
    data = [0.0, 0.05, 0.3, 0.5, 0.99, 1.0, 1.5] if "float" in dtype else [0, 1, 2]
    lt, tt = _tensors(data, dtype, device)
    _check(lambda: lucid.logit(lt, eps), lambda: torch.logit(tt, eps))
    _check(lambda: lt.logit(eps=eps), lambda: tt.logit(eps=eps))
    if "float" in dtype:
        _check(lambda: lt.clone().logit_(eps), lambda: tt.clone().logit_(eps))


@pytest.mark.parametrize("dtypes", [("float32", "float32"), ("int64", "float32"), ("int32", "int64"),
                                    ("bool", "bool"), ("float16", "float64"), ("complex64", "float32")])
def test_where(dtypes, device):
    (la, ta), (lb, tb) = _pair(dtypes[0], (2, 3), 5, device), _pair(dtypes[1], (3,), 6, device)
    lc, tc = _pair("bool", (2, 1), 7, device)
    _check(lambda: lucid.where(lc, la, lb), lambda: torch.where(tc, ta, tb))
    _check(lambda: lucid.where(lc, la, 2.5), lambda: torch.where(tc, ta, 2.5))
    _check(lambda: lucid.where(lc, 1, lb), lambda: torch.where(tc, 1, tb))
    _check(lambda: lucid.where(lc, 1, 2.0), lambda: torch.where(tc, 1, 2.0))
    _check(lambda: la.where(lc, lb), lambda: ta.where(tc, tb))
    # non-contiguous and 0-d operands
    _check(lambda: lucid.where(lc.expand(2, 3).t(), la.t(), lb[0]), lambda: torch.where(tc.expand(2, 3).t(), ta.t(), tb[0]))


@pytest.mark.parametrize("dtype", ["bool", "int8", "float16", "float32", "float64", "complex64"])
def test_where_every_element_size_and_layout(dtype, device):
    # 1, 2, 4 and 8-byte elements; long enough rows to be split over threads; the
    # dense loops (each value operand contiguous or one value) and the strided one.
    g = torch.Generator().manual_seed(3)
    tdt = getattr(torch, dtype)
    tc = torch.rand(3, 70001, generator=g) > 0.5
    ta = (torch.randn(3, 70001, generator=g) * 5).to(tdt)
    tb = (torch.randn(3, 70001, generator=g) * 5).to(tdt)
    lc, la, lb = to_lucid(tc, device), to_lucid(ta, device), to_lucid(tb, device)
    tc, ta, tb = (t.to(_torch_device(device)) for t in (tc, ta, tb))
    _check(lambda: lucid.where(lc, la, lb), lambda: torch.where(tc, ta, tb))
    _check(lambda: lucid.where(lc, la, lb[0, 5]), lambda: torch.where(tc, ta, tb[0, 5]))
    _check(lambda: lucid.where(lc, la[1, 7], lb), lambda: torch.where(tc, ta[1, 7], tb))
    _check(lambda: lucid.where(lc[:, ::2], la[:, 1::2], lb[:, ::2]), lambda: torch.where(tc[:, ::2], ta[:, 1::2], tb[:, ::2]))
    _check(lambda: lucid.where(lc.t(), la.t(), lb.t()), lambda: torch.where(tc.t(), ta.t(), tb.t()))


def test_where_needs_a_bool_condition():
    with pytest.raises(RuntimeError):
        lucid.where(lucid.ones(2), lucid.ones(2), lucid.zeros(2))


CLAMP_BOUNDS = [(-1, 2), (None, 0.5), (-0.5, None), (2, -1), ("t", "t"), ("t", None), (None, "t"),
                (float("nan"), None)]


@pytest.mark.parametrize("dtype", NUM_DTYPES)
@pytest.mark.parametrize("bounds", CLAMP_BOUNDS, ids=str)
def test_clamp(dtype, bounds, device):
    nan_bound = isinstance(bounds[0], float) and bounds[0] != bounds[0]
    out_of_range = dtype == "uint8" and bounds in ((-1, 2), (2, -1))
    if (nan_bound or out_of_range) and TORCH_VERSION < (2, 15):
        pytest.skip("torch before 2.15 clamps NaN and out-of-range integer bounds differently; lucid follows 2.15")
    la, ta = _pair(dtype, (2, 3), 8, device)
    (llo, tlo), (lhi, thi) = _pair(dtype, (3,), 9, device), _pair(dtype, (3,), 10, device)
    lb = [llo if b == "t" and i == 0 else lhi if b == "t" else b for i, b in enumerate(bounds)]
    tb = [tlo if b == "t" and i == 0 else thi if b == "t" else b for i, b in enumerate(bounds)]
    _check(lambda: lucid.clamp(la, *lb), lambda: torch.clamp(ta, *tb))
    _check(lambda: lucid.clip(la, *lb), lambda: torch.clip(ta, *tb))
    _check(lambda: la.clamp(*lb), lambda: ta.clamp(*tb))
    _check(lambda: la.clone().clamp_(*lb), lambda: ta.clone().clamp_(*tb))
    if lb[0] is not None:
        _check(lambda: lucid.clamp_min(la, lb[0]), lambda: torch.clamp_min(ta, tb[0]))
        _check(lambda: la.clone().clamp_min_(lb[0]), lambda: ta.clone().clamp_min_(tb[0]))
    if lb[1] is not None:
        _check(lambda: lucid.clamp_max(la, lb[1]), lambda: torch.clamp_max(ta, tb[1]))
        _check(lambda: la.clamp_max(lb[1]), lambda: ta.clamp_max(tb[1]))


@pytest.mark.usefixtures("cpu_default")  # the note is about CPU calls; its bounds are CPU tensors
@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "float64"])
@pytest.mark.parametrize("bounds", [(-1, 2), (-0.3, 0.7), (2, -1), (float("-inf"), 1.5), (float("nan"), 1)], ids=str)
def test_clamp_in_one_pass_gives_the_two_calls_bits(dtype, bounds):
    """Note [Clamp in one pass]: a CPU clamp with two number bounds runs maximum and
    minimum as one program over blocks; every element (NaN, infinities, the bounds
    themselves, a tail) has the bits of the two calls and of torch."""
    n = 7 * 10_001  # several blocks and a tail
    t = torch.randn(n, dtype=torch.float64) * 2
    t[::97] = float("nan")
    t[1::89] = float("inf")
    t[2::83] = float("-inf")
    t[3::79] = bounds[0]
    t[4::73] = bounds[1]
    t = t.to(getattr(torch, dtype))
    x = to_lucid(t, "cpu")
    lo, hi = bounds
    lt, ht = lucid.tensor(lo, dtype=x.dtype), lucid.tensor(hi, dtype=x.dtype)
    two_calls = lucid.minimum(lucid.maximum(x, lt), ht)
    as_bits = {2: lucid.int16, 4: lucid.int32, 8: lucid.int64}[x.itemsize]
    for got in (lucid.clamp(x, lo, hi), x.reshape(7, n // 7).clamp(lo, hi).reshape(-1)):
        assert got.view(as_bits).tolist() == two_calls.view(as_bits).tolist()
    if not (lo != lo and TORCH_VERSION < (2, 15)):  # (torch before 2.15 clamps NaN bounds differently)
        _compare(lucid.clamp(x, lo, hi), torch.clamp(t, lo, hi))
        _compare(lucid.clamp(x[::3], lo, hi), torch.clamp(t[::3], lo, hi))  # strided: the two calls


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_hardtanh_is_a_clamp_with_torchs_gradient(dtype):
    """F.hardtanh runs clamp (in one pass on the CPU) and records torch's node: its
    gradient stops at the bounds themselves and passes a NaN (torch's scalar loop; its
    vector loop gives 0 there, by position)."""
    inf, nan = float("inf"), float("nan")
    t = torch.tensor([-2.0, -0.5, -0.2, 0.0, 0.3, 0.7, 1.5, nan, inf, -inf, 0.7000001] * 3000,
                     dtype=getattr(torch, dtype), requires_grad=True)
    x = to_lucid(t.detach(), "cpu").requires_grad_()
    y, ty = lucid.nn.functional.hardtanh(x, -0.5, 0.7), torch.nn.functional.hardtanh(t, -0.5, 0.7)
    assert y.grad_fn.name() == ty.grad_fn.name() == "HardtanhBackward0"
    _compare(y, ty)
    g = torch.randint(-2, 3, ty.shape).to(ty.dtype)
    y.backward(to_lucid(g, "cpu"))
    ty.backward(g)
    nan = t.detach().isnan()
    assert x.grad.numpy()[nan.numpy()].tolist() == g[nan].tolist()
    want = t.grad.clone()
    want[nan] = g[nan]
    _compare(x.grad, want)
    assert lucid.nn.functional.relu6(x).grad_fn.name() == "HardtanhBackward0"
    xs = lucid.tensor([-0.9, -0.3, 0.1, 0.5, 0.9], dtype=lucid.float64, requires_grad=True)
    assert lucid.autograd.gradcheck(lambda v: lucid.nn.functional.hardtanh(v, -0.5, 0.7), (xs,))


def test_hardtanh_takes_integers_and_refuses_bools_as_torch():
    x = lucid.tensor([1, 5, -3])  # on lucid's default device, the reference on torch's counterpart
    _check(lambda: lucid.nn.functional.hardtanh(x, -2, 2),
           lambda: torch.nn.functional.hardtanh(torch.tensor([1, 5, -3], device=_torch_device(x.device.type)), -2, 2))
    with pytest.raises(NotImplementedError, match="Bool inputs not supported for hardtanh"):
        lucid.nn.functional.hardtanh(lucid.tensor([True, False]), 0, 1)
    with pytest.raises(ValueError, match="min_val cannot be greater than max_val"):
        lucid.nn.functional.hardtanh(lucid.ones(2), 1, 0)


def test_clamp_needs_a_bound():
    with pytest.raises(RuntimeError):
        lucid.clamp(lucid.ones(2))


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "int64", "complex64"])
@pytest.mark.parametrize("weight", [0.25, 0.75, 1.0, "t"])
def test_lerp(dtype, weight, device):
    (la, ta), (lb, tb) = _pair(dtype, (2, 3), 11, device), _pair(dtype, (3,), 12, device)
    lw, tw = (weight, weight) if weight != "t" else _pair(dtype, (2, 1), 13, device)
    _check(lambda: lucid.lerp(la, lb, lw), lambda: torch.lerp(ta, tb, tw))
    _check(lambda: la.lerp(lb, lw), lambda: ta.lerp(tb, tw))
    _check(lambda: la.clone().lerp_(lb, lw), lambda: ta.clone().lerp_(tb, tw))


def test_lerp_dtype_mismatch():
    with pytest.raises(RuntimeError):
        lucid.lerp(lucid.ones(2), lucid.ones(2, dtype=lucid.float64), 0.5)


@pytest.mark.parametrize("op", ["addcmul", "addcdiv"])
@pytest.mark.parametrize("dtypes", [("float32",) * 3, ("int64",) * 3, ("int64", "float32", "float32"),
                                    ("float64", "float32", "float16")])
@pytest.mark.parametrize("value", [1, 2, 0.5])
def test_addcmul_addcdiv(op, dtypes, value, device):
    (la, ta), (lb, tb), (lc, tc) = (_pair(d, s, k, device)
                                    for k, (d, s) in enumerate(zip(dtypes, [(2, 3), (3,), (2, 1)])))
    if op == "addcdiv" and "float" in dtypes[2]:
        lc, tc = lc + 0.25, tc + 0.25  # no zeros
    _check(lambda: getattr(lucid, op)(la, lb, lc, value=value), lambda: getattr(torch, op)(ta, tb, tc, value=value))
    _check(lambda: getattr(la, op)(lb, lc, value=value), lambda: getattr(ta, op)(tb, tc, value=value))
    _check(lambda: getattr(la.clone(), op + "_")(lb, lc, value=value),
           lambda: getattr(ta.clone(), op + "_")(tb, tc, value=value))


SPECIAL = [float("nan"), float("inf"), float("-inf"), 0.0, -0.0, 1e308, -3.5, 2.5]


@pytest.mark.parametrize("dtype", FLOAT_NAMES)
@pytest.mark.parametrize("kw", [{}, {"nan": 1.5}, {"posinf": 7.0, "neginf": -7.0}])
def test_nan_to_num(dtype, kw, device):
    lt, tt = _tensors(SPECIAL, dtype, device)
    _check(lambda: lucid.nan_to_num(lt, **kw), lambda: torch.nan_to_num(tt, **kw))
    _check(lambda: lt.nan_to_num(**kw), lambda: tt.nan_to_num(**kw))
    _check(lambda: lt.clone().nan_to_num_(**kw), lambda: tt.clone().nan_to_num_(**kw))
    li, ti = _tensors([1, 2], "int64", device)
    _check(lambda: lucid.nan_to_num(li), lambda: torch.nan_to_num(ti))
    cdata = [complex(a, b) for a, b in zip(SPECIAL, reversed(SPECIAL))]
    lc, tc = _tensors(cdata, "complex64", device)
    _check(lambda: lucid.nan_to_num(lc.reshape(2, 4).t(), **kw), lambda: torch.nan_to_num(tc.reshape(2, 4).t(), **kw))


UNARY_SPECIAL = ["exp2", "expm1", "log2", "log10", "log1p", "tan", "asin", "acos", "atan", "sinh", "cosh",
                 "asinh", "acosh", "atanh", "erf", "erfc", "erfinv", "reciprocal", "rsqrt", "logit", "floor",
                 "ceil", "round", "trunc", "frac", "square", "relu", "isnan", "isinf", "isfinite", "isposinf",
                 "isneginf", "logical_not", "sign", "sigmoid", "tanh"]


@pytest.mark.parametrize("op", UNARY_SPECIAL)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_unary_special_values(op, dtype, device):
    data = SPECIAL + [1.0, -1.0, 0.5, -0.5, 0.999, 1e-10, 3e38, 710.0]
    lt, tt = _tensors(data, dtype, device)
    _check(lambda: getattr(lucid, op)(lt), lambda: getattr(torch, op)(tt))


BINARY_SPECIAL = ["floor_divide", "remainder", "fmod", "pow", "fmax", "fmin", "atan2", "hypot", "xlogy",
                  "logaddexp", "logaddexp2", "maximum", "div"]


@pytest.mark.parametrize("op", BINARY_SPECIAL)
def test_binary_special_values(op, device):
    vals = [float("nan"), float("inf"), float("-inf"), 0.0, -0.0, 2.5, -3.0, 1.0]
    a = [x for x in vals for _ in vals]
    b = [y for _ in vals for y in vals]
    (la, ta), (lb, tb) = _tensors(a, "float64", device), _tensors(b, "float64", device)
    _check(lambda: getattr(lucid, op)(la, lb), lambda: getattr(torch, op)(ta, tb))


@pytest.mark.parametrize("dtype", ["int8", "int32", "int64", "uint8"])
def test_integer_division_edge_cases(dtype, device):
    lo = -128 if dtype == "int8" else 0 if dtype == "uint8" else -2**31 if dtype == "int32" else -2**63
    if dtype in ("int32", "int64"):  # torch traps (SIGFPE) on INT_MIN // -1 there; lucid wraps
        t = lucid.tensor([lo], dtype=getattr(lucid, dtype), device=device)
        assert (t // -1).tolist() == [lo] and (t % -1).tolist() == [0] and lucid.fmod(t, -1).tolist() == [0]
        lo += 1
    data = [lo, -7, 7, 5, lo + 1]
    lt, tt = _tensors(data, dtype, device)
    for d in ([-1, 2, -3, 3, 7] if dtype != "uint8" else [1, 2, 3, 3, 7]):
        for op in ("floor_divide", "remainder", "fmod"):
            _check(lambda: getattr(lucid, op)(lt, d), lambda: getattr(torch, op)(tt, d))
        _check(lambda: lucid.div(lt, d, rounding_mode="trunc"), lambda: torch.div(tt, d, rounding_mode="trunc"))
    for op in ("floor_divide", "remainder", "fmod"):
        with pytest.raises(RuntimeError):
            getattr(lucid, op)(lt, 0)
    for s in (0, 1, 3, 7, 8, 63, 64, -1):
        _check(lambda: lt << s, lambda: tt << s)
        _check(lambda: lt >> s, lambda: tt >> s)


def test_integer_pow(device):
    i, ti = _tensors([2, -3, 1, -1, 0], "int64", device)
    with pytest.raises(RuntimeError):
        i ** -1
    with pytest.raises(RuntimeError):
        lucid.pow(i, -2)
    (le, te) = _tensors([-1, -2, -3, -3, 2], "int64", device)
    _check(lambda: lucid.pow(i, le), lambda: torch.pow(ti, te))
    _check(lambda: 2 ** i.abs(), lambda: 2 ** ti.abs())
    _check(lambda: i ** 40, lambda: ti ** 40)  # wraps like torch
    _check(lambda: 1.5 ** i, lambda: 1.5 ** ti)


@pytest.mark.parametrize("dtypes", [("float32", "float32"), ("int64", "int64"), ("bool", "bool"),
                                    ("float64", "float64"), ("int64", "float32")])
@pytest.mark.parametrize("kw", [{}, {"rtol": 0, "atol": 0}, {"rtol": 0.1, "atol": 0.5}, {"equal_nan": True}])
def test_isclose_allclose_equal(dtypes, kw, device):
    a = [1.0, 1.00001, float("nan"), float("inf"), 2.0, -2.0] if "float" in dtypes[0] else [1, 0, 1, 0, 5, 3]
    b = [1.0, 1.0, float("nan"), float("inf"), 2.2, float("-inf")] if "float" in dtypes[1] else [1, 1, 1, 0, 4, 3]
    (la, ta), (lb, tb) = _tensors(a, dtypes[0], device), _tensors(b, dtypes[1], device)
    _check(lambda: lucid.isclose(la, lb, **kw), lambda: torch.isclose(ta, tb, **kw))
    _check(lambda: la.isclose(lb, **kw), lambda: ta.isclose(tb, **kw))
    try:
        expected = torch.allclose(ta, tb, **kw)
    except RuntimeError:
        with pytest.raises(RuntimeError):
            lucid.allclose(la, lb, **kw)
    else:
        assert lucid.allclose(la, lb, **kw) is expected
        assert lucid.allclose(la[:2], lb[:2], **kw) is torch.allclose(ta[:2], tb[:2], **kw)
    # torch's CUDA equal calls a tensor equal to itself without looking (NaN or not); its CPU
    # compares the values, NaN unequal: lucid compares the values on every device
    assert lucid.equal(la, la) is torch.equal(ta.cpu(), ta.cpu().clone())
    assert lucid.equal(la, lb) is torch.equal(ta, tb)
    assert la.equal(la[:2]) is ta.equal(ta[:2])


INPLACE_OPERATORS = ["__ipow__", "__ifloordiv__", "__imod__", "__iand__", "__ior__", "__ixor__",
                     "__ilshift__", "__irshift__", "__iadd__", "__imul__"]


@pytest.mark.parametrize("meth", INPLACE_OPERATORS)
@pytest.mark.parametrize("dtype", ["bool", "uint8", "int32", "int64", "float32", "float64"])
@pytest.mark.parametrize("other", [2, 1.5, True, "t"])
def test_inplace_operators(meth, dtype, other, device):
    la, ta = _pair(dtype, (2, 3), 14, device)
    la, ta = abs(la) + 1 if dtype != "bool" else la, ta.abs() + 1 if dtype != "bool" else ta
    lo, to = (other, other) if other != "t" else _pair(dtype, (3,), 15, device)
    if other == "t" and dtype != "bool":
        lo, to = abs(lo) + 1, to.abs() + 1

    def run(t, o):
        r = getattr(t, meth)(o)
        if r is NotImplemented:
            raise TypeError("NotImplemented")
        assert r is t
        return t
    _check(lambda: run(la.clone(), lo), lambda: run(ta.clone(), to))


def test_operators_return_notimplemented_for_foreign_types():
    t = lucid.ones(2, dtype=lucid.int64)
    for op in ("__pow__", "__floordiv__", "__mod__", "__and__", "__lshift__", "__rpow__", "__ipow__"):
        assert getattr(t, op)("x") is NotImplemented
    with pytest.raises(TypeError):
        t ** "x"
    with pytest.raises(TypeError):
        ~lucid.ones(2)


@pytest.mark.parametrize("fn", [
    lambda m, a, b, out: m.add(a, b, out=out),
    lambda m, a, b, out: m.add(a, b, alpha=2, out=out),
    lambda m, a, b, out: m.pow(a, b, out=out),
    lambda m, a, b, out: m.atan2(a, b, out=out),
    lambda m, a, b, out: m.exp(a, out=out),
    lambda m, a, b, out: m.isnan(a, out=out),
    lambda m, a, b, out: m.where(a > 0, a, b, out=out),
    lambda m, a, b, out: m.clamp(a, -1, 1, out=out),
    lambda m, a, b, out: m.div(a, b, rounding_mode="floor", out=out),
    lambda m, a, b, out: m.round(a, decimals=1, out=out),
    lambda m, a, b, out: m.lerp(a, b.expand(2, 3), 0.5, out=out),
    lambda m, a, b, out: m.addcmul(a, a, b, out=out),
    lambda m, a, b, out: m.logical_and(a, b, out=out),
])
@pytest.mark.parametrize("out_kind", ["same", "empty", "float64", "int64", "bool"])
def test_out(fn, out_kind, device):
    (la, ta), (lb, tb) = _pair("float32", (2, 3), 16, device), _pair("float32", (3,), 17, device)
    shape = (0,) if out_kind == "empty" else (2, 3)
    dt = "float32" if out_kind in ("same", "empty") else out_kind
    lo = lucid.zeros(shape, dtype=getattr(lucid, dt), device=device)
    to = torch.zeros(shape, dtype=getattr(torch, dt), device=_torch_device(device))

    def call(m, a, b, o):
        r = fn(m, a, b, o)
        assert r is o
        return o
    _check(lambda: call(lucid, la, lb, lo), lambda: call(torch, ta, tb, to))


def test_out_refuses_autograd():
    a = lucid.ones(2, requires_grad=True)
    with pytest.raises(RuntimeError):
        lucid.exp(a, out=lucid.empty(2))


@pytest.mark.parametrize("a", ["int32", "float16", "bool", "complex64", "complex128", 3, 2.5, True])
@pytest.mark.parametrize("b", ["int64", "uint8", "float64", "0d_float64", 1, 1.5, 1j])
def test_result_type(a, b):
    def mk(m, x):
        if isinstance(x, str):
            zero_d = x.startswith("0d_")
            return m.ones(() if zero_d else (2,), dtype=getattr(m, x.replace("0d_", "")))
        return x
    if not isinstance(a, str) and not isinstance(b, str):
        return
    expected = str(torch.result_type(mk(torch, a), mk(torch, b))).replace("torch", "lucid")
    if expected == "lucid.complex32":  # (lucid has no complex32: half-precision parts promote to complex64)
        expected = "lucid.complex64"
    assert str(lucid.result_type(mk(lucid, a), mk(lucid, b))) == expected


@pytest.mark.parametrize("src", DTYPE_NAMES)
@pytest.mark.parametrize("dst", DTYPE_NAMES)
def test_can_cast(src, dst):
    assert lucid.can_cast(getattr(lucid, src), getattr(lucid, dst)) is torch.can_cast(getattr(torch, src), getattr(torch, dst))


def test_can_cast_needs_dtypes():
    with pytest.raises(TypeError):
        lucid.can_cast("float32", lucid.int32)
