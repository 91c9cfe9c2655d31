"""Pooling (max, avg, adaptive, lp, unpool; functional and modules) against torch:
values, indices, input gradients, float64 gradcheck, bad input. Tests taking `device`
also run on the GPU, against torch's CUDA and lucid's CPU (test_gpu_pool.py has the
GPU-only cases)."""

import pytest
import torch
import torch.nn.functional as TF

import lucid
import lucid.nn as lnn
import lucid.nn.functional as LF
from lucid.autograd import gradcheck, gradgradcheck
from conftest import default_device, raises_by_sync, to_lucid, to_torch


def same(l, t, tol=1e-9):
    assert tuple(l.shape) == tuple(t.shape), (tuple(l.shape), tuple(t.shape))
    assert torch.allclose(to_torch(l.detach()).double(), t.detach().cpu().double(), atol=tol, rtol=tol), (l, t)


def torch_device(device):
    return "cuda" if device == "gpu" else "cpu"


def leaf(t, device=None):
    device = device or default_device()
    return to_lucid(t.detach().cpu(), device).requires_grad_()


def check(lfn, tfn, shape, tol=1e-9, device=None):
    # distinct values so max ties cannot pick different elements
    device = device or default_device()
    x = (torch.randperm(torch.Size(shape).numel(), dtype=torch.float64) / 7).reshape(shape)
    x = x.to(torch_device(device)).requires_grad_()
    tout = tfn(x)
    tvals = tout[0] if isinstance(tout, tuple) else tout
    g = torch.randn(tvals.shape, dtype=tvals.dtype)
    tvals.backward(g.to(tvals.device))
    lx = leaf(x, device)
    lout = lfn(lx)
    lvals = lout[0] if isinstance(lout, tuple) else lout
    if isinstance(tout, tuple):
        assert to_torch(lout[1]).tolist() == tout[1].cpu().tolist()
        assert lout[1].dtype == lucid.int64
    same(lvals, tvals, tol)
    lvals.backward(to_lucid(g, device))
    assert lvals.device == lx.device and lx.grad.device == lx.device
    same(lx.grad, x.grad, tol)
    if device != "cpu":  # and against lucid's CPU on the same input
        cx = leaf(x, "cpu")
        cout = lfn(cx)
        cvals = cout[0] if isinstance(cout, tuple) else cout
        if isinstance(cout, tuple):
            assert to_torch(cout[1]).tolist() == to_torch(lout[1]).tolist()
        same(lvals, to_torch(cvals.detach()), tol)
        cvals.backward(to_lucid(g, "cpu"))
        same(lx.grad, to_torch(cx.grad), tol)


MAX_CASES = [
    (1, (2, 3, 11), dict(kernel_size=3)),
    (1, (3, 10), dict(kernel_size=3, stride=2, padding=1, dilation=2, ceil_mode=True)),
    (2, (2, 3, 9, 8), dict(kernel_size=2)),
    (2, (2, 2, 9, 8), dict(kernel_size=(3, 2), stride=(2, 1), padding=(1, 1))),
    (2, (1, 2, 10, 9), dict(kernel_size=3, stride=2, dilation=(2, 1), ceil_mode=True)),
    (2, (2, 7, 7), dict(kernel_size=3, stride=2, padding=1, ceil_mode=True)),
    (3, (1, 2, 5, 6, 7), dict(kernel_size=2, stride=(1, 2, 2), padding=(1, 0, 1))),
    (3, (2, 4, 5, 5), dict(kernel_size=3, stride=2, ceil_mode=True, dilation=1)),
]


@pytest.mark.parametrize("nsp,shape,kw", MAX_CASES)
def test_max_pool_matches_torch(nsp, shape, kw, device):
    name = f"max_pool{nsp}d"
    check(lambda x: getattr(LF, name)(x, **kw, return_indices=True),
          lambda x: getattr(TF, name)(x, **kw, return_indices=True), shape, device=device)
    check(lambda x: getattr(LF, name)(x, **kw), lambda x: getattr(TF, name)(x, **kw), shape, device=device)


