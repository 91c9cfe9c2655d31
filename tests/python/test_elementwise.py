"""The elementwise op set, checked op by op against PyTorch: one registry entry per
op (its torch reference and sample inputs); one parametrised test runs every op over
every dtype, broadcasting, non-contiguous and 0-d inputs and Python numbers,
comparing values, dtype and shape, or the exception type when PyTorch raises."""

import math
import types

import pytest
import torch

import lucid

from conftest import DTYPE_NAMES

BINARY = ["add", "sub", "mul", "div", "maximum", "minimum", "eq", "ne", "lt", "le", "gt", "ge",
          "floor_divide", "_div_trunc", "remainder", "fmod", "pow", "fmax", "fmin", "atan2", "hypot",
          "xlogy", "logaddexp", "logaddexp2", "logical_and", "logical_or", "logical_xor",
          "bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_left_shift", "bitwise_right_shift"]
UNARY = ["neg", "abs", "sign", "exp", "log", "sqrt", "sin", "cos", "tanh", "sigmoid",
         "exp2", "expm1", "log2", "log10", "log1p", "tan", "asin", "acos", "atan", "sinh", "cosh",
         "asinh", "acosh", "atanh", "erf", "erfc", "erfinv", "reciprocal", "rsqrt", "logit",
         "floor", "ceil", "round", "trunc", "frac", "square", "relu", "bitwise_not",
         "isnan", "isinf", "isfinite", "isposinf", "isneginf", "logical_not"]
# the Special unit's ops, tested in test_special.py
SPECIAL = ["lgamma", "digamma", "i0", "special_i0e", "special_i1", "special_i1e", "special_erfcx", "special_zeta",
           "igamma", "igammac", "special_bessel_j0", "special_bessel_j1", "special_bessel_y0", "special_bessel_y1",
           "special_modified_bessel_k0", "special_modified_bessel_k1", "special_scaled_modified_bessel_k0",
           "special_scaled_modified_bessel_k1", "special_airy_ai",
           "gcd", "lcm", "nextafter"]
# the Polynomial unit's (torch.special's orthogonal polynomials), tested in test_special.py
SPECIAL += ["special_chebyshev_polynomial_" + k for k in "tuvw"] + [
    "special_hermite_polynomial_h", "special_hermite_polynomial_he", "special_laguerre_polynomial_l",
    "special_legendre_polynomial_p"]
# internal ops of autograd, tested with their op's gradient (test_elementwise_grad.py)
SPECIAL += ["_threshold_backward"]
# the fused activations and their derivatives (test_fused_activations.py)
SPECIAL += ["_gelu", "_gelu_tanh", "_silu", "_gelu_backward", "_gelu_tanh_backward", "_silu_backward",
            "_hardsigmoid", "_hardswish", "_hardsigmoid_backward", "_hardswish_backward",
            "_softplus", "_log_sigmoid", "_mish", "_softplus_backward", "_log_sigmoid_backward", "_mish_backward",
            "_leaky_relu", "_leaky_relu_slope", "_softshrink", "_hardshrink", "_shrink_backward"]
OPERATORS = {"add": "__add__", "sub": "__sub__", "mul": "__mul__", "div": "__truediv__",
             "eq": "__eq__", "ne": "__ne__", "lt": "__lt__", "le": "__le__", "gt": "__gt__",
             "ge": "__ge__", "neg": "__neg__", "abs": "__abs__",
             "floor_divide": "__floordiv__", "remainder": "__mod__", "pow": "__pow__",
             "bitwise_and": "__and__", "bitwise_or": "__or__", "bitwise_xor": "__xor__",
             "bitwise_left_shift": "__lshift__", "bitwise_right_shift": "__rshift__",
             "bitwise_not": "__invert__"}
