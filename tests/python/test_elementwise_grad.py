"""Gradients of the differentiable elementwise ops: lucid's backward against torch's
(float64 and float32, with broadcasting), and lucid.autograd.gradcheck in float64.

Each entry: (id, function of the inputs taking the module (lucid or torch) first,
input specs). An input spec is (shape, domain): domain maps uniform [0, 1) draws
into the op's domain, away from the points where the op is not differentiable."""

import pytest
import torch

import lucid

from conftest import TORCH_VERSION, to_lucid


def sym(lo, hi):  # |x| in [lo, hi), either sign
    return lambda u: (lo + (hi - lo) * (u * 2 % 1)) * torch.where(u < 0.5, -1.0, 1.0)


def rng(lo, hi):
    return lambda u: lo + (hi - lo) * u


ANY = rng(-2, 2)
POS = rng(0.5, 2)
UNIT = rng(-0.8, 0.8)
FRACT = rng(0.1, 0.4)  # offsets from integers: floor & co are differentiable there
A, B = (2, 3), (3,)  # broadcast against each other


def uu(name, dom=ANY, fn=None):
    return (name, fn or (lambda m, x: getattr(m, name)(x)), [(A, dom)])


def bb(name, da=ANY, db=ANY, fn=None):
    return (name, fn or (lambda m, x, y: getattr(m, name)(x, y)), [(A, da), (B, db)])


CASES = [
    bb("add"), bb("sub"), bb("mul"), bb("div", db=sym(0.5, 2)), bb("maximum"), bb("minimum"),
    bb("fmax"), bb("fmin"), bb("atan2", db=sym(0.5, 2)), bb("hypot"), bb("xlogy", db=POS),
    bb("logaddexp"), bb("logaddexp2"), bb("pow", da=POS),
    bb("remainder", db=sym(0.7, 1.3)), bb("fmod", db=sym(0.7, 1.3)),
    ("add_alpha", lambda m, x, y: m.add(x, y, alpha=2.5), [(A, ANY), (B, ANY)]),
    ("sub_alpha", lambda m, x, y: m.sub(x, y, alpha=-1.5), [(A, ANY), (B, ANY)]),
    ("pow_number", lambda m, x: m.pow(x, 2.5), [(A, POS)]),
    ("pow_int_number", lambda m, x: x ** 3, [(A, ANY)]),
    ("rpow", lambda m, x: 2.0 ** x, [(A, ANY)]),
    ("xlogy_number", lambda m, x: m.xlogy(2.0, x), [(A, POS)]),
    ("rsub", lambda m, x: 1 - x, [(A, ANY)]),
    ("rdiv", lambda m, x: 3 / x, [(A, sym(0.5, 2))]),
    ("div_floor", lambda m, x, y: m.div(x, y, rounding_mode="floor") + x, [(A, ANY), (B, sym(0.5, 2))]),
    # torch.floor_divide has no derivative (backward raises); lucid gives zeros, as for
    # div(rounding_mode='floor'), which shares its kernel: not compared here.
    uu("neg"), uu("abs", sym(0.2, 2)), uu("exp"), uu("log", POS), uu("sqrt", POS), uu("sin"), uu("cos"),
    uu("tanh"), uu("sigmoid"), uu("exp2"), uu("expm1"), uu("log2", POS), uu("log10", POS), uu("log1p", POS),
    uu("tan", UNIT), uu("asin", UNIT), uu("acos", UNIT), uu("atan"), uu("sinh"), uu("cosh"), uu("asinh"),
    uu("acosh", rng(1.2, 3)), uu("atanh", UNIT), uu("erf"), uu("erfc"), uu("erfinv", UNIT),
    uu("reciprocal", sym(0.5, 2)), uu("rsqrt", POS), uu("logit", rng(0.1, 0.9)), uu("square"),
    uu("relu", sym(0.1, 2)), uu("frac", POS), uu("sign", sym(0.1, 2)),
    ("floor", lambda m, x: m.floor(x) + x, [(A, FRACT)]), ("ceil", lambda m, x: m.ceil(x) * x, [(A, FRACT)]),
    ("round", lambda m, x: m.round(x) + x, [(A, FRACT)]), ("trunc", lambda m, x: m.trunc(x) + x, [(A, FRACT)]),
    ("round_decimals", lambda m, x: m.round(x, decimals=1) + x, [(A, rng(0.11, 0.14))]),
    ("logit_eps", lambda m, x: m.logit(x, eps=0.2), [(A, rng(0.05, 0.95))]),
    ("clamp_numbers", lambda m, x: m.clamp(x, -0.5, 0.7), [(A, ANY)]),
    ("clamp_min_only", lambda m, x: m.clamp(x, min=0.3), [(A, ANY)]),
    ("clamp_max", lambda m, x: m.clamp_max(x, 0.3), [(A, ANY)]),
    ("clamp_tensors", lambda m, x, lo, hi: m.clamp(x, lo, hi), [(A, ANY), (B, rng(-1, -0.2)), (B, rng(0.2, 1))]),
    ("clamp_crossed", lambda m, x, lo, hi: m.clamp(x, lo, hi), [(A, ANY), (B, rng(0.5, 1)), (B, rng(-1, -0.5))]),
    ("clip_min_tensor", lambda m, x, lo: m.clip(x, min=lo), [(A, ANY), (B, ANY)]),
    ("where", lambda m, x, y: m.where(x > 0, x, y), [(A, ANY), (B, ANY)]),
    ("where_number", lambda m, x: m.where(x > 0, x, 0.5), [(A, ANY)]),
    ("lerp_number", lambda m, x, y: m.lerp(x, y, 0.3), [(A, ANY), (B, ANY)]),
    ("lerp_number_high", lambda m, x, y: m.lerp(x, y, 0.8), [(A, ANY), (B, ANY)]),
    ("lerp_tensor", lambda m, x, y, w: m.lerp(x, y, w), [(A, ANY), (B, ANY), (B, rng(0, 1))]),
    ("addcmul", lambda m, x, y, z: m.addcmul(x, y, z, value=0.5), [(A, ANY), (B, ANY), (A, ANY)]),
    ("addcdiv", lambda m, x, y, z: m.addcdiv(x, y, z, value=2), [(A, ANY), (B, ANY), (A, sym(0.5, 2))]),
    ("nan_to_num", lambda m, x: m.nan_to_num(m.log(x), posinf=3.0), [(A, rng(-1, 2))]),
]
IDS = [c[0] for c in CASES]


