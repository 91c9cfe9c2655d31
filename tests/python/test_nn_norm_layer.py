"""layer_norm / rms_norm (one fused engine op) against torch: outputs, input and
parameter gradients, float32 and float64, double backward, gradcheck, bad input. Tests
taking `device` run on the GPU too (csrc/backend/cuda/norm_rows.cu), against torch on
"cuda"."""

import pytest
import torch

import lucid
import lucid.nn as lnn
import lucid.nn.functional as LF
import torch.nn.functional as TF
from conftest import to_lucid, to_torch, default_device


def tdev(device):
    """torch's name for lucid's device."""
    return "cuda" if device == "gpu" else "cpu"


def same(l, t, tol=1e-9):
    assert tuple(l.shape) == tuple(t.shape)
    t = t.detach().cpu()
    assert torch.allclose(to_torch(l.detach()).double(), t.double(), atol=tol, rtol=tol), (l, t)


def leaf(t, device=None):
    device = device or default_device()
    return to_lucid(t.detach(), device).requires_grad_()


# (5, 1500): rows past 1024 elements take a block each on the GPU (a warp below)
@pytest.mark.parametrize("shape,norm", [((4, 7), (7,)), ((2, 3, 5), (5,)), ((2, 3, 4), (3, 4)), ((3, 1), (1,)),
                                        ((0, 5), (5,)), ((6,), (6,)), ((5, 1500), (1500,)), ((3, 0), (0,))])
@pytest.mark.parametrize("affine", ["both", "weight", "bias", "none"])
@pytest.mark.parametrize("dtype,tol", [(torch.float64, 1e-10), (torch.float32, 2e-5)])
def test_layer_norm_matches_torch(shape, norm, affine, dtype, tol, device):
    # Seeded: with one normalised element (shape (3, 1)) the variance is 0 and the
    # rounding noise of both sides is scaled by 1/sqrt(eps) ~ 316, which some random
    # draws pushed past the float32 tolerance (seen once on the GPU machine's torch).
    torch.manual_seed(len(shape) * 10 + len(norm))
    td = tdev(device)
    x = (torch.randn(*shape, dtype=dtype) * 3 + 1).to(td).requires_grad_()
    w = torch.randn(*norm, dtype=dtype).to(td).requires_grad_() if affine in ("both", "weight") else None
    b = torch.randn(*norm, dtype=dtype).to(td).requires_grad_() if affine in ("both", "bias") else None
    lx = leaf(x, device)
    lw, lb = leaf(w, device) if w is not None else None, leaf(b, device) if b is not None else None
    t = TF.layer_norm(x, norm, w, b, 1e-5)
    l = LF.layer_norm(lx, norm, lw, lb, 1e-5)
    same(l, t, tol)
    g = torch.randn(*shape, dtype=dtype)
    t.backward(g.to(td))
    l.backward(to_lucid(g, device))
    same(lx.grad, x.grad, tol * 10)
    if w is not None:
        same(lw.grad, w.grad, tol * 10)
    if b is not None:
        same(lb.grad, b.grad, tol * 10)


@pytest.mark.parametrize("eps", [None, 1e-3])
@pytest.mark.parametrize("affine", [True, False])
@pytest.mark.parametrize("dtype,tol", [(torch.float64, 1e-10), (torch.float32, 2e-5)])
def test_rms_norm_matches_torch(eps, affine, dtype, tol, device):
    x = torch.randn(3, 4, 6, dtype=dtype).to(tdev(device)).requires_grad_()
    w = torch.randn(4, 6, dtype=dtype).to(tdev(device)).requires_grad_() if affine else None
    lx, lw = leaf(x, device), leaf(w, device) if affine else None
    t = TF.rms_norm(x, (4, 6), w, eps)
    l = LF.rms_norm(lx, (4, 6), lw, eps)
    same(l, t, tol)
    t.sum().backward()
    (l * 1.0).sum().backward()
    same(lx.grad, x.grad, tol * 10)
    if affine:
        same(lw.grad, w.grad, tol * 10)


@pytest.mark.parametrize("dt,tol", [(torch.float16, 2e-3), (torch.bfloat16, 2e-2)])
def test_layer_norm_half_input_keeps_dtype(dt, tol, device):
    x = torch.randn(4, 8).to(dt)
    w, b = torch.randn(8).to(dt), torch.randn(8).to(dt)
    lx = leaf(x, device)
    l = LF.layer_norm(lx, (8,), to_lucid(w, device), to_lucid(b, device))
    assert l.dtype == lucid_dt(dt)
    t = TF.layer_norm(x.float(), (8,), w.float(), b.float())
    same(l, t, 4 * tol)
    g = torch.randn(4, 8).to(dt)
    l.backward(to_lucid(g, device))
    assert lx.grad.dtype == lucid_dt(dt) and lx.grad.device == lx.device
    xf = x.float().requires_grad_()
    TF.layer_norm(xf, (8,), w.float(), b.float()).backward(g.float())
    same(lx.grad, xf.grad, 8 * tol)


def lucid_dt(dt):
    return getattr(lucid, str(dt).split(".")[-1])