REFLECTED = {"add": "__radd__", "sub": "__rsub__", "mul": "__rmul__", "div": "__rtruediv__",
             "floor_divide": "__rfloordiv__", "remainder": "__rmod__", "pow": "__rpow__",
             "bitwise_and": "__rand__", "bitwise_or": "__ror__", "bitwise_xor": "__rxor__",
             "bitwise_left_shift": "__rlshift__", "bitwise_right_shift": "__rrshift__"}
# torch functions under another name (internal lucid ops)
TORCH_FN = {"_div_trunc": lambda a, b: torch.div(a, b, rounding_mode="trunc")}
# Inputs mapped into the op's domain (applied to the lucid and the torch input alike),
# so that the comparison sees values, not only NaN.
UNIT_DOMAIN = ("asin", "acos", "atanh", "erfinv", "logit")


def _torch_fn(op):
    return TORCH_FN.get(op) or getattr(torch, op)


def _in_domain(op, dtype, t):
    if dtype in ("bool", "uint8", "int8", "int16", "int32", "int64"):
        return t
    if op in UNIT_DOMAIN:
        return t / 4 + (0.5 if op == "logit" else 0)
    if op in ("log", "sqrt", "log2", "log10", "log1p", "rsqrt") and dtype != "complex64":
        return abs(t)
    if op == "acosh" and dtype != "complex64":
        return abs(t) + 1
    return t


def test_every_engine_op_has_an_entry():
    assert sorted(lucid._C._elementwise_ops) == sorted(BINARY + UNARY + SPECIAL)


def _values(name, shape, seed):
    """Values every dtype holds: small, varied, positive for unsigned and log/sqrt."""
    g = torch.Generator().manual_seed(seed)
    t = torch.randint(1, 9, shape, generator=g).to(torch.float64)
    if name == "bool":
        return (t > 4).tolist()
    if name not in ("uint8",):
        t = t - 4.5 if name in ("float16", "bfloat16", "float32", "float64", "complex64") else t - 4
    return t.tolist()


def _pair(name, shape, seed, device=None):
    """The same values as a lucid and a torch tensor, on `device` ("gpu": torch's CUDA;
    None: lucid's default device, LUCID_TEST_DEFAULT_DEVICE, and torch's counterpart)."""
    device = device or lucid.get_default_device().type
    data = _values(name, shape, seed)
    # reshape: tolist() of an empty tensor forgets its shape
    return (lucid.tensor(data, dtype=getattr(lucid, name), device=device).reshape(shape),
            torch.tensor(data, dtype=getattr(torch, name), device=_torch_device(device)).reshape(shape))


def _torch_device(device):
    return "cuda" if device == "gpu" else "cpu"


def _compare(lt, tt, tol=None):
    assert str(lt.dtype).split(".")[-1] == str(tt.dtype).split(".")[-1], (lt.dtype, tt.dtype)
    assert tuple(lt.shape) == tuple(tt.shape)
    assert lt.device.type == ("gpu" if tt.is_cuda else "cpu"), (lt.device, tt.device)
    ref = tt.to(torch.complex128 if tt.is_complex() else torch.float64).tolist() if tt.numel() else []
    got = lt.tolist()
    tol = tol or {"float16": 2e-3, "bfloat16": 1e-2}.get(str(tt.dtype).split(".")[-1], 1e-6)

    def close_real(x, y):
        if math.isnan(x) or math.isnan(y):
            return math.isnan(x) and math.isnan(y)
        return x == y or abs(x - y) <= tol * max(1.0, abs(y))  # inf - inf is nan: not close

    def close(a, b):
        if isinstance(a, list):
            return len(a) == len(b) and all(close(x, y) for x, y in zip(a, b))
        a, b = complex(a), complex(b)
        return close_real(a.real, b.real) and close_real(a.imag, b.imag)

    assert close(got, ref), (got, ref)


def _cpu(value):
    """`value` with every torch tensor in it (also inside lists, tuples, dicts) on the CPU."""
    if isinstance(value, torch.Tensor):
        return value.cpu()
    if isinstance(value, (list, tuple)):
        return type(value)(_cpu(v) for v in value)
    if isinstance(value, dict):
        return {k: _cpu(v) for k, v in value.items()}
    return value