AVG_CASES = [
    (1, (2, 3, 11), dict(kernel_size=3)),
    (1, (3, 10), dict(kernel_size=4, stride=3, padding=2, ceil_mode=True, count_include_pad=False)),
    (2, (2, 3, 9, 8), dict(kernel_size=2)),
    (2, (2, 2, 9, 8), dict(kernel_size=(3, 2), stride=(2, 1), padding=(1, 1))),
    (2, (2, 2, 9, 8), dict(kernel_size=(3, 2), stride=(2, 1), padding=(1, 1), count_include_pad=False)),
    (2, (1, 2, 10, 9), dict(kernel_size=3, stride=2, padding=1, ceil_mode=True)),
    (2, (1, 2, 10, 9), dict(kernel_size=3, stride=2, padding=1, ceil_mode=True, count_include_pad=False)),
    (2, (2, 7, 7), dict(kernel_size=3, padding=1, divisor_override=4)),
    (3, (1, 2, 5, 6, 7), dict(kernel_size=2, stride=(1, 2, 2), padding=(1, 0, 1))),
    (3, (2, 4, 5, 5), dict(kernel_size=3, stride=2, padding=1, ceil_mode=True, count_include_pad=False)),
]


@pytest.mark.parametrize("nsp,shape,kw", AVG_CASES)
def test_avg_pool_matches_torch(nsp, shape, kw, device):
    name = f"avg_pool{nsp}d"
    check(lambda x: getattr(LF, name)(x, **kw), lambda x: getattr(TF, name)(x, **kw), shape, device=device)


@pytest.mark.parametrize("nsp,shape,out", [(1, (2, 3, 10), 4), (1, (3, 7), 7), (2, (2, 3, 9, 7), (4, 3)),
                                           (2, (2, 5, 6), (None, 4)), (2, (1, 2, 5, 5), 1),
                                           (3, (1, 2, 5, 6, 7), (2, 3, 4)), (3, (2, 4, 5, 3), 2)])
def test_adaptive_pools_match_torch(nsp, shape, out, device):
    for kind in ("avg", "max"):
        name = f"adaptive_{kind}_pool{nsp}d"
        check(lambda x: getattr(LF, name)(x, out), lambda x: getattr(TF, name)(x, out), shape, device=device)
    name = f"adaptive_max_pool{nsp}d"
    check(lambda x: getattr(LF, name)(x, out, return_indices=True),
          lambda x: getattr(TF, name)(x, out, return_indices=True), shape, device=device)


@pytest.mark.parametrize("nsp,shape,kw", [(1, (2, 3, 10), dict(norm_type=2, kernel_size=3, stride=2)),
                                           (2, (2, 3, 9, 8), dict(norm_type=3, kernel_size=(2, 3))),
                                           (2, (2, 3, 9, 8), dict(norm_type=1.5, kernel_size=2, ceil_mode=True,
                                                                  stride=2)),
                                           (3, (1, 2, 4, 6, 5), dict(norm_type=2, kernel_size=2))])
def test_lp_pool_matches_torch(nsp, shape, kw):
    name = f"lp_pool{nsp}d"
    x = torch.rand(*shape, dtype=torch.float64) + 0.1
    x.requires_grad_()
    lx = leaf(x)
    tout, lout = getattr(TF, name)(x, **kw), getattr(LF, name)(lx, **kw)
    same(lout, tout)
    tout.sum().backward()
    lout.sum().backward()
    same(lx.grad, x.grad)


@pytest.mark.parametrize("nsp,shape,kw,out", [(1, (2, 3, 10), dict(kernel_size=2), None),
                                               (2, (2, 3, 9, 8), dict(kernel_size=2, stride=2), [9, 8]),
                                               (2, (3, 8, 8), dict(kernel_size=3, stride=2, padding=1), [8, 8]),
                                               (3, (1, 2, 4, 6, 6), dict(kernel_size=2), None)])
def test_max_unpool_matches_torch(nsp, shape, kw, out):
    x = (torch.randperm(torch.Size(shape).numel(), dtype=torch.float64) / 7).reshape(shape)
    pooled, idx = getattr(TF, f"max_pool{nsp}d")(x, **kw, return_indices=True)
    p = pooled.clone().requires_grad_()
    lp = leaf(p)
    tout = getattr(TF, f"max_unpool{nsp}d")(p, idx, **kw, output_size=out)
    lout = getattr(LF, f"max_unpool{nsp}d")(lp, to_lucid(idx), **kw, output_size=out)
    same(lout, tout)
    g = torch.randn_like(tout)
    tout.backward(g)
    lout.backward(to_lucid(g))
    same(lp.grad, p.grad)
    tm = getattr(torch.nn, f"MaxUnpool{nsp}d")(**kw)
    lm = getattr(lnn, f"MaxUnpool{nsp}d")(**kw)
    assert repr(lm) == repr(tm)
    same(lm(to_lucid(pooled), to_lucid(idx), out), tm(pooled, idx, out))


