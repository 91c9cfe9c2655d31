"""Memory formats (lucid.channels_last and kin) against torch's: the layouts that
contiguous / clone / to / empty / *_like / Module.to give, is_contiguous, the errors,
and channels-last convolutions (values, result layouts and gradients, gradients'
layouts included) on every device; on the GPU cuDNN runs them without layout copies."""

import pickle

import numpy as np
import pytest
import torch

import lucid
import lucid.nn.functional as LF
from conftest import to_lucid

FORMATS = [("contiguous_format", 4), ("channels_last", 4), ("channels_last_3d", 5)]


def _fmt(m, name):
    return getattr(m, name)


def _torch_device(device):
    return "cuda" if device == "gpu" else "cpu"


def _pair(shape, device, seed=0):
    t = torch.randn(*shape, generator=torch.Generator().manual_seed(seed))
    return to_lucid(t, device), t.to(_torch_device(device))


@pytest.mark.parametrize("name,rank", FORMATS)
def test_layouts_match_torch(name, rank, device):
    shape = (2, 3, 4, 5) if rank == 4 else (2, 3, 2, 4, 5)
    lx, tx = _pair(shape, device)
    lf, tf = _fmt(lucid, name), _fmt(torch, name)
    ly, ty = lx.contiguous(memory_format=lf), tx.contiguous(memory_format=tf)
    assert ly.stride() == ty.stride()
    np.testing.assert_array_equal(ly.cpu().numpy(), ty.cpu().numpy())
    for other in ("contiguous_format", "channels_last", "channels_last_3d"):
        assert ly.is_contiguous(memory_format=_fmt(lucid, other)) == \
            ty.is_contiguous(memory_format=_fmt(torch, other)), other
    assert ly.is_contiguous() == ty.is_contiguous()
    assert lx.clone(memory_format=lf).stride() == tx.clone(memory_format=tf).stride()
    assert ly.clone().stride() == ty.clone().stride()  # preserve_format
    assert ly.clone(memory_format=lucid.contiguous_format).stride() == \
        ty.clone(memory_format=torch.contiguous_format).stride()
    assert lx.to(memory_format=lf).stride() == tx.to(memory_format=tf).stride()
    assert lx.to(lucid.float64, memory_format=lf).stride() == tx.to(torch.float64, memory_format=tf).stride()
    for fn in ("empty_like", "zeros_like", "ones_like"):
        assert getattr(lucid, fn)(ly).stride() == getattr(torch, fn)(ty).stride(), fn
        assert getattr(lucid, fn)(lx, memory_format=lf).stride() == getattr(torch, fn)(tx, memory_format=tf).stride()
    assert lucid.full_like(lx, 2.0, memory_format=lf).stride() == torch.full_like(tx, 2.0, memory_format=tf).stride()
    assert lucid.empty(*shape, memory_format=lf).stride() == torch.empty(*shape, memory_format=tf).stride()
    assert lucid.zeros_like(lx, memory_format=lf).sum().item() == 0


def test_already_in_format_is_no_copy(device):
    x = lucid.randn(2, 3, 4, 5, device=device).contiguous(memory_format=lucid.channels_last)
    assert x.contiguous(memory_format=lucid.channels_last) is x
    assert x.to(memory_format=lucid.channels_last) is x
    assert x.contiguous(memory_format=lucid.preserve_format) is x


def test_size_one_dims_are_both_layouts():
    lx, tx = _pair((2, 1, 1, 1), "cpu")
    for name in ("contiguous_format", "channels_last"):
        assert lx.is_contiguous(memory_format=_fmt(lucid, name)) == tx.is_contiguous(memory_format=_fmt(torch, name))


def test_format_objects():
    assert repr(lucid.channels_last) == "lucid.channels_last"
    assert isinstance(lucid.preserve_format, lucid.memory_format)
    for f in (lucid.contiguous_format, lucid.channels_last, lucid.channels_last_3d, lucid.preserve_format):
        assert pickle.loads(pickle.dumps(f)) is f


