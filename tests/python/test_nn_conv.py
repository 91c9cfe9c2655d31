"""Convolutions (functional and modules), unfold/fold against torch: outputs, input /
weight / bias gradients, double backward, float64 gradcheck, bad input. The functional
tests run on every device: on the GPU against torch's CUDA (cuDNN in both; lucid's own
im2col + GEMM route where cuDNN cannot express the geometry). test_gpu_conv.py holds
the GPU-only checks (lucid's CPU against its GPU, exact float32, determinism)."""

import pytest
import torch
import torch.nn.functional as TF

import lucid
import lucid.nn as lnn
import lucid.nn.functional as LF
from lucid.autograd import gradcheck, gradgradcheck
from conftest import to_lucid, to_torch, default_device


def same(l, t, tol=1e-9):
    assert tuple(l.shape) == tuple(t.shape), (tuple(l.shape), tuple(t.shape))
    lt, tt = to_torch(l.detach().cpu()).double(), t.detach().cpu().double()
    assert torch.allclose(lt, tt, atol=tol, rtol=tol), (lt - tt).abs().max()


def tdev(device):
    """torch's name for lucid's device."""
    return "cuda" if device == "gpu" else "cpu"


def leaf(t, device=None):
    device = device or default_device()
    return to_lucid(t.detach().cpu(), device).requires_grad_()


CONV_CASES = [
    # nsp, N, Cin, Cout, spatial, kernel, kwargs
    (1, 2, 3, 4, (9,), (3,), {}),
    (1, 2, 4, 6, (11,), (4,), dict(stride=2, padding=3, dilation=2, groups=2)),
    (2, 2, 3, 5, (7, 8), (3, 3), {}),
    (2, 1, 4, 4, (9, 7), (3, 2), dict(stride=(2, 1), padding=(1, 2), dilation=(1, 2))),
    (2, 2, 6, 4, (8, 8), (3, 3), dict(groups=2, padding=1)),
    (2, 2, 4, 4, (6, 6), (3, 3), dict(groups=4, padding=1)),  # depthwise
    (2, 2, 3, 5, (6, 5), (1, 1), {}),  # pointwise: no im2col
    (2, 2, 3, 5, (6, 5), (3, 3), dict(padding="same")),
    (2, 2, 3, 5, (6, 5), (4, 2), dict(padding="same", dilation=(1, 2))),  # asymmetric 'same'
    (2, 2, 3, 5, (6, 5), (3, 3), dict(padding="valid")),
    (3, 2, 2, 3, (5, 6, 4), (3, 2, 2), dict(stride=(1, 2, 1), padding=(1, 0, 1))),
    (3, 1, 4, 2, (4, 5, 5), (2, 3, 3), dict(groups=2, dilation=(1, 2, 1))),
]


