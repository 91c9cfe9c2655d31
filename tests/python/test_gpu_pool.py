"""GPU legs of the pooling / resampling family (csrc/backend/cuda/pool.cu, resample.cu,
grid_sample.cu): larger shapes than test_nn_pool.py / test_nn_resample.py use, against
torch's CUDA and lucid's CPU, forward and backward; tables longer than one kernel
parameter chunk; non-contiguous and empty inputs; float64 gradcheck on the GPU;
deterministic gradients (no atomics); device-side errors of bad tap indices."""

import pytest
import torch
import torch.nn.functional as TF

import lucid
import lucid.nn.functional as LF
from conftest import to_lucid, to_torch

pytestmark = pytest.mark.skipif(not lucid.gpu.is_available(), reason="lucid has no GPU here")
needs_torch_cuda = pytest.mark.skipif(not torch.cuda.is_available(), reason="torch has no CUDA here")

TOL = {torch.float32: 2e-5, torch.float64: 1e-10}


def close(l, t, tol):
    t = t.detach().cpu()
    assert tuple(l.shape) == tuple(t.shape), (tuple(l.shape), tuple(t.shape))
    lt = to_torch(l.detach()).to(t.dtype)
    torch.testing.assert_close(lt, t, rtol=tol, atol=tol, equal_nan=True)


def both(lfn, x, g, device):
    """lfn on lucid copies of torch tensor x on `device`: (output, d output . g / d x)."""
    lx = to_lucid(x.detach().cpu(), device).requires_grad_()
    out = lfn(lx)
    vals = out[0] if isinstance(out, tuple) else out
    vals.backward(to_lucid(g.cpu(), device))
    assert vals.device == lx.device and lx.grad.device == lx.device
    return out, lx.grad


def against_torch_cuda_and_cpu(lfn, tfn, x, tol, indices=False):
    """lucid's GPU against torch's CUDA (values, indices, input gradient) and lucid's CPU."""
    tx = x.detach().cuda().requires_grad_()
    tout = tfn(tx)
    tvals = tout[0] if isinstance(tout, tuple) else tout
    g = torch.randn(tvals.shape, dtype=tvals.dtype)
    tvals.backward(g.cuda())
    gout, ggrad = both(lfn, x, g, "gpu")
    cout, cgrad = both(lfn, x, g, "cpu")
    gvals = gout[0] if isinstance(gout, tuple) else gout
    cvals = cout[0] if isinstance(cout, tuple) else cout
    close(gvals, tvals, tol)
    close(ggrad, tx.grad, tol)
    close(gvals, to_torch(cvals.detach()), tol)
    close(ggrad, to_torch(cgrad), tol)
    if indices:
        assert to_torch(gout[1]).tolist() == tout[1].cpu().tolist() == to_torch(cout[1]).tolist()


POOLS = [
    ("max_pool2d", dict(kernel_size=3, stride=2, padding=1), (4, 16, 33, 31), True),
    ("max_pool2d", dict(kernel_size=2), (4, 16, 32, 32), True),
    ("max_pool2d", dict(kernel_size=(3, 2), stride=(2, 1), dilation=(2, 1), ceil_mode=True), (2, 8, 21, 19), True),
    ("max_pool3d", dict(kernel_size=2, stride=(1, 2, 2), padding=(1, 0, 1)), (2, 4, 7, 12, 10), True),
    ("max_pool1d", dict(kernel_size=5, stride=3, padding=2), (3, 8, 101), True),
    ("avg_pool2d", dict(kernel_size=3, stride=2, padding=1), (4, 16, 33, 31), False),
    ("avg_pool2d", dict(kernel_size=3, stride=2, padding=1, ceil_mode=True, count_include_pad=False),
     (2, 8, 20, 17), False),
    ("avg_pool2d", dict(kernel_size=4, divisor_override=3), (2, 8, 20, 17), False),
    ("avg_pool3d", dict(kernel_size=3, stride=2, padding=1), (2, 4, 9, 10, 11), False),
    ("avg_pool1d", dict(kernel_size=4, stride=3, padding=2, ceil_mode=True), (3, 8, 101), False),
    ("adaptive_avg_pool2d", dict(output_size=(7, 7)), (4, 16, 33, 31), False),
    ("adaptive_avg_pool2d", dict(output_size=1), (4, 32, 14, 14), False),
    ("adaptive_avg_pool3d", dict(output_size=(2, 3, 5)), (2, 4, 7, 9, 11), False),
    ("adaptive_max_pool2d", dict(output_size=(5, 7), return_indices=True), (4, 16, 33, 31), True),
    ("adaptive_max_pool1d", dict(output_size=13), (3, 8, 100), False),
]