def _on_cpu(fn):
    """`fn` (a lambda over torch tensors) with each CUDA tensor it closes over moved to the CPU."""
    cells = tuple(types.CellType(_cpu(c.cell_contents)) for c in fn.__closure__ or ())
    return types.FunctionType(fn.__code__, fn.__globals__, None, None, cells)


def _check(lucid_fn, torch_fn):
    """lucid_fn() agrees with torch_fn(): the same values, or the same exception type.
    On the GPU (torch's CUDA as the reference) lucid behaves as PyTorch's CPU does where
    the two differ: it raises where torch's CPU raises (an integer divisor of zero, abs of
    bool), and its values may match either device's (complex pow's exact special cases)."""
    cpu_fn = None
    try:
        expected = torch_fn()
        if expected.is_cuda:
            cpu_fn = _on_cpu(torch_fn)
            try:
                cpu_fn()
            except (RuntimeError, NotImplementedError) as e:
                if "ComplexHalf" not in str(e):
                    with pytest.raises(type(e)):
                        lucid_fn().tolist()  # a divisor of zero is raised at the next synchronisation
                    return
    except Exception as e:  # lucid must raise the same type
        if isinstance(e, NotImplementedError) and '_cuda" not implemented' in str(e):
            # torch's CUDA lacks a kernel its CPU has (a bitwise op into a float64 out=):
            # its CPU referees, its result moved to CUDA
            _check(lucid_fn, lambda: _on_cpu(torch_fn)().cuda())
            return
        if "ComplexHalf" in str(e):
            # torch's complex32 lacks kernels, so it cannot referee: lucid computes in
            # complex64, where ordering comparisons raise and the rest must work.
            try:
                out = lucid_fn()
                assert out.dtype in (lucid.complex64, lucid.bool)
            except NotImplementedError:
                pass
            return
        expected_types = (type(e),)
        if "complex" in str(e).lower():  # torch 2.11 and 2.15 word (and type) this differently
            expected_types += (TypeError, RuntimeError, NotImplementedError)
        with pytest.raises(expected_types):
            lucid_fn()
        return
    got = lucid_fn()
    if expected.dtype == torch.complex32:  # lucid has one complex dtype: complex64
        _compare(got, expected.to(torch.complex64), tol=2e-3)  # torch's half precision
        return
    try:
        _compare(got, expected)
    except AssertionError:
        if cpu_fn is None:
            raise
        _compare(got, cpu_fn().cuda())


SHAPES = [((2, 3), (2, 3)), ((2, 3), (3,)), ((4, 1), (1, 5)), ((), (3,)), ((0, 2), (2,))]


@pytest.mark.parametrize("op", BINARY)
@pytest.mark.parametrize("dtype", DTYPE_NAMES)
def test_binary_same_dtype(op, dtype, device):
    for k, (sa, sb) in enumerate(SHAPES):
        (la, ta), (lb, tb) = _pair(dtype, sa, k, device), _pair(dtype, sb, k + 10, device)
        _check(lambda: getattr(lucid, op)(la, lb), lambda: _torch_fn(op)(ta, tb))
        if op in OPERATORS:
            meth = OPERATORS[op]
            _check(lambda: getattr(la, meth)(lb), lambda: getattr(ta, meth)(tb))


@pytest.mark.parametrize("op", BINARY)
@pytest.mark.parametrize("dtypes", [("int32", "float32"), ("uint8", "int8"), ("float16", "bfloat16"),
                                    ("bool", "int64"), ("int64", "complex64"), ("float64", "float16")])