def _inputs(specs, dtype, seed):
    g = torch.Generator().manual_seed(seed)
    out = []
    for shape, dom in specs:
        t = dom(torch.rand(shape, generator=g, dtype=torch.float64)).to(dtype)
        out.append(t)
    return out


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_backward_matches_torch(case, dtype, device):
    _, fn, specs = case
    tdev = "cuda" if device == "gpu" else "cpu"
    tins = [t.to(tdev).requires_grad_() for t in _inputs(specs, getattr(torch, dtype), 7)]
    lins = [to_lucid(t.detach(), device).requires_grad_() for t in tins]
    tout = fn(torch, *tins)
    lout = fn(lucid, *lins)
    assert str(lout.dtype).split(".")[-1] == dtype
    assert tuple(lout.shape) == tuple(tout.shape)
    gout = torch.rand(tout.shape, generator=torch.Generator().manual_seed(3), dtype=tout.dtype)
    tout.backward(gout.to(tdev))
    lout.backward(to_lucid(gout, device))
    tol = 1e-10 if dtype == "float64" else 2e-5
    for lt, tt in zip(lins, tins):
        if tt.grad is None:
            assert lt.grad is None or not lt.grad.to(lucid.float64).abs().sum().item()
            continue
        assert lt.grad is not None
        assert lt.grad.device == lt.device  # gradients stay on the inputs' device
        torch.testing.assert_close(torch.tensor(lt.grad.tolist(), dtype=tt.dtype), tt.grad.cpu(), rtol=tol, atol=tol)


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_gradcheck(case, device):
    # float64 numerical gradients, on every device
    _, fn, specs = case
    lins = [to_lucid(t, device).requires_grad_() for t in _inputs(specs, torch.float64, 11)]
    assert lucid.autograd.gradcheck(lambda *xs: fn(lucid, *xs), tuple(lins))