@needs_torch_cuda
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("name,kw,shape,indices", POOLS)
def test_pools_against_torch_cuda(name, kw, shape, indices, dtype):
    # distinct values, so that max ties cannot pick different elements
    x = (torch.randperm(torch.Size(shape).numel()).to(dtype) / 64).reshape(shape)
    indices = indices and "max" in name
    if indices and "return_indices" not in kw:
        kw = dict(kw, return_indices=True)
    against_torch_cuda_and_cpu(lambda a: getattr(LF, name)(a, **kw), lambda a: getattr(TF, name)(a, **kw), x,
                               TOL[dtype], indices)


@needs_torch_cuda
@pytest.mark.parametrize("name,kw", [("max_pool1d", dict(kernel_size=2, return_indices=True)),
                                     ("avg_pool1d", dict(kernel_size=3, stride=2, padding=1)),
                                     ("adaptive_avg_pool1d", dict(output_size=9000)),
                                     ("adaptive_max_pool1d", dict(output_size=7001, return_indices=True))])
def test_pool_tables_longer_than_one_parameter_chunk(name, kw):
    # 20000 positions: the windows' table (and the adjoint's ranges) take several
    # uploads through kernel parameters (param_table.h)
    x = torch.randperm(2 * 3 * 20000).to(torch.float64).reshape(2, 3, 20000) / 8
    against_torch_cuda_and_cpu(lambda a: getattr(LF, name)(a, **kw), lambda a: getattr(TF, name)(a, **kw), x,
                               1e-10, "return_indices" in kw)


def test_pools_non_contiguous_empty_and_integer():
    base = torch.randn(3, 9, 10, 4, dtype=torch.float64)
    for fn in (lambda a: LF.max_pool2d(a, 3, 2, 1), lambda a: LF.avg_pool2d(a, 2),
               lambda a: LF.adaptive_avg_pool2d(a, (4, 3)), lambda a: LF.adaptive_max_pool2d(a, (4, 3))):
        gx = to_lucid(base, "gpu").permute(3, 0, 1, 2).requires_grad_()  # a permuted view
        cx = to_lucid(base).permute(3, 0, 1, 2).requires_grad_()
        g, c = fn(gx), fn(cx)
        close(g, to_torch(c), 1e-12)
        g.pow(2).sum().backward()
        c.pow(2).sum().backward()
        close(gx.grad, to_torch(cx.grad), 1e-12)
    for fn, shape in ((lambda a: LF.max_pool2d(a, 2), (0, 3, 4, 4)), (lambda a: LF.avg_pool2d(a, 2), (0, 3, 4, 4)),
                      (lambda a: LF.adaptive_avg_pool2d(a, 3), (0, 3, 3, 3))):
        empty = lucid.zeros(0, 3, 8, 8, device="gpu").requires_grad_()
        out = fn(empty)
        assert tuple(out.shape) == shape
        out.sum().backward()
        assert tuple(empty.grad.shape) == (0, 3, 8, 8)
    xi = torch.randint(-50, 50, (2, 3, 11, 9))
    for dt in (lucid.int64, lucid.int32, lucid.uint8):
        a = to_lucid(xi).to(dt)
        gv, gi = LF.max_pool2d(a.to("gpu"), 3, 2, 1, return_indices=True)
        cv, ci = LF.max_pool2d(a, 3, 2, 1, return_indices=True)
        assert gv.dtype == dt and gv.tolist() == cv.tolist() and gi.tolist() == ci.tolist()


def test_max_pool_nan_and_inf_match_cpu():
    g = torch.Generator().manual_seed(0)
    x = torch.randint(-3, 4, (2, 3, 13, 14), generator=g).double()
    flat = x.view(-1)
    flat[torch.randperm(flat.numel(), generator=g)[:40]] = float("nan")
    flat[torch.randperm(flat.numel(), generator=g)[:40]] = -float("inf")
    for kw in (dict(kernel_size=2), dict(kernel_size=3, stride=2, padding=1, ceil_mode=True)):
        gv, gi = LF.max_pool2d(to_lucid(x, "gpu"), **kw, return_indices=True)
        cv, ci = LF.max_pool2d(to_lucid(x), **kw, return_indices=True)
        assert gi.tolist() == ci.tolist()
        torch.testing.assert_close(to_torch(gv), to_torch(cv), equal_nan=True, rtol=0, atol=0)