def test_binary_mixed_dtypes(op, dtypes, device):
    (la, ta), (lb, tb) = _pair(dtypes[0], (3, 4), 1, device), _pair(dtypes[1], (4,), 2, device)
    _check(lambda: getattr(lucid, op)(la, lb), lambda: _torch_fn(op)(ta, tb))
    # a 0-d tensor of a higher category still promotes; of the same category it does not
    (lz, tz) = _pair(dtypes[1], (), 3, device)
    _check(lambda: getattr(lucid, op)(la, lz), lambda: _torch_fn(op)(ta, tz))
    # a 0-d CPU tensor joins an op on any device, as a number parameter would (torch
    # refuses it in some ops: the reference moves it)
    (lz, tz) = _pair(dtypes[1], (), 3, "cpu")
    tz = tz.to(ta.device)
    _check(lambda: getattr(lucid, op)(la, lz), lambda: _torch_fn(op)(ta, tz))
    _check(lambda: getattr(lucid, op)(lz, la), lambda: _torch_fn(op)(tz, ta))


@pytest.mark.parametrize("op", BINARY)
@pytest.mark.parametrize("dtype", ["bool", "uint8", "int32", "float16", "float32", "complex64"])
@pytest.mark.parametrize("number", [True, 3, -2, 2.5, 1.5 - 2j])
def test_binary_with_python_numbers(op, dtype, number, device):
    la, ta = _pair(dtype, (2, 3), 4, device)
    _check(lambda: getattr(lucid, op)(la, number), lambda: _torch_fn(op)(ta, number))
    if op in OPERATORS:
        meth = OPERATORS[op]
        _check(lambda: getattr(la, meth)(number), lambda: getattr(ta, meth)(number))
    rmeth = REFLECTED.get(op)
    if rmeth:
        _check(lambda: getattr(la, rmeth)(number), lambda: getattr(ta, rmeth)(number))


@pytest.mark.parametrize("op", BINARY)
def test_binary_non_contiguous_and_expanded(op, device):
    la, ta = _pair("float32", (4, 3), 5, device)
    lb, tb = _pair("float32", (3, 4), 6, device)
    _check(lambda: getattr(lucid, op)(la, lb.t()), lambda: _torch_fn(op)(ta, tb.t()))
    _check(lambda: getattr(lucid, op)(la[::2], lb.t()[1::2]), lambda: _torch_fn(op)(ta[::2], tb.t()[1::2]))
    lc, tc = _pair("float32", (3,), 7, device)
    _check(lambda: getattr(lucid, op)(lc.expand(4, 3), la), lambda: _torch_fn(op)(tc.expand(4, 3), ta))


def test_output_keeps_the_input_memory_order():
    la, ta = _pair("float32", (3, 4), 8)
    assert (la.t() + 1).stride() == (ta.t() + 1).stride()


@pytest.mark.parametrize("op", UNARY)
@pytest.mark.parametrize("dtype", DTYPE_NAMES)
def test_unary(op, dtype, device):
    for k, shape in enumerate([(2, 3), (), (0, 4)]):
        la, ta = _pair(dtype, shape, 20 + k, device)
        la, ta = _in_domain(op, dtype, la), _in_domain(op, dtype, ta)
        _check(lambda: getattr(lucid, op)(la), lambda: _torch_fn(op)(ta))
        _check(lambda: getattr(la, op)(), lambda: getattr(ta, op)())
        if op in OPERATORS:
            meth = OPERATORS[op]
            _check(lambda: getattr(la, meth)(), lambda: getattr(ta, meth)())


def test_nan_propagates_through_maximum_and_minimum():
    a, b = lucid.tensor([1.0, float("nan"), 3.0]), lucid.tensor([float("nan"), 2.0, 1.0])
    ta, tb = (torch.tensor(t.tolist(), device=_torch_device(t.device.type)) for t in (a, b))
    _compare(lucid.maximum(a, b), torch.maximum(ta, tb))
    _compare(lucid.minimum(a, b), torch.minimum(ta, tb))


def test_uint8_wraps_python_numbers_like_torch():
    la, ta = _pair("uint8", (1,), 0)
    _compare(la + 300, ta + 300)