def test_where_routes_by_condition():
    x = lucid.tensor([1.0, -1.0, 2.0], requires_grad=True)
    y = lucid.tensor([5.0, 6.0, 7.0], requires_grad=True)
    lucid.where(lucid.tensor([True, False, True]), x, y).backward(lucid.tensor([1.0, 2.0, 3.0]))
    assert x.grad.tolist() == [1.0, 0.0, 3.0] and y.grad.tolist() == [0.0, 2.0, 0.0]


def test_clamp_gradient_on_the_bounds_as_torch():
    # number bounds: strictly inside only (torch 2.15); tensor bounds: inclusive
    values = [-1.0, 0.0, 0.5, 1.0, 2.0]
    grads = []
    for M in (lucid, torch):
        x = M.tensor(values, requires_grad=True)
        M.clamp(x, 0.0, 1.0).sum().backward()
        grads.append(x.grad.tolist())
    assert grads[0] == [0.0, 0.0, 1.0, 0.0, 0.0]
    if TORCH_VERSION >= (2, 15):  # earlier torch: inclusive bounds
        assert grads[1] == grads[0]


def test_double_backward_through_new_ops():
    x = lucid.tensor([0.3, 0.7], dtype=lucid.float64, requires_grad=True)
    tx = torch.tensor([0.3, 0.7], dtype=torch.float64, requires_grad=True)
    for m, t in ((lucid, x), (torch, tx)):
        (g,) = m.autograd.grad(m.atan(t).sum() + (t ** 3).sum(), t, create_graph=True)
        g.sum().backward()
    torch.testing.assert_close(torch.tensor(x.grad.tolist(), dtype=torch.float64), tx.grad)


def test_relu_gradient_is_one_threshold_backward(device):
    """relu's backward is torch's threshold_backward(g, y, 0) as one op (a NaN result
    passes g, 0 and negatives give 0), itself differentiable in g."""
    values = [-2.0, -0.0, 0.0, 1e-30, 3.0, float("nan"), float("inf")]
    for dtype in ("float64", "float32", "float16", "bfloat16"):
        tx = torch.tensor(values, dtype=getattr(torch, dtype), requires_grad=True)
        lx = to_lucid(tx.detach(), device).requires_grad_()
        gt = torch.arange(1.0, 8.0, dtype=tx.dtype)
        torch.relu(tx).backward(gt)
        ly = lucid.relu(lx)
        lucid._C._op_tally_begin()
        ly.backward(to_lucid(gt, device))
        calls = [c[0] for c in lucid._C._op_tally_end()]
        assert calls == ["_threshold_backward"], calls
        torch.testing.assert_close(torch.tensor(lx.grad.cpu().tolist(), dtype=tx.dtype), tx.grad, equal_nan=True)
    tx = torch.tensor([-1.0, 0.5, 2.0], dtype=torch.float64, requires_grad=True)
    lx = to_lucid(tx.detach(), device).requires_grad_()
    for m, t in ((lucid, lx), (torch, tx)):
        (g,) = m.autograd.grad((m.relu(t) ** 2).sum(), t, create_graph=True)
        (g * g).sum().backward()
    assert lx.grad.cpu().tolist() == tx.grad.tolist()
    with pytest.raises(TypeError):
        lucid._C._threshold_backward(lucid.ones(2), 0.0)  # two tensors, as torch's


def test_inplace_ops_record_gradients():
    for name, args in (("clamp_", (-0.5, 0.5)), ("pow_", (2,)), ("lerp_", None), ("mul_", (3.0,))):
        tx = torch.tensor([0.2, -0.9, 0.4], dtype=torch.float64, requires_grad=True)
        lx = to_lucid(tx.detach()).requires_grad_()
        tout, lout = tx * 1, lx * 1
        if args is None:
            getattr(tout, name)(torch.ones(3, dtype=torch.float64), 0.25)
            getattr(lout, name)(lucid.ones(3, dtype=lucid.float64), 0.25)
        else:
            getattr(tout, name)(*args)
            getattr(lout, name)(*args)
        tout.sum().backward()
        lout.sum().backward()
        assert lx.grad.tolist() == pytest.approx(tx.grad.tolist()), name


# Compositions of table ops whose node is that of their last op, not torch's fused one.
COMPOSITE_NAMES = {"rdiv", "add_alpha", "sub_alpha", "round_decimals", "logit_eps", "div_floor", "floor", "ceil", "round",
                   "trunc"}