def test_pool_gradcheck_on_gpu():
    x = lucid.randn(2, 2, 7, 6, dtype=lucid.float64, device="gpu").requires_grad_()
    for fn in (lambda t: LF.avg_pool2d(t, 3, 2, 1, ceil_mode=True, count_include_pad=False),
               lambda t: LF.adaptive_avg_pool2d(t, (4, 5)),
               lambda t: LF.avg_pool3d(t.unsqueeze(0), 2, 1)):
        assert lucid.autograd.gradcheck(fn, (x,))
        assert lucid.autograd.gradgradcheck(fn, (x,))


INTERP = [("linear", (2, 3, 37), dict(scale_factor=2.5)),
          ("linear", (2, 3, 37), dict(size=11, align_corners=True)),
          ("bilinear", (2, 4, 15, 17), dict(scale_factor=2)),
          ("bilinear", (2, 4, 15, 17), dict(size=(8, 29), align_corners=True)),
          ("bilinear", (2, 4, 32, 30), dict(size=(11, 13), antialias=True)),
          ("bicubic", (2, 4, 15, 17), dict(size=(31, 9))),
          ("bicubic", (2, 4, 15, 17), dict(scale_factor=1.5, align_corners=True)),
          ("trilinear", (1, 3, 6, 7, 8), dict(scale_factor=2)),
          ("trilinear", (1, 3, 6, 7, 8), dict(size=(3, 11, 5), align_corners=True)),
          ("nearest", (2, 4, 15, 17), dict(scale_factor=2)),
          ("nearest", (1, 3, 6, 7, 8), dict(scale_factor=3)),
          ("area", (2, 4, 30, 28), dict(size=(7, 9)))]


@needs_torch_cuda
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("mode,shape,kw", INTERP)
def test_interpolate_against_torch_cuda(mode, shape, kw, dtype):
    x = torch.randn(*shape, dtype=dtype)
    tol = 1e-4 if dtype == torch.float32 else 1e-10
    against_torch_cuda_and_cpu(lambda a: LF.interpolate(a, mode=mode, **kw),
                               lambda a: TF.interpolate(a, mode=mode, **kw), x, tol)


def test_resample_taps_on_gpu_match_cpu_and_are_deterministic():
    # repeated and unsorted indices: several taps write each position of the adjoint
    C = lucid._C
    g = torch.Generator().manual_seed(0)
    idx = torch.randint(0, 50, (3, 700), generator=g)
    w = torch.randn(3, 700, generator=g, dtype=torch.float64)
    for dim, shape in ((0, (50, 3, 4)), (1, (3, 50, 4)), (2, (3, 4, 50))):
        x = torch.randn(*shape, generator=g, dtype=torch.float64)
        for dt in (lucid.float64, lucid.float32):
            args = [to_lucid(idx, "gpu"), to_lucid(w, "gpu").to(dt)]
            cargs = [to_lucid(idx), to_lucid(w).to(dt)]
            y = C._resample_taps(to_lucid(x, "gpu").to(dt), dim, *args)
            tol = 1e-5 if dt == lucid.float32 else 1e-12
            close(y, to_torch(C._resample_taps(to_lucid(x).to(dt), dim, *cargs)), tol)
            gy = torch.randn(*y.shape, generator=g, dtype=torch.float64)
            gx = C._resample_taps_adjoint(to_lucid(gy, "gpu").to(dt), dim, *args, 50)
            cgx = C._resample_taps_adjoint(to_lucid(gy).to(dt), dim, *cargs, 50)
            close(gx, to_torch(cgx), 10 * tol)
            again = C._resample_taps_adjoint(to_lucid(gy, "gpu").to(dt), dim, *args, 50)
            assert again.tolist() == gx.tolist()  # no atomics: the same bits every run