@pytest.mark.parametrize("bad", [
    lambda m: m.add(m.zeros(2, 3), m.zeros(4)),
    lambda m: m.zeros(2) + "x",
    lambda m: m.add(m.zeros(2), "x"),
    lambda m: m.tensor([True]) - m.tensor([True]),
    lambda m: -m.tensor([True]),
    lambda m: m.lt(m.tensor([1j]), m.tensor([2j])),
])
def test_bad_inputs_raise_like_torch(bad):
    with pytest.raises(Exception) as te:
        bad(torch)
    with pytest.raises(type(te.value)):
        bad(lucid)


def test_tensors_stay_hashable():
    t = lucid.zeros(2)
    assert {t: 1}[t] == 1 and hash(t) == hash(t)


@pytest.mark.parametrize("op", UNARY)
def test_unary_non_contiguous(op, device):
    la, ta = _pair("float32", (3, 4), 30, device)
    la, ta = _in_domain(op, "float32", la), _in_domain(op, "float32", ta)
    _check(lambda: getattr(lucid, op)(la.t()), lambda: _torch_fn(op)(ta.t()))
    _check(lambda: getattr(lucid, op)(la[:, ::2]), lambda: _torch_fn(op)(ta[:, ::2]))
    if op not in ("round", "logit"):  # their in-place forms are tested in test_elementwise_extra.py
        _check(lambda: getattr(la.clone().t(), op + "_")(), lambda: getattr(ta.clone().t(), op + "_")())


@pytest.mark.parametrize("op", [o for o in BINARY if not o.startswith("_")])
@pytest.mark.parametrize("number", [2, 1.5, True])
def test_binary_number_first(op, number, device):
    la, ta = _pair("int32", (2, 3), 31, device)
    la, ta = abs(la) + 1, ta.abs() + 1
    _check(lambda: getattr(lucid, op)(number, la), lambda: getattr(torch, op)(number, ta))


@pytest.mark.parametrize("op", [o for o in BINARY if hasattr(torch.Tensor, o + "_")])
@pytest.mark.parametrize("dtypes", [("float32", "float32"), ("int64", "int32"), ("int32", "float32"),
                                    ("bool", "bool"), ("float64", "float16")])
def test_binary_inplace_methods(op, dtypes, device):
    (la, ta), (lb, tb) = _pair(dtypes[0], (2, 3), 32, device), _pair(dtypes[1], (3,), 33, device)
    _check(lambda: getattr(la.clone(), op + "_")(lb), lambda: getattr(ta.clone(), op + "_")(tb))
    _check(lambda: getattr(la.clone(), op + "_")(3), lambda: getattr(ta.clone(), op + "_")(3))


@pytest.mark.parametrize("op", [o for o in BINARY + UNARY if not o.startswith("_")])
@pytest.mark.parametrize("dtype", ["int64", "float32"])
def test_out_argument(op, dtype):
    """out= where torch has it (a TypeError where it does not), written in the out dtype."""
    la, ta = _pair(dtype, (2, 3), 34)
    la, ta = _in_domain(op, dtype, la), _in_domain(op, dtype, ta)
    args = (3,) if op in BINARY and op not in ("maximum", "minimum", "fmax", "fmin", "atan2", "hypot",
                                              "logaddexp", "logaddexp2", "logical_and", "logical_or",
                                              "logical_xor") else ()
    if op in BINARY and not args:
        args = ((la, ta),)
    for out_dtype in ("float64", "bool", "int64"):
        lo = lucid.zeros(2, 3, dtype=getattr(lucid, out_dtype))
        to = torch.zeros(2, 3, dtype=getattr(torch, out_dtype), device=ta.device)
        largs = [a[0] if isinstance(a, tuple) else a for a in args]
        targs = [a[1] if isinstance(a, tuple) else a for a in args]

        def call(m, a, xs, out):
            assert getattr(m, op)(a, *xs, out=out) is out
            return out
        _check(lambda: call(lucid, la, largs, lo), lambda: call(torch, ta, targs, to))