@pytest.mark.parametrize("case", CONV_CASES)
@pytest.mark.parametrize("bias", [True, False])
def test_conv_matches_torch(case, bias, device):
    nsp, n, cin, cout, sp, k, kw = case
    groups = kw.get("groups", 1)
    x = torch.randn(n, cin, *sp, dtype=torch.float64, device=tdev(device), requires_grad=True)
    w = torch.randn(cout, cin // groups, *k, dtype=torch.float64, device=tdev(device), requires_grad=True)
    b = torch.randn(cout, dtype=torch.float64, device=tdev(device), requires_grad=True) if bias else None
    tf = getattr(TF, f"conv{nsp}d")
    lf = getattr(LF, f"conv{nsp}d")
    lx, lw = leaf(x, device), leaf(w, device)
    lb = leaf(b, device) if bias else None
    tout = tf(x, w, b, **kw)
    lout = lf(lx, lw, lb, **kw)
    assert lout.device == lx.device
    same(lout, tout)
    gy = torch.randn_like(tout)
    tout.backward(gy)
    lout.backward(to_lucid(gy.cpu(), device))
    same(lx.grad, x.grad)
    same(lw.grad, w.grad)
    if bias:
        same(lb.grad, b.grad)


TRANSPOSE_CASES = [
    (1, 2, 3, 4, (7,), (3,), {}),
    (1, 2, 4, 6, (5,), (4,), dict(stride=3, padding=1, output_padding=2, dilation=1, groups=2)),
    (2, 2, 3, 5, (4, 5), (3, 3), dict(stride=2, padding=1, output_padding=1)),
    (2, 1, 4, 2, (5, 4), (3, 2), dict(stride=(1, 2), dilation=(2, 1), groups=2)),
    (2, 2, 3, 2, (4, 4), (1, 1), {}),
    (3, 1, 2, 3, (3, 4, 3), (2, 3, 2), dict(stride=(2, 1, 2), padding=(0, 1, 1), output_padding=(1, 0, 1))),
    # output_padding >= stride (< dilation): cuDNN cannot express it, the GPU runs im2col + GEMM
    (2, 2, 4, 2, (4, 5), (3, 2), dict(padding=1, dilation=(2, 3), output_padding=(1, 2), groups=2)),
    (1, 2, 3, 2, (6,), (3,), dict(stride=2, dilation=4, output_padding=3)),
]


@pytest.mark.parametrize("case", TRANSPOSE_CASES)
def test_conv_transpose_matches_torch(case, device):
    nsp, n, cin, cout, sp, k, kw = case
    groups = kw.get("groups", 1)
    x = torch.randn(n, cin, *sp, dtype=torch.float64, device=tdev(device), requires_grad=True)
    w = torch.randn(cin, cout // groups, *k, dtype=torch.float64, device=tdev(device), requires_grad=True)
    b = torch.randn(cout, dtype=torch.float64, device=tdev(device), requires_grad=True)
    lx, lw, lb = leaf(x, device), leaf(w, device), leaf(b, device)
    tout = getattr(TF, f"conv_transpose{nsp}d")(x, w, b, **kw)
    lout = getattr(LF, f"conv_transpose{nsp}d")(lx, lw, lb, **kw)
    assert lout.device == lx.device
    same(lout, tout)
    gy = torch.randn_like(tout)
    tout.backward(gy)
    lout.backward(to_lucid(gy.cpu(), device))
    same(lx.grad, x.grad)
    same(lw.grad, w.grad)
    same(lb.grad, b.grad)


def test_conv_float32_and_unbatched(device):
    x = torch.randn(3, 10, 9)
    w = torch.randn(4, 3, 3, 3)
    same(LF.conv2d(to_lucid(x, device), to_lucid(w, device), padding=1), TF.conv2d(x, w, padding=1), 1e-4)
    assert LF.conv2d(to_lucid(x, device), to_lucid(w, device)).dtype == lucid.float32
    x16 = torch.randn(1, 2, 5, 5).to(torch.bfloat16)
    w16 = torch.randn(2, 2, 3, 3).to(torch.bfloat16)
    out = LF.conv2d(to_lucid(x16, device), to_lucid(w16, device))
    assert out.dtype == lucid.bfloat16
    same(out.float(), TF.conv2d(x16.float(), w16.float()), 0.1)


@pytest.mark.parametrize("fn", [
    lambda x, w, b: LF.conv2d(x, w, b, stride=(2, 1), padding=1, dilation=(1, 2)),
    lambda x, w, b: LF.conv_transpose2d(x, w.transpose(0, 1), b, stride=2, padding=1, output_padding=1),
])
def test_conv_gradcheck_and_double_backward(fn, device):
    x = lucid.randn(2, 3, 5, 6, dtype=lucid.float64, device=device).requires_grad_()
    w = lucid.randn(4, 3, 3, 2, dtype=lucid.float64, device=device).requires_grad_()
    b = lucid.randn(4, dtype=lucid.float64, device=device).requires_grad_()
    assert gradcheck(fn, (x, w, b))
    assert gradgradcheck(fn, (x, w, b))


def test_conv_grouped_gradcheck_1d_3d(device):
    x = lucid.randn(2, 4, 7, dtype=lucid.float64, device=device).requires_grad_()
    w = lucid.randn(6, 2, 3, dtype=lucid.float64, device=device).requires_grad_()
    assert gradcheck(lambda x, w: LF.conv1d(x, w, stride=2, padding=2, dilation=2, groups=2), (x, w))
    x3 = lucid.randn(1, 2, 3, 4, 3, dtype=lucid.float64, device=device).requires_grad_()
    w3 = lucid.randn(2, 2, 2, 2, 2, dtype=lucid.float64, device=device).requires_grad_()
    assert gradcheck(lambda x, w: LF.conv3d(x, w, padding=(1, 0, 1)), (x3, w3))
    assert gradgradcheck(lambda x, w: LF.conv3d(x, w, padding=(1, 0, 1)), (x3, w3))
    # a grouped, dilated, strided 3-d convolution and the transpose the GPU runs as im2col + GEMM
    x4 = lucid.randn(2, 4, 5, 4, 6, dtype=lucid.float64, device=device).requires_grad_()
    w4 = lucid.randn(4, 2, 2, 2, 3, dtype=lucid.float64, device=device).requires_grad_()
    assert gradcheck(lambda x, w: LF.conv3d(x, w, stride=(1, 2, 1), padding=1, dilation=(2, 1, 2), groups=2),
                     (x4, w4))
    x5 = lucid.randn(1, 2, 3, 4, dtype=lucid.float64, device=device).requires_grad_()
    w5 = lucid.randn(2, 3, 2, 3, dtype=lucid.float64, device=device).requires_grad_()
    assert gradgradcheck(lambda x, w: LF.conv_transpose2d(x, w, dilation=3, output_padding=(2, 1)), (x5, w5))


def test_conv_double_backward_matches_torch(device):
    x = torch.randn(2, 3, 6, 5, dtype=torch.float64, device=tdev(device), requires_grad=True)
    w = torch.randn(4, 3, 3, 3, dtype=torch.float64, device=tdev(device), requires_grad=True)
    lx, lw = leaf(x, device), leaf(w, device)
    tg = torch.autograd.grad(TF.conv2d(x, w, padding=1).pow(2).sum(), (x, w), create_graph=True)
    lg = lucid.autograd.grad(LF.conv2d(lx, lw, padding=1).pow(2).sum(), (lx, lw), create_graph=True)
    t2 = torch.autograd.grad(tg[0].sum() + (tg[1] ** 2).sum(), (x, w))
    l2 = lucid.autograd.grad(lg[0].sum() + (lg[1] ** 2).sum(), (lx, lw))
    same(l2[0], t2[0], 1e-8)
    same(l2[1], t2[1], 1e-8)


# ---- modules ------------------------------------------------------------------------

MODULE_CASES = [
    ("Conv1d", (3, 4, 3), dict(stride=2, padding=1), (2, 3, 10)),
    ("Conv2d", (3, 6, (3, 2)), dict(padding=(1, 1), groups=3, bias=False), (2, 3, 7, 6)),
    ("Conv2d", (2, 4, 3), dict(padding=1, padding_mode="reflect"), (2, 2, 6, 5)),
    ("Conv2d", (2, 4, 3), dict(padding=(2, 1), padding_mode="replicate", dilation=2), (1, 2, 6, 5)),
    ("Conv2d", (2, 4, 3), dict(padding=1, padding_mode="circular", stride=2), (2, 2, 6, 5)),
    ("Conv2d", (2, 4, 4), dict(padding="same", padding_mode="reflect"), (2, 2, 6, 7)),
    ("Conv2d", (2, 4, 4), dict(padding="same"), (2, 2, 6, 7)),
    ("Conv3d", (2, 2, 2), dict(padding=1, padding_mode="circular"), (1, 2, 3, 4, 3)),
    ("ConvTranspose1d", (3, 4, 3), dict(stride=2, output_padding=1), (2, 3, 5)),
    ("ConvTranspose2d", (4, 2, 3), dict(stride=2, padding=1, groups=2, dilation=1), (2, 4, 4, 3)),
    ("ConvTranspose3d", (2, 3, 2), dict(stride=(1, 2, 1), bias=False), (1, 2, 3, 2, 3)),
]


@pytest.mark.parametrize("name,args,kw,shape", MODULE_CASES)
def test_conv_modules_match_torch(name, args, kw, shape):
    tm = getattr(torch.nn, name)(*args, **kw).double()
    lm = getattr(lnn, name)(*args, **kw).double()
    assert repr(lm) == repr(tm)
    assert [(k, tuple(v.shape)) for k, v in lm.state_dict().items()] == \
        [(k, tuple(v.shape)) for k, v in tm.state_dict().items()]
    lm.load_state_dict({k: to_lucid(v) for k, v in tm.state_dict().items()})
    x = torch.randn(*shape, dtype=torch.float64, requires_grad=True)
    lx = leaf(x)
    tout, lout = tm(x), lm(lx)
    same(lout, tout)
    gy = torch.randn_like(tout)
    tout.backward(gy)
    lout.backward(to_lucid(gy))
    same(lx.grad, x.grad)
    for (ln, lp), (tn, tp) in zip(lm.named_parameters(), tm.named_parameters()):
        assert ln == tn
        same(lp.grad, tp.grad)


def test_conv_transpose_output_size():
    tm = torch.nn.ConvTranspose2d(2, 3, 3, stride=2).double()
    lm = lnn.ConvTranspose2d(2, 3, 3, stride=2).double()
    lm.load_state_dict({k: to_lucid(v) for k, v in tm.state_dict().items()})
    x = torch.randn(1, 2, 4, 4, dtype=torch.float64)
    same(lm(to_lucid(x), output_size=[10, 10]), tm(x, output_size=[10, 10]))
    with pytest.raises(ValueError):
        lm(to_lucid(x), output_size=[12, 12])


def test_conv_init_statistics():
    lm = lnn.Conv2d(16, 32, 3)
    bound = 1 / (16 * 9) ** 0.5
    assert float(lm.weight.abs().max()) <= bound + 1e-6
    assert float(lm.bias.abs().max()) <= bound + 1e-6
    assert float(lm.weight.std()) > bound / 3


# ---- unfold / fold ----------------------------------------------------------------------

@pytest.mark.parametrize("kw", [dict(kernel_size=2), dict(kernel_size=(2, 3), dilation=(2, 1), padding=1, stride=(1, 2)),
                                dict(kernel_size=3, padding=1, stride=2)])
def test_unfold_fold_match_torch(kw, device):
    x = torch.randn(2, 3, 7, 6, dtype=torch.float64, device=tdev(device), requires_grad=True)
    lx = leaf(x, device)
    tu, lu = TF.unfold(x, **kw), LF.unfold(lx, **kw)
    assert lu.device == lx.device
    same(lu, tu)
    g = torch.randn_like(tu)
    tu.backward(g)
    lu.backward(to_lucid(g.cpu(), device))
    same(lx.grad, x.grad)
    c = torch.randn(*tu.shape, dtype=torch.float64, device=tdev(device), requires_grad=True)
    lc = leaf(c, device)
    tf, lf = TF.fold(c, (7, 6), **kw), LF.fold(lc, (7, 6), **kw)
    same(lf, tf)
    g2 = torch.randn_like(tf)
    tf.backward(g2)
    lf.backward(to_lucid(g2.cpu(), device))
    same(lc.grad, c.grad)
    assert repr(lnn.Unfold(**kw)) == repr(torch.nn.Unfold(**kw))
    assert repr(lnn.Fold((7, 6), **kw)) == repr(torch.nn.Fold((7, 6), **kw))
    same(lnn.Unfold(**kw)(to_lucid(x.detach()[0].cpu(), device)), torch.nn.Unfold(**kw)(x.detach()[0]))
    assert gradcheck(lambda t: LF.fold(LF.unfold(t, **kw) * 2, (7, 6), **kw),
                     (lucid.randn(1, 2, 7, 6, dtype=lucid.float64, device=device).requires_grad_(),))


def test_unfold_fold_bad_input():
    with pytest.raises(NotImplementedError):
        LF.unfold(lucid.randn(2, 3), 2)
    with pytest.raises(RuntimeError):
        LF.unfold(lucid.randn(1, 1, 2, 2), 3)
    with pytest.raises(RuntimeError):
        LF.fold(lucid.randn(1, 5, 4), (3, 3), 2)  # 5 not divisible by 4
    with pytest.raises(RuntimeError):
        LF.fold(lucid.randn(1, 4, 5), (3, 3), 2)  # 4 blocks expected


# ---- bad input ----------------------------------------------------------------------------

def test_conv_bad_input():
    w = lucid.randn(4, 3, 3, 3)
    with pytest.raises(RuntimeError, match="Expected 3D \\(unbatched\\) or 4D \\(batched\\) input to conv2d"):
        LF.conv2d(lucid.randn(2, 3), w)
    with pytest.raises(RuntimeError, match="expected a 4-D weight"):
        LF.conv2d(lucid.randn(1, 3, 8, 8), lucid.randn(4, 3, 3))
    with pytest.raises(RuntimeError, match="expected a 3-D weight"):
        LF.conv_transpose1d(lucid.randn(1, 3, 8), lucid.randn(3, 4, 3, 3))
    with pytest.raises(RuntimeError, match="to have 3 channels, but got 5 channels instead"):
        LF.conv2d(lucid.randn(1, 5, 8, 8), w)
    with pytest.raises(RuntimeError, match="Kernel size can't be greater than actual input size"):
        LF.conv2d(lucid.randn(1, 3, 2, 8), w)
    with pytest.raises(RuntimeError, match="expected weight to be divisible by 2"):
        LF.conv2d(lucid.randn(1, 6, 8, 8), lucid.randn(3, 3, 3, 3), groups=2)
    with pytest.raises(RuntimeError, match="non-positive stride"):
        LF.conv2d(lucid.randn(1, 3, 8, 8), w, stride=0)
    with pytest.raises(RuntimeError, match="negative padding"):
        LF.conv2d(lucid.randn(1, 3, 8, 8), w, padding=-1)
    with pytest.raises(RuntimeError, match="strided"):
        LF.conv2d(lucid.randn(1, 3, 8, 8), w, padding="same", stride=2)
    with pytest.raises(RuntimeError, match="bias"):
        LF.conv2d(lucid.randn(1, 3, 8, 8), w, lucid.randn(5))
    with pytest.raises(RuntimeError):
        LF.conv2d(lucid.randn(1, 3, 8, 8, dtype=lucid.float64), w)
    with pytest.raises(NotImplementedError, match="int64"):  # (torch computes integer convolutions; lucid not yet)
        LF.conv2d(lucid.ones(1, 3, 8, 8, dtype=lucid.int64), lucid.ones(4, 3, 3, 3, dtype=lucid.int64))
    with pytest.raises(RuntimeError, match="output padding must be smaller"):
        LF.conv_transpose2d(lucid.randn(1, 4, 3, 3), lucid.randn(4, 2, 3, 3), output_padding=1)
    with pytest.raises(RuntimeError, match="Given transposed=1"):
        LF.conv_transpose2d(lucid.randn(1, 3, 3, 3), lucid.randn(4, 2, 3, 3))
    with pytest.raises(ValueError, match="in_channels must be divisible by groups"):
        lnn.Conv2d(3, 4, 3, groups=2)
    with pytest.raises(ValueError, match="out_channels must be divisible by groups"):
        lnn.Conv2d(4, 3, 3, groups=2)
    with pytest.raises(ValueError, match="padding_mode"):
        lnn.Conv2d(4, 4, 3, padding_mode="mirror")
    with pytest.raises(ValueError, match="strided"):
        lnn.Conv2d(4, 4, 3, padding="same", stride=2)
    with pytest.raises(ValueError, match="Invalid padding string"):
        lnn.Conv1d(4, 4, 3, padding="full")
    with pytest.raises(ValueError, match="zeros"):
        lnn.ConvTranspose2d(4, 4, 3, padding_mode="reflect")


@pytest.mark.parametrize("which", ["input", "weight", "bias"])
def test_conv_partial_requires_grad(which, device):
    x = torch.randn(2, 4, 6, 5, dtype=torch.float64, requires_grad=which == "input")
    w = torch.randn(6, 2, 3, 3, dtype=torch.float64, requires_grad=which == "weight")
    b = torch.randn(6, dtype=torch.float64, requires_grad=which == "bias")
    lx, lw, lb = (to_lucid(t.detach(), device).requires_grad_(t.requires_grad) for t in (x, w, b))
    tout = TF.conv2d(x, w, b, padding=1, groups=2)
    lout = LF.conv2d(lx, lw, lb, padding=1, groups=2)
    g = torch.randn_like(tout)
    tout.backward(g.permute(0, 1, 3, 2).contiguous().permute(0, 1, 3, 2))  # a strided gradient
    lout.backward(to_lucid(g, device).permute(0, 1, 3, 2).contiguous().permute(0, 1, 3, 2))
    for lt, tt in ((lx, x), (lw, w), (lb, b)):
        if tt.requires_grad:
            same(lt.grad, tt.grad)
        else:
            assert lt.grad is None


def test_conv_empty_batch_and_large_small_paths(device):
    x = lucid.randn(0, 3, 5, 5, device=device).requires_grad_()
    w = lucid.randn(4, 3, 3, 3, device=device).requires_grad_()
    out = LF.conv2d(x, w)
    assert tuple(out.shape) == (0, 4, 3, 3)
    out.sum().backward()
    assert tuple(x.grad.shape) == (0, 3, 5, 5) and float(w.grad.abs().sum()) == 0.0
    # a convolution big enough for the BLAS-threaded path and one in the split (small product) path
    for shape, wshape, groups in [((2, 32, 20, 20), (32, 32, 3, 3), 1), ((3, 8, 12, 12), (8, 1, 3, 3), 8)]:
        tx = torch.randn(*shape, requires_grad=True)
        tw = torch.randn(*wshape, requires_grad=True)
        lx, lw = leaf(tx, device), leaf(tw, device)
        tout, lout = TF.conv2d(tx, tw, padding=1, groups=groups), LF.conv2d(lx, lw, padding=1, groups=groups)
        same(lout, tout, 1e-4)
        tout.sum().backward()
        lout.sum().backward()
        same(lx.grad, tx.grad, 1e-4)
        same(lw.grad, tw.grad, 1e-3)
