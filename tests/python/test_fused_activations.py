"""gelu (exact and tanh), silu, hardsigmoid, hardswish, softplus, logsigmoid and mish as fused ops (ops/activation_functors.h): one kernel
forward and one backward, against torch in every float dtype, at the limits, through the
float32 vector code's tails and fallback lanes, and twice differentiable."""

import math

import pytest
import torch
import torch.nn.functional as TF

import lucid
import lucid.nn.functional as LF

from conftest import to_lucid

INF, NAN = math.inf, math.nan

# name: (lucid's, torch's, the forward op, the backward op)
ACTIVATIONS = {
    "gelu": (LF.gelu, TF.gelu, "_gelu", "_gelu_backward"),
    "gelu_tanh": (lambda x: LF.gelu(x, approximate="tanh"), lambda x: TF.gelu(x, approximate="tanh"),
                  "_gelu_tanh", "_gelu_tanh_backward"),
    "silu": (LF.silu, TF.silu, "_silu", "_silu_backward"),
    "hardsigmoid": (LF.hardsigmoid, TF.hardsigmoid, "_hardsigmoid", "_hardsigmoid_backward"),
    "hardswish": (LF.hardswish, TF.hardswish, "_hardswish", "_hardswish_backward"),
    "softplus": (LF.softplus, TF.softplus, "_softplus", "_softplus_backward"),
    "logsigmoid": (LF.logsigmoid, TF.logsigmoid, "_log_sigmoid", "_log_sigmoid_backward"),
    "mish": (LF.mish, TF.mish, "_mish", "_mish_backward"),
    # with a parameter (its default): leaky_relu's gradient is its slope op times g
    "leaky_relu": (LF.leaky_relu, TF.leaky_relu, "_leaky_relu", ("_leaky_relu_slope", "mul")),
    "softshrink": (LF.softshrink, TF.softshrink, "_softshrink", "_shrink_backward"),
    "hardshrink": (LF.hardshrink, TF.hardshrink, "_hardshrink", "_shrink_backward"),
}
# (rtol, atol): float32's is torch's own (assert_close's default): its float32 gelu_backward
# (tanh form) cancels in 1 + tanh(u) for x < -3 as the formula does in any float32 code.
TOL = {"float64": (1e-12, 1e-12), "float32": (2e-6, 1e-5), "float16": (2e-3, 2e-3), "bfloat16": (1.6e-2, 1.6e-2)}


def _close(got, want, dtype):
    """got (lucid) against want (torch, in float64), NaNs in the same places."""
    g = torch.tensor(got.cpu().tolist(), dtype=torch.float64)
    rtol, atol = TOL[dtype]
    torch.testing.assert_close(g, want.to(torch.float64), rtol=rtol, atol=atol, equal_nan=True)


def _reference(fn, x, dtype):
    """torch's result, from float64 for the float types (torch's own float32 GELU is off
    at +inf and near -3, test_stability.py's TORCH_FLOAT32_QUIRKS), rounded to dtype."""
    return fn(x.double()).to(getattr(torch, dtype))


def _exact_sixth(name, grad, g):
    """torch's float64 hardsigmoid gradient is g * float(1/6) (a float constant in its
    kernel), 3e-8 off; lucid's divides by 6 in the dtype. The reference with that mended."""
    if name != "hardsigmoid" or grad.dtype != torch.float64:
        return grad
    return torch.where(grad != 0, g / 6, grad)


def _inputs(n, seed, scale=4):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(n, generator=g, dtype=torch.float64) * scale


@pytest.mark.parametrize("name", sorted(ACTIVATIONS))
@pytest.mark.parametrize("dtype", sorted(TOL))
def test_forward_and_backward_match_torch(name, dtype, device):
    lfn, tfn, _, _ = ACTIVATIONS[name]
    # every length through a vector of 16 lanes and its tail, and past the threaded size
    for n in (1, 7, 8, 15, 16, 17, 33, 100, 70001):
        base = _inputs(n, n).to(getattr(torch, dtype))
        lx = to_lucid(base, device).requires_grad_()
        y = lfn(lx)
        _close(y, _reference(tfn, base, dtype), dtype)
        g = _inputs(n, n + 1, scale=1).to(getattr(torch, dtype))
        y.backward(to_lucid(g, device))
        tx = base.double().requires_grad_()
        tfn(tx).backward(g.double())
        _close(lx.grad, _exact_sixth(name, tx.grad, g.double()).to(getattr(torch, dtype)), dtype)