def test_errors():
    x3 = lucid.randn(2, 3, 4)
    with pytest.raises(RuntimeError, match="required rank 4 tensor to use channels_last format"):
        x3.contiguous(memory_format=lucid.channels_last)
    with pytest.raises(RuntimeError, match="required rank 5 tensor to use channels_last_3d format"):
        lucid.randn(2, 3, 4, 5).to(memory_format=lucid.channels_last_3d)
    with pytest.raises(TypeError, match="memory_format"):
        lucid.randn(2, 3, 4, 5).contiguous(memory_format="channels_last")
    with pytest.raises(RuntimeError, match="preserve memory format"):
        lucid.empty(2, 3, 4, 5, memory_format=lucid.preserve_format)
    assert not x3.is_contiguous(memory_format=lucid.channels_last)  # (torch: False for a wrong rank)


def test_gradient_flows_through_format_change(device):
    lx, tx = _pair((2, 3, 4, 5), device)
    lx.requires_grad_(), tx.requires_grad_()
    (lx.contiguous(memory_format=lucid.channels_last) * 2).sum().backward()
    (tx.contiguous(memory_format=torch.channels_last) * 2).sum().backward()
    np.testing.assert_array_equal(lx.grad.cpu().numpy(), tx.grad.cpu().numpy())


def test_module_to_channels_last(device):
    torch.manual_seed(0)
    tm = torch.nn.Sequential(torch.nn.Conv2d(3, 8, 3, padding=1), torch.nn.BatchNorm2d(8), torch.nn.ReLU(),
                             torch.nn.Conv2d(8, 4, 3))
    lm = lucid.nn.Sequential(lucid.nn.Conv2d(3, 8, 3, padding=1), lucid.nn.BatchNorm2d(8), lucid.nn.ReLU(),
                             lucid.nn.Conv2d(8, 4, 3))
    lm.load_state_dict({k: to_lucid(v) for k, v in tm.state_dict().items()})
    tm = tm.to(_torch_device(device), memory_format=torch.channels_last)
    lm = lm.to(device, memory_format=lucid.channels_last)
    for (name, lp), tp in zip(lm.named_parameters(), tm.parameters()):
        assert lp.stride() == tp.stride(), name
        assert isinstance(lp, lucid.nn.Parameter) and lp.is_leaf
    lx, tx = _pair((2, 3, 8, 8), device, seed=1)
    lx = lx.contiguous(memory_format=lucid.channels_last)
    tx = tx.contiguous(memory_format=torch.channels_last)
    with torch.backends.cudnn.flags(enabled=True, allow_tf32=False):  # float32 exact, as lucid's
        lo, to = lm(lx), tm(tx)
        np.testing.assert_allclose(lo.detach().cpu().numpy(), to.detach().cpu().numpy(), rtol=1e-4, atol=1e-4)
        lo.square().sum().backward()
        to.square().sum().backward()
    for (name, lp), tp in zip(lm.named_parameters(), tm.parameters()):
        np.testing.assert_allclose(lp.grad.cpu().numpy(), tp.grad.cpu().numpy(), rtol=1e-3, atol=1e-3, err_msg=name)


CONVS = [
    ("conv2d", (2, 4, 9, 7), (6, 4, 3, 3), dict(padding=1, stride=2)),
    ("conv2d", (2, 4, 9, 7), (8, 2, 3, 1), dict(groups=2, dilation=(2, 1))),
    ("conv_transpose2d", (2, 4, 5, 6), (4, 3, 3, 3), dict(stride=2, padding=1, output_padding=1)),
    ("conv3d", (2, 3, 4, 5, 6), (4, 3, 3, 2, 3), dict(padding=1)),
]