def test_pool_gradcheck_and_double_backward(device):
    x = lucid.randn(1, 2, 6, 5, dtype=lucid.float64).to(device).requires_grad_()
    for fn in [lambda t: LF.max_pool2d(t, 3, 2, 1, ceil_mode=True),
               lambda t: LF.avg_pool2d(t, 3, 2, 1, ceil_mode=True, count_include_pad=False),
               lambda t: LF.avg_pool2d(t, 2, divisor_override=3),
               lambda t: LF.adaptive_avg_pool2d(t, (4, 3)),
               lambda t: LF.adaptive_max_pool2d(t, (2, 3)),
               lambda t: LF.lp_pool2d(t.abs() + 0.5, 2, 2),
               lambda t: LF.avg_pool1d(t[0], 3, 1, 1),
               lambda t: LF.max_pool3d(t.unsqueeze(0), 2, 1)]:
        assert gradcheck(fn, (x,))
        assert gradgradcheck(fn, (x,))


MODULES = [
    ("MaxPool1d", (3,), dict(stride=2, padding=1, dilation=1, ceil_mode=True), (2, 3, 10)),
    ("MaxPool2d", (3, 2, 1), {}, (2, 3, 9, 8)),
    ("MaxPool2d", ((2, 3),), dict(return_indices=True), (2, 3, 9, 8)),
    ("MaxPool3d", (2,), {}, (1, 2, 4, 6, 6)),
    ("AvgPool1d", (3,), dict(stride=2, padding=1, count_include_pad=False), (2, 3, 10)),
    ("AvgPool2d", (3,), dict(stride=2, padding=1, ceil_mode=True), (2, 3, 9, 8)),
    ("AvgPool2d", ((2, 3),), dict(divisor_override=2), (2, 3, 9, 8)),
    ("AvgPool3d", (2,), dict(stride=1), (1, 2, 4, 6, 6)),
    ("AdaptiveAvgPool1d", (4,), {}, (2, 3, 10)),
    ("AdaptiveAvgPool2d", ((3, None),), {}, (2, 3, 9, 8)),
    ("AdaptiveAvgPool3d", (2,), {}, (1, 2, 4, 6, 6)),
    ("AdaptiveMaxPool1d", (4,), {}, (2, 3, 10)),
    ("AdaptiveMaxPool2d", ((3, 2),), dict(return_indices=True), (2, 3, 9, 8)),
    ("AdaptiveMaxPool3d", (2,), {}, (1, 2, 4, 6, 6)),
    ("LPPool1d", (2, 3), dict(stride=2), (2, 3, 10)),
    ("LPPool2d", (2, 2), {}, (2, 3, 9, 8)),
    ("LPPool3d", (3, 2), {}, (1, 2, 4, 6, 6)),
]


@pytest.mark.parametrize("name,args,kw,shape", MODULES)
def test_pool_modules_match_torch(name, args, kw, shape, device):
    tm = getattr(torch.nn, name)(*args, **kw)
    lm = getattr(lnn, name)(*args, **kw)
    assert repr(lm) == repr(tm)
    if name.startswith("LP"):
        x = torch.rand(*shape, dtype=torch.float64) + 0.1
    else:
        x = torch.randperm(torch.Size(shape).numel(), dtype=torch.float64).reshape(shape) / 7
    if name.startswith("LP"):
        same(lm(to_lucid(x, device)), tm(x.to(torch_device(device))))
    else:
        check(lm, tm, shape, device=device)


def test_pool_float32(device):
    x = torch.randn(2, 3, 8, 8)
    tx = x.to(torch_device(device))
    same(LF.max_pool2d(to_lucid(x, device), 2), TF.max_pool2d(tx, 2), 1e-6)
    out = LF.avg_pool2d(to_lucid(x, device), 3, 1, 1)
    assert out.dtype == lucid.float32
    same(out, TF.avg_pool2d(tx, 3, 1, 1), 1e-5)