def test_layer_norm_non_contiguous_input(device):
    x = torch.randn(6, 5, dtype=torch.float64).t()
    same(LF.layer_norm(to_lucid(x.t().contiguous(), device).t(), (6,)), TF.layer_norm(x, (6,)))


@pytest.mark.parametrize("rms", [False, True])
def test_norm_gradcheck_and_double_backward(rms, device):
    x = lucid.randn(3, 5, dtype=lucid.float64, requires_grad=True, device=device)
    w = lucid.randn(5, dtype=lucid.float64, requires_grad=True, device=device)
    b = lucid.randn(5, dtype=lucid.float64, requires_grad=True, device=device)
    if rms:
        fn = lambda x, w: LF.rms_norm(x, (5,), w, 1e-6)  # noqa: E731
        args = (x, w)
    else:
        fn = lambda x, w, b: LF.layer_norm(x, (5,), w, b)  # noqa: E731
        args = (x, w, b)
    assert lucid.autograd.gradcheck(fn, args)
    assert lucid.autograd.gradgradcheck(fn, args)
    # double backward against torch
    tx = to_torch(x.detach()).to(tdev(device)).requires_grad_()
    tw = to_torch(w.detach()).to(tdev(device)).requires_grad_()
    targs = (tx, tw) if rms else (tx, tw, to_torch(b.detach()).to(tdev(device)))
    tfn = (lambda x, w: TF.rms_norm(x, (5,), w, 1e-6)) if rms else (lambda x, w, b: TF.layer_norm(x, (5,), w, b))
    tgx, = torch.autograd.grad((tfn(*targs) ** 2).sum(), tx, create_graph=True)
    (tgx ** 2).sum().backward()
    lgx, = lucid.autograd.grad((fn(*args) ** 2).sum(), x, create_graph=True)
    (lgx ** 2).sum().backward()
    same(lgx, tgx, 1e-9)
    same(x.grad, tx.grad, 1e-8)
    same(w.grad, tw.grad, 1e-8)


@pytest.mark.parametrize("kw", [{}, {"elementwise_affine": False}, {"bias": False}, {"eps": 1e-3}])
def test_layernorm_module_matches_torch(kw):
    tm = torch.nn.LayerNorm((3, 4), **kw).double()
    lm = lnn.LayerNorm((3, 4), **kw).double()
    if kw.get("elementwise_affine", True):
        with torch.no_grad():
            tm.weight.uniform_(0.5, 1.5)
            if tm.bias is not None:
                tm.bias.uniform_(-1, 1)
    lm.load_state_dict({k: to_lucid(v) for k, v in tm.state_dict().items()})
    assert set(lm.state_dict()) == set(tm.state_dict())
    # (older torch releases leave bias= out of the repr)
    assert repr(lm) == repr(tm) or repr(lm).rsplit(", bias=", 1)[0] + ")" == repr(tm)
    x = torch.randn(2, 3, 4, dtype=torch.float64)
    same(lm(to_lucid(x)), tm(x))


def test_rmsnorm_module_matches_torch():
    tm = torch.nn.RMSNorm(6).double()
    lm = lnn.RMSNorm(6).double()
    assert repr(lm) == repr(tm)
    lm.load_state_dict({k: to_lucid(v) for k, v in tm.state_dict().items()})
    x = torch.randn(2, 6, dtype=torch.float64)
    same(lm(to_lucid(x)), tm(x))


@pytest.mark.parametrize("rms", [False, True])
def test_cpu_results_do_not_depend_on_threads(rms):
    """The rows' statistics and dx are per row; dw and db are column sums over the rows
    in order (csrc/backend/cpu/norm_kernels.cpp), so every thread count gives the same
    bits. (The weight's gradient used to be merged from the threads' partial sums in
    whichever order they finished.)"""
    torch.manual_seed(5)
    x, w, b, g = (torch.randn(512, 300) * 2 + 1, torch.randn(300), torch.randn(300), torch.randn(512, 300))
    before = lucid.get_num_threads()
    outs = []
    try:
        for threads in (1, 2, 3):
            lucid.set_num_threads(threads)
            lx, lw, lb = leaf(x), leaf(w), leaf(b)
            y = LF.rms_norm(lx, (300,), lw) if rms else LF.layer_norm(lx, (300,), lw, lb)
            y.backward(to_lucid(g))
            grads = [lx.grad, lw.grad] + ([] if rms else [lb.grad])
            outs.append([to_torch(t.detach()) for t in [y] + grads])
    finally:
        lucid.set_num_threads(before)
    for other in outs[1:]:
        assert all(torch.equal(a, c) for a, c in zip(outs[0], other))


def test_norm_bad_input():
    x = lucid.randn(2, 3)
    with pytest.raises(RuntimeError, match="normalized_shape"):
        LF.layer_norm(x, (4,))
    with pytest.raises(RuntimeError, match="weight"):
        LF.layer_norm(x, (3,), lucid.ones(4))
    with pytest.raises(RuntimeError, match="normalized_shape"):
        LF.rms_norm(x, (2, 3, 4))
    with pytest.raises(RuntimeError):
        LF.layer_norm(lucid.ones(2, 3, dtype=lucid.int64), (3,))