@pytest.mark.parametrize("name,xs,ws,kw", CONVS, ids=[f"{c[0]}-{i}" for i, c in enumerate(CONVS)])
@pytest.mark.parametrize("which", ["input", "weight", "both"])
def test_channels_last_convolutions(name, xs, ws, kw, which, device):
    fmt_l = lucid.channels_last if len(xs) == 4 else lucid.channels_last_3d
    fmt_t = torch.channels_last if len(xs) == 4 else torch.channels_last_3d
    lx, tx = _pair(xs, device, seed=2)
    lw, tw = _pair(ws, device, seed=3)
    bias_n = ws[1] * kw.get("groups", 1) if "transpose" in name else ws[0]
    lb, tb = _pair((bias_n,), device, seed=4)
    if which in ("input", "both"):
        lx, tx = lx.contiguous(memory_format=fmt_l), tx.contiguous(memory_format=fmt_t)
    if which in ("weight", "both"):
        lw, tw = lw.contiguous(memory_format=fmt_l), tw.contiguous(memory_format=fmt_t)
    for t in (lx, tx, lw, tw, lb, tb):
        t.requires_grad_()
    with torch.backends.cudnn.flags(enabled=True, allow_tf32=False):  # (flags' defaults disable cuDNN)
        to = getattr(torch.nn.functional, name)(tx, tw, tb, **kw)
        lo = getattr(LF, name)(lx, lw, lb, **kw)
        assert lo.stride() == to.stride()
        np.testing.assert_allclose(lo.detach().cpu().numpy(), to.detach().cpu().numpy(), rtol=1e-4, atol=1e-4)
        g = torch.randn(tuple(to.shape), generator=torch.Generator().manual_seed(5))
        tgrads = torch.autograd.grad(to, (tx, tw, tb), g.to(tx.device))
        lgrads = lucid.autograd.grad(lo, (lx, lw, lb), to_lucid(g, device))
    # (the gradients as computed: a leaf's accumulated .grad is contiguous in lucid, where
    # torch lays it out as its leaf)
    for lt, tt, what in zip(lgrads, tgrads, ("input", "weight", "bias")):
        np.testing.assert_allclose(lt.cpu().numpy(), tt.cpu().numpy(), rtol=1e-3, atol=1e-3, err_msg=what)
        assert lt.stride() == tt.stride(), what


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_channels_last_16bit_convolution(dtype, device):
    lx, tx = _pair((4, 8, 10, 10), device, seed=6)
    lw, tw = _pair((16, 8, 3, 3), device, seed=7)
    ld, td = getattr(lucid, dtype), getattr(torch, dtype)
    lx = lx.to(ld, memory_format=lucid.channels_last)
    tx = tx.to(td, memory_format=torch.channels_last)
    lw, tw = lw.to(ld), tw.to(td)
    lo, to = LF.conv2d(lx, lw, padding=1), torch.nn.functional.conv2d(tx.float(), tw.float(), padding=1)
    assert lo.dtype == ld and lo.is_contiguous(memory_format=lucid.channels_last)
    np.testing.assert_allclose(lo.float().cpu().numpy(), to.cpu().numpy(), rtol=2e-2, atol=5e-2)


def test_float64_channels_last_convolution_layout(device):
    # torch's cuDNN path keeps float64 convolutions contiguous (no NHWC kernels for
    # double), its CPU path channels-last; lucid lays them out alike
    lx, tx = _pair((2, 4, 6, 6), device, seed=8)
    lx, tx = lx.double().contiguous(memory_format=lucid.channels_last), \
        tx.double().contiguous(memory_format=torch.channels_last)
    lw, tw = _pair((3, 4, 3, 3), device, seed=9)
    with torch.backends.cudnn.flags(enabled=True, allow_tf32=False):
        to = torch.nn.functional.conv2d(tx, tw.double())
    lo = LF.conv2d(lx, lw.double())
    assert lo.stride() == to.stride()
    np.testing.assert_allclose(lo.cpu().numpy(), to.cpu().numpy(), rtol=1e-10, atol=1e-10)