def test_bad_tap_index_raises_at_the_next_sync_and_the_gpu_keeps_working():
    C = lucid._C
    x = lucid.randn(2, 4, device="gpu")
    w = lucid.ones(1, 2, device="gpu")
    with pytest.raises(IndexError, match=r"resample_taps\(\): tap index 7 is out of range for size 4"):
        C._resample_taps(x, 1, lucid.tensor([[0, 7]], device="gpu"), w).tolist()
    with pytest.raises(IndexError, match=r"resample_taps_adjoint\(\): tap index -2 is out of range for size 4"):
        C._resample_taps_adjoint(lucid.ones(2, 2, device="gpu"), 1, lucid.tensor([[-2, 1]], device="gpu"), w,
                                 4).tolist()
    y = C._resample_taps(x, 1, lucid.tensor([[3, 0]], device="gpu"), w)
    assert y.tolist() == [[r[3], r[0]] for r in x.tolist()]


GRID_CASES = [(m, p, a) for m in ("bilinear", "nearest") for p in ("zeros", "border", "reflection")
              for a in (False, True)]


@needs_torch_cuda
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("mode,padding_mode,align_corners", GRID_CASES)
def test_grid_sample_against_torch_cuda(mode, padding_mode, align_corners, dtype):
    g = torch.Generator().manual_seed(0)
    x = torch.randn(3, 5, 17, 19, generator=g, dtype=dtype)
    grid = (torch.rand(3, 23, 29, 2, generator=g, dtype=dtype) * 2.6 - 1.3).requires_grad_()
    kw = dict(mode=mode, padding_mode=padding_mode, align_corners=align_corners)
    tol = 1e-4 if dtype == torch.float32 else 1e-10
    tx, tg = x.cuda().requires_grad_(), grid.detach().cuda().requires_grad_()
    tout = TF.grid_sample(tx, tg, **kw)
    w = torch.randn(tout.shape, generator=g, dtype=dtype)
    tout.backward(w.cuda())
    results = {}
    for dev in ("gpu", "cpu"):
        lx, lg = to_lucid(x, dev).requires_grad_(), to_lucid(grid.detach(), dev).requires_grad_()
        out = LF.grid_sample(lx, lg, **kw)
        out.backward(to_lucid(w, dev))
        assert lx.grad.device == lx.device and lg.grad.device == lg.device
        results[dev] = (out, lx.grad, lg.grad)
    out, gx, gg = results["gpu"]
    close(out, tout, tol)
    close(gx, tx.grad, tol)
    if mode == "bilinear":  # (nearest: torch leaves no grid gradient, lucid zeros)
        close(gg, tg.grad, 1e-3 if dtype == torch.float32 else 1e-9)
    for a, b in zip(results["gpu"], results["cpu"]):
        close(a, to_torch(b.detach()), tol)


def test_grid_sample_many_points_per_pixel_deterministic_and_gradcheck():
    # every point near a few pixels: many entries per pixel in the grouped backward
    g = torch.Generator().manual_seed(1)
    x = torch.randn(2, 3, 6, 7, generator=g, dtype=torch.float64)
    grid = torch.rand(2, 40, 50, 2, generator=g, dtype=torch.float64) * 0.2 - 0.1
    for mode in ("bilinear", "nearest"):
        grads = []
        for dev in ("gpu", "gpu", "cpu"):
            lx = to_lucid(x, dev).requires_grad_()
            lg = to_lucid(grid, dev).requires_grad_()
            LF.grid_sample(lx, lg, mode=mode, align_corners=False).pow(2).sum().backward()
            grads.append((lx.grad.tolist(), lg.grad.tolist()))
        assert grads[0] == grads[1]  # no atomics: the same bits every run
        close(to_lucid(torch.tensor(grads[0][0])), torch.tensor(grads[2][0]), 1e-10)
        close(to_lucid(torch.tensor(grads[0][1])), torch.tensor(grads[2][1]), 1e-10)
    lx = lucid.randn(1, 2, 4, 5, dtype=lucid.float64, device="gpu").requires_grad_()
    lg = (lucid.rand(1, 3, 4, 2, dtype=lucid.float64, device="gpu") * 2.2 - 1.1).requires_grad_()
    for pm in ("zeros", "border", "reflection"):
        assert lucid.autograd.gradcheck(
            lambda a, b: LF.grid_sample(a, b, padding_mode=pm, align_corners=False), (lx, lg))
    empty = LF.grid_sample(lucid.randn(0, 2, 4, 5, device="gpu"), lucid.rand(0, 3, 3, 2, device="gpu"))
    assert tuple(empty.shape) == (0, 2, 3, 3)