@pytest.mark.parametrize("name", sorted(ACTIVATIONS))
def test_limits_and_the_vector_codes_fallback_lanes(name, device):
    """inf, NaN, and values where exp leaves the vector code's range (|x| > 9.5 for the tanh
    form, 13 for gelu's derivative, 87 for silu): the scalar formula's results. torch in the
    same dtype is the reference (the tanh form's derivative is NaN where x^2 overflows, as
    there), but for exact gelu, whose float32 torch is off (TORCH_FLOAT32_QUIRKS)."""
    lfn, tfn, _, _ = ACTIVATIONS[name]
    values = [-INF, INF, NAN, -1e20, 1e20, -100.0, -88.0, -87.5, -30.0, -13.5, -12.9, -3.0, -1e-30, -0.0,
              0.0, 1e-30, 0.5, 3.0, 12.9, 13.5, 30.0, 87.5, 88.0, 100.0, 3e38]
    for dtype in ("float32", "float64"):
        t = torch.tensor(values, dtype=getattr(torch, dtype))
        # one bad lane among 15 good ones, in each position of a vector
        for k in range(0, len(values), 3):
            row = torch.full((16,), 0.25, dtype=t.dtype)
            row[k % 16] = t[k]
            lx = to_lucid(row, device).requires_grad_()
            tx = (row.double() if name == "gelu" else row.clone()).requires_grad_()
            y, ty = lfn(lx), tfn(tx)
            _close(y, ty.to(row.dtype), dtype)
            y.sum().backward()
            ty.sum().backward()
            _close(lx.grad, _exact_sixth(name, tx.grad, torch.ones_like(tx.grad)).to(row.dtype), dtype)


@pytest.mark.parametrize("name", sorted(ACTIVATIONS))
def test_strided_broadcast_and_contiguous_inputs_agree(name, device):
    """A transposed input, a sliced one, and a broadcast gradient (of a sum) give the
    contiguous input's values."""
    lfn, tfn, _, _ = ACTIVATIONS[name]
    base = _inputs(48 * 40, 3).reshape(48, 40).float()
    lx = to_lucid(base, device)
    for view in (lambda t: t.t(), lambda t: t[::2, 1::3]):
        _close(lfn(view(lx)), tfn(view(base).double()).float(), "float32")
    # a transposed tensor is one dense run in its memory order: the same vector code
    assert lfn(lx.t()).tolist() == lfn(lx).t().tolist()
    lx.requires_grad_()
    lfn(lx).sum().backward()  # g is one value broadcast
    tx = base.double().requires_grad_()
    tfn(tx).sum().backward()
    _close(lx.grad, tx.grad.float(), "float32")


@pytest.mark.parametrize("name", sorted(ACTIVATIONS))
def test_one_op_forward_and_one_backward(name, device):
    lfn, _, fwd, bwd = ACTIVATIONS[name]
    lx = lucid.randn(5, 6, device=device, requires_grad=True)
    lucid._C._op_tally_begin()
    y = lfn(lx)
    calls = [c[0] for c in lucid._C._op_tally_end()]
    assert calls == [fwd], calls
    lucid._C._op_tally_begin()
    y.backward(lucid.ones_like(y))
    calls = [c[0] for c in lucid._C._op_tally_end()]
    assert calls == ([bwd] if isinstance(bwd, str) else list(bwd)), calls


@pytest.mark.parametrize("name", sorted(ACTIVATIONS))
def test_node_names_match_torch(name):
    lfn, tfn, _, _ = ACTIVATIONS[name]
    lx = lucid.tensor([0.5, -1.0], dtype=lucid.float64, requires_grad=True)
    tx = torch.tensor([0.5, -1.0], dtype=torch.float64, requires_grad=True)
    ly, ty = lfn(lx), tfn(tx)
    assert ly.grad_fn.name() == ty.grad_fn.name()
    (lg,) = lucid.autograd.grad(ly.sum(), lx, create_graph=True)
    (tg,) = torch.autograd.grad(ty.sum(), tx, create_graph=True)
    # (torch: silu's and mish's double backward are composites, hardsigmoid's is not implemented;
    # lucid's leaky_relu gradient is a product, and one op serves both shrinks' gradients)
    if name not in ("silu", "hardsigmoid", "mish", "leaky_relu", "softshrink", "hardshrink"):
        assert lg.grad_fn.name() == tg.grad_fn.name()


@pytest.mark.parametrize("name", sorted(ACTIVATIONS))
def test_twice_differentiable(name, device):
    """Numerical gradients of the derivative op in float64 (both its inputs), and the
    second derivative against torch's."""
    lfn, tfn, _, bwd = ACTIVATIONS[name]
    x = _inputs(9, 5).reshape(3, 3)
    g = _inputs(9, 6).reshape(3, 3)
    lx, lg = to_lucid(x, device).requires_grad_(), to_lucid(g, device).requires_grad_()
    assert lucid.autograd.gradcheck(lfn, (lx,))
    assert lucid.autograd.gradgradcheck(lfn, (lx,))
    if isinstance(bwd, str):
        assert lucid.autograd.gradcheck(lambda a, b: getattr(lucid._C, bwd)(a, b), (lg, lx))
    if name == "hardsigmoid":  # (torch has no second derivative of it to compare with)
        return
    tx = x.clone().requires_grad_()
    for m, f, t in ((lucid, lfn, lx), (torch, tfn, tx)):
        (d,) = m.autograd.grad(f(t).sum(), t, create_graph=True)
        (d * d).sum().backward()
    torch.testing.assert_close(torch.tensor(lx.grad.cpu().tolist(), dtype=torch.float64), tx.grad)