@pytest.mark.parametrize("dt", [torch.int64, torch.int32, torch.uint8, torch.int8])
def test_max_pool_integer_dtypes(dt, device):
    x = torch.randint(-100, 100, (2, 3, 7, 6)).to(dt)
    lo, li = LF.max_pool2d(to_lucid(x, device), 3, 2, 1, return_indices=True)
    to, ti = TF.max_pool2d(x, 3, 2, 1, return_indices=True)  # (torch's CUDA has no integer max_pool)
    assert lo.dtype == getattr(lucid, str(dt).split(".")[-1])
    assert to_torch(lo).equal(to) and to_torch(li).equal(ti)
    with pytest.raises(NotImplementedError):  # as torch
        LF.adaptive_max_pool2d(to_lucid(x, device), 2)


def test_max_pool_nan_propagates(device):
    x = torch.tensor([[[1.0, float("nan"), 3.0, 2.0]]])
    lo, li = LF.max_pool1d(to_lucid(x, device), 2, return_indices=True)
    to, ti = TF.max_pool1d(x, 2, return_indices=True)
    assert str(to_torch(lo).tolist()) == str(to.tolist())
    assert to_torch(li).tolist() == ti.tolist()


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.int64])
@pytest.mark.parametrize("shape", [(2, 3, 8, 10), (1, 2, 7, 9), (3, 1, 2, 34)])
def test_max_pool2d_2x2_windows(dtype, shape, device):
    # the 2 x 2, stride-2 path: ties (first wins), NaN anywhere in a window (a later
    # NaN takes over), -inf, odd sizes (the last row / column is dropped), gradients
    g = torch.Generator().manual_seed(0)
    x = torch.randint(-3, 4, shape, generator=g).to(dtype)
    if dtype.is_floating_point:
        flat = x.view(-1)
        flat[torch.randperm(flat.numel(), generator=g)[:flat.numel() // 6]] = float("nan")
        flat[torch.randperm(flat.numel(), generator=g)[:flat.numel() // 6]] = -float("inf")
    lo, li = LF.max_pool2d(to_lucid(x, device), 2, return_indices=True)
    to, ti = TF.max_pool2d(x, 2, return_indices=True)
    assert to_torch(li).equal(ti)
    torch.testing.assert_close(to_torch(lo), to, equal_nan=True, rtol=0, atol=0)
    if dtype == torch.float64:
        xg = torch.randn(shape, dtype=dtype, generator=g, requires_grad=True)
        lx = to_lucid(xg.detach(), device).requires_grad_()
        gy = torch.randn(to.shape, dtype=dtype, generator=g)
        TF.max_pool2d(xg, 2).backward(gy)
        LF.max_pool2d(lx, 2).backward(to_lucid(gy, device))
        assert to_torch(lx.grad).equal(xg.grad)


def test_pool_bad_input():
    with pytest.raises(RuntimeError):
        LF.max_pool2d(lucid.randn(4, 4), 2)  # 2-D input to a 2-d pool
    with pytest.raises(RuntimeError, match="pad should be at most half"):
        LF.max_pool2d(lucid.randn(1, 1, 4, 4), 2, padding=2)
    with pytest.raises(RuntimeError, match="Output size is too small"):
        LF.avg_pool2d(lucid.randn(1, 1, 2, 2), 3)
    with pytest.raises(RuntimeError):
        LF.max_pool1d(lucid.randn(1, 1, 4), 0)
    with pytest.raises(NotImplementedError):
        LF.avg_pool2d(lucid.ones(1, 1, 4, 4, dtype=lucid.complex64), 2)
    with pytest.raises(RuntimeError, match="divisor must be not zero"):
        LF.avg_pool2d(lucid.randn(1, 1, 4, 4), 2, divisor_override=0)
    with pytest.raises(RuntimeError):
        LF.adaptive_avg_pool2d(lucid.randn(1, 0, 4), 2)
    with pytest.raises(ValueError, match="invalid output_size"):
        LF.max_unpool2d(lucid.randn(1, 1, 2, 2), lucid.zeros(1, 1, 2, 2, dtype=lucid.int64), 2,
                        output_size=[7, 7])
    with raises_by_sync(RuntimeError):
        LF.max_unpool2d(lucid.randn(1, 1, 2, 2), lucid.full((1, 1, 2, 2), 99, dtype=lucid.int64), 2)


# ---- fractional max pooling --------------------------------------------------------------


@pytest.mark.parametrize("nsp, shape, kernel, out", [
    (2, (2, 3, 10, 11), 3, (6, 7)), (2, (3, 10, 11), (2, 3), (5, 4)), (2, (2, 3, 9, 9), 2, (8, 8)),
    (2, (1, 2, 7, 6), 3, 1), (3, (2, 3, 6, 7, 8), 2, (4, 5, 6)), (3, (3, 6, 7, 8), (2, 3, 2), (3, 3, 4))])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_fractional_max_pool_matches_torch(nsp, shape, kernel, out, dtype, device):
    torch.manual_seed(0)
    x = torch.randn(shape, dtype=dtype).requires_grad_()
    batch = shape[0] if len(shape) == nsp + 2 else 1
    samples = torch.rand(batch, shape[-nsp - 1], nsp, dtype=dtype)
    tfn, lfn = (TF.fractional_max_pool2d, LF.fractional_max_pool2d) if nsp == 2 else \
        (TF.fractional_max_pool3d, LF.fractional_max_pool3d)
    tv, ti = tfn(x, kernel, output_size=out, return_indices=True, _random_samples=samples)
    lx = leaf(x, device)
    lv, li = lfn(lx, kernel, output_size=out, return_indices=True, _random_samples=to_lucid(samples, device))
    same(lv, tv, 0)
    assert to_torch(li).equal(ti)
    g = torch.randn(tv.shape, dtype=dtype)
    tv.backward(g)
    lv.backward(to_lucid(g, device))
    # (overlapping windows add into one element: the GPU adds in another order than the CPU)
    same(lx.grad, x.grad, 0 if device == "cpu" else 1e-6 if dtype == torch.float32 else 1e-13)


def test_fractional_max_pool_modules_and_ratios():
    torch.manual_seed(1)
    x = torch.randn(2, 3, 12, 10)
    samples = torch.rand(2, 3, 2)
    tm = torch.nn.FractionalMaxPool2d(3, output_ratio=(0.5, 0.75), _random_samples=samples)
    lm = lnn.FractionalMaxPool2d(3, output_ratio=(0.5, 0.75), _random_samples=to_lucid(samples))
    same(lm(to_lucid(x)), tm(x), 0)
    assert lm.output_size is None and lm.output_ratio == (0.5, 0.75) and lm.kernel_size == (3, 3)
    assert repr(lm) == repr(tm) == "FractionalMaxPool2d()" and "_random_samples" in dict(lm.named_buffers())
    m3 = lnn.FractionalMaxPool3d(2, output_size=3, return_indices=True)
    v, i = m3(lucid.randn(1, 2, 5, 5, 5))
    assert tuple(v.shape) == tuple(i.shape) == (1, 2, 3, 3, 3) and i.dtype == lucid.int64
    # drawn samples: the output is the max of some window, so every value is one of the input's
    lx = lucid.randn(1, 1, 9, 9)
    got = LF.fractional_max_pool2d(lx, 2, output_ratio=0.5)
    assert tuple(got.shape) == (1, 1, 4, 4) and set(got.flatten().tolist()) <= set(lx.flatten().tolist())
    lucid.manual_seed(3)
    a = LF.fractional_max_pool2d(lx, 2, output_size=5)
    lucid.manual_seed(3)
    assert LF.fractional_max_pool2d(lx, 2, output_size=5).equal(a)


def test_fractional_max_pool_refuses_what_torch_refuses():
    x = lucid.randn(2, 3, 10, 10)
    with pytest.raises(ValueError, match="requires specifying either an output size, or a pooling ratio"):
        lnn.FractionalMaxPool2d(3)
    with pytest.raises(ValueError, match="only one of output_size and output_ratio may be specified"):
        lnn.FractionalMaxPool2d(3, output_size=4, output_ratio=0.5)
    with pytest.raises(ValueError, match="output_ratio must be between 0 and 1"):
        lnn.FractionalMaxPool2d(3, output_ratio=1.5)
    with pytest.raises(ValueError, match="requires specifying either an output_size or an output_ratio"):
        LF.fractional_max_pool2d(x, 3)
    with pytest.raises(RuntimeError, match="pool width 3 too large relative to input width 10"):
        LF.fractional_max_pool2d(x, 3, output_size=(2, 9))
    with pytest.raises(RuntimeError, match="pool height 3 too large relative to input height 10"):
        LF.fractional_max_pool2d(x, 3, output_size=(9, 2))
    with pytest.raises(RuntimeError, match="Expected 3D or 4D tensor"):
        LF.fractional_max_pool2d(lucid.randn(3, 4), 2, output_size=2)
    with pytest.raises(RuntimeError, match="expected _random_samples of shape \\[2, 3, 2\\]"):
        LF.fractional_max_pool2d(x, 3, output_size=2, _random_samples=lucid.rand(2, 3, 3))