@pytest.mark.parametrize("case", [c for c in CASES if c[0] not in COMPOSITE_NAMES], ids=lambda c: c[0])
def test_node_names_match_torch(case):
    _, fn, specs = case
    tins = [t.requires_grad_() for t in _inputs(specs, torch.float64, 1)]
    lins = [to_lucid(t.detach()).requires_grad_() for t in tins]
    assert fn(lucid, *lins).grad_fn.name() == type(fn(torch, *tins).grad_fn).__name__


@pytest.mark.parametrize("act", ["gelu", "silu"])
def test_activation_gradient_of_a_sum_is_the_dense_gradient(act):
    # sum()'s gradient reaches the activation's derivative as an expanded 0-d tensor; the
    # CPU runs the derivative's vector kernel over it as over a dense gradient (the same
    # bits), rather than its scalar functor.
    x = lucid.randn(3000, 7, dtype=lucid.float32, requires_grad=True)
    f = getattr(lucid.nn.functional, act)
    f(x).sum().backward()
    broadcast = x.grad.clone()
    x.grad = None
    f(x).backward(lucid.ones(3000, 7))
    assert broadcast.tolist() == x.grad.tolist()


@pytest.mark.parametrize("dtype", ["float32", "float64", "bfloat16", "float16"])
def test_ops_of_one_broadcast_value_give_the_dense_bits(dtype):
    # Every input one value (an expanded 0-d tensor, a number), or one value a row: the CPU
    # computes the op once a row and fills it; each element must be what a dense input gives.
    d = getattr(lucid, dtype)
    v = lucid.tensor(0.7303, dtype=d)
    column = (lucid.randn(50, 1) * 2).to(d)  # one value a row (a reduction's expanded result)
    cases = [(v.expand(50, 41), lucid.full((50, 41), 0.7303, dtype=d)), (column.expand(50, 41), column.repeat(1, 41))]
    for (wide, dense), op in ((c, op) for c in cases for op in (lambda t: t.exp(), lambda t: t.tanh(), lambda t: t * 0.37, lambda t: 1.5 - t, lambda t: t > 0.5,
               lambda t: lucid.nn.functional.gelu(t), lambda t: lucid.atan2(t, lucid.tensor(0.25, dtype=d).expand(50, 41)),
               lambda t: t != 0)):
        got, want = op(wide), op(dense)
        assert got.shape == want.shape and got.dtype == want.dtype
        assert got.tolist() == want.tolist()
    # gelu's derivative (a vector kernel) of one value, with sum()'s expanded gradient
    x0 = lucid.tensor(-0.4, dtype=d, requires_grad=True)
    e = x0.expand(50, 41)
    e.retain_grad()
    lucid.nn.functional.gelu(e).sum().backward()
    xd = lucid.full((50, 41), -0.4, dtype=d, requires_grad=True)
    lucid.nn.functional.gelu(xd).backward(lucid.ones(50, 41, dtype=d))
    assert e.grad.tolist() == xd.grad.tolist()


@pytest.mark.parametrize("name,kw", [("elu", dict(alpha=0.7)), ("selu", {}), ("elu", {})])
def test_exp_linear_units_first_and_second_derivatives_are_torchs(name, kw):
    # elu / selu take torch's backward formula (elu_backward); its derivative is 0 at x = 0,
    # as torch's elu_double_backward's (which tests x < 0), and the first derivative there
    # takes the negative side's value (x <= 0).
    import numpy as np
    xt = torch.randn(40, generator=torch.Generator().manual_seed(2), dtype=torch.float64) * 2
    xt[0], xt[1] = 0.0, -0.0
    res = []
    for m, x in ((torch, xt.clone()), (lucid, lucid.tensor(xt.numpy()))):
        x.requires_grad_()
        y = getattr(m.nn.functional, name)(x, **kw)
        gx, = m.autograd.grad(y, (x,), m.ones_like(y) * 1.3, create_graph=True)
        h = m.autograd.grad((gx * gx).sum(), x)[0]
        res.append([np.array(v.tolist()) for v in (y, gx, h)])
    for a, b in zip(*res):
        np.testing.assert_allclose(b, a, rtol=1e-12, atol=1e-12)