def test_parameters_other_than_the_defaults(device):
    """leaky_relu's slope (a negative one too), the shrinks' lambda (hardshrink's negative
    one: nothing inside, the identity) and prelu's weight (its gradient summed over what it
    broadcast to), forward and backward against torch in float64."""
    x = _inputs(2 * 3 * 5, 11).reshape(2, 3, 5)
    g = _inputs(2 * 3 * 5, 12, scale=1).reshape(2, 3, 5)
    w = torch.tensor([0.1, -0.3, 0.7], dtype=torch.float64)
    cases = [lambda F, t, _: F.leaky_relu(t, 0.2), lambda F, t, _: F.leaky_relu(t, -0.5),
             lambda F, t, _: F.softshrink(t, 1.5), lambda F, t, _: F.hardshrink(t, 1.5),
             lambda F, t, _: F.hardshrink(t, -1.0), lambda F, t, w: F.prelu(t, w),
             lambda F, t, w: F.rrelu(t, 0.1, 0.3)]
    for f in cases:
        lx, lw = to_lucid(x, device).requires_grad_(), to_lucid(w, device).requires_grad_()
        tx, tw = x.clone().requires_grad_(), w.clone().requires_grad_()
        y, ty = f(LF, lx, lw), f(TF, tx, tw)
        _close(y, ty, "float64")
        y.backward(to_lucid(g, device))
        ty.backward(g)
        _close(lx.grad, tx.grad, "float64")
        if tw.grad is not None:
            _close(lw.grad, tw.grad, "float64")
    with pytest.raises(RuntimeError, match="prelu: Type promoting not supported. Got Float and Double"):
        LF.prelu(to_lucid(x.float(), device), to_lucid(w, device))


def test_bad_inputs_raise_like_torch(device):
    for m in (torch, lucid):
        x = m.ones(3, device="cpu" if m is torch else device)
        with pytest.raises(RuntimeError, match="approximate argument must be either none or tanh"):
            m.nn.functional.gelu(x, approximate="exact")
    for dtype in ("int64", "bool", "complex64"):
        t = torch.ones(3, dtype=getattr(torch, dtype))
        lx = to_lucid(t, device)
        for lf, tf in ((LF.gelu, TF.gelu), (LF.silu, TF.silu), (LF.hardsigmoid, TF.hardsigmoid),
                       (LF.hardswish, TF.hardswish), (LF.softplus, TF.softplus), (LF.logsigmoid, TF.logsigmoid),
                       (LF.mish, TF.mish), (LF.leaky_relu, TF.leaky_relu), (LF.softshrink, TF.softshrink),
                       (LF.hardshrink, TF.hardshrink)):
            if dtype == "complex64" and lf is LF.silu:
                continue  # (test_complex_silu)
            with pytest.raises(NotImplementedError) as want:
                tf(t)
            with pytest.raises(NotImplementedError, match="not implemented for '"):
                lf(lx)
            assert str(want.value).split()[-1] == "'" + {"int64": "Long", "bool": "Bool",
                                                          "complex64": "ComplexFloat"}[dtype] + "'"
    with pytest.raises(TypeError):
        lucid._C._gelu_backward(lucid.ones(2), 1.0)  # two tensors, as torch's gelu_backward


def test_inplace_silu(device):
    t = _inputs(10, 8).float()
    lx = to_lucid(t, device)
    out = LF.silu(lx, inplace=True)
    assert out is lx
    _close(lx, TF.silu(t.double()).float(), "float32")
    leaf = to_lucid(t, device).requires_grad_()
    h = leaf * 1.0
    LF.silu(h, inplace=True).sum().backward()
    tl = t.double().requires_grad_()
    TF.silu(tl * 1.0).sum().backward()
    _close(leaf.grad, tl.grad.float(), "float32")


def test_complex_silu(device):
    """torch's silu takes complex tensors (without a gradient); so does lucid's."""
    t = torch.tensor([0.5 + 1j, -2 - 0.5j, 3j], dtype=torch.complex64)
    got = LF.silu(to_lucid(t, device))
    torch.testing.assert_close(torch.tensor(got.cpu().tolist(), dtype=torch.complex64), TF.silu(t))
    with pytest.raises(NotImplementedError):
        LF.silu(to_lucid(t, device).requires_grad_()).abs().sum().backward()
