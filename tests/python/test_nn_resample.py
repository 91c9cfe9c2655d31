"""interpolate / Upsample, grid_sample, affine_grid, pixel and channel shuffles and the
padding layers against torch: outputs and input gradients (and grid / theta gradients),
float64 gradcheck of the functional forms, reprs, and bad input. Tests taking `device`
also run lucid on the GPU, against torch's CPU results (whose index rules lucid's taps
reproduce); test_gpu_pool.py compares with torch's CUDA."""

import pytest
import torch

import lucid
import lucid.nn as lnn
import lucid.nn.functional as LF
import torch.nn.functional as TF
from conftest import to_lucid, to_torch, default_device


def same(l, t, tol=1e-9):
    assert tuple(l.shape) == tuple(t.shape), (l.shape, t.shape)
    assert str(l.dtype).split(".")[-1] == str(t.dtype).split(".")[-1]
    assert torch.allclose(to_torch(l.detach()).double(), t.detach().double(), atol=tol, rtol=tol), \
        (to_torch(l.detach()).double() - t.detach().double()).abs().max()


def run_both(lfn, tfn, *tensors, tol=1e-9, grads=True, device=None):
    """lfn / tfn on copies of `tensors` (torch; lucid's on `device`); compares outputs and
    (grads) the gradients of a random weighting of the output with respect to every
    floating input."""
    device = device or default_device()
    tt = [t.detach().clone().requires_grad_(t.is_floating_point()) for t in tensors]
    lt = [to_lucid(t.detach(), device).requires_grad_(t.is_floating_point()) for t in tensors]
    tout, lout = tfn(*tt), lfn(*lt)
    assert lout.device == lt[0].device
    same(lout, tout, tol)
    if grads and any(t.is_floating_point() for t in tensors) and tout.is_floating_point():
        w = torch.randn(tout.shape, dtype=tout.dtype)
        (tout * w).sum().backward()
        (lout * to_lucid(w, device)).sum().backward()
        for a, b in zip(lt, tt):
            if b.grad is not None:
                assert a.grad.device == a.device
                same(a.grad, b.grad, tol)
    return lout, tout


CASES = [((2, 3, 7), ["nearest", "nearest-exact", "linear", "area"]),
         ((2, 2, 5, 6), ["nearest", "nearest-exact", "bilinear", "bicubic", "area"]),
         ((1, 2, 3, 4, 5), ["nearest", "nearest-exact", "trilinear", "area"])]
SIZES = [dict(size=3), dict(size=13), dict(scale_factor=1.7), dict(scale_factor=0.6), dict(scale_factor=2),
         dict(scale_factor=3.0 / 7), dict(scale_factor=1.3, recompute_scale_factor=True), dict(scale_factor=1.0)]


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("shape,modes", CASES)
def test_interpolate_matches_torch(shape, modes, dtype, device):
    tol = 1e-5 if dtype == torch.float32 else 1e-10
    x = torch.randn(*shape, dtype=dtype)
    for mode in modes:
        configs = list(SIZES)
        if mode not in ("nearest", "nearest-exact", "area"):
            configs += [dict(size=9, align_corners=True), dict(scale_factor=1.5, align_corners=True),
                        dict(size=1, align_corners=True), dict(scale_factor=0.5, align_corners=False)]
        for kw in configs:
            run_both(lambda a: LF.interpolate(a, mode=mode, **kw), lambda a: TF.interpolate(a, mode=mode, **kw),
                     x, tol=tol, device=device)


def test_interpolate_per_dim_sizes_and_scales(device):
    x = torch.randn(2, 3, 4, 6, dtype=torch.float64)
    for mode in ("nearest", "bilinear", "bicubic", "area", "nearest-exact"):
        run_both(lambda a: LF.interpolate(a, size=(7, 3), mode=mode),
                 lambda a: TF.interpolate(a, size=(7, 3), mode=mode), x, device=device)
        run_both(lambda a: LF.interpolate(a, scale_factor=(0.75, 2.5), mode=mode),
                 lambda a: TF.interpolate(a, scale_factor=(0.75, 2.5), mode=mode), x, device=device)


def test_interpolate_nearest_integer_and_float32_index_rounding():
    x = torch.randint(0, 255, (1, 2, 9, 11), dtype=torch.uint8)
    for kw in (dict(size=(20, 31)), dict(scale_factor=1 / 3), dict(size=(5, 4)), dict(scale_factor=2.3)):
        for mode in ("nearest", "nearest-exact"):
            same(LF.interpolate(to_lucid(x), mode=mode, **kw), TF.interpolate(x, mode=mode, **kw))
    # sizes where floor(i * in/out) depends on float32 rounding of the scale
    x = torch.arange(1 * 1 * 49, dtype=torch.float32).reshape(1, 1, 49)
    for out in (7, 21, 98, 147, 50, 48, 13):
        for mode in ("nearest", "nearest-exact", "linear"):
            same(LF.interpolate(to_lucid(x), size=out, mode=mode), TF.interpolate(x, size=out, mode=mode), 1e-5)


def test_interpolate_index_rules_of_each_torch_path():
    """Cases where torch's kernels round indices differently: the 1-D (separable) kernel
    fuses scale * (i + 0.5) - 0.5 and has no copy / halving shortcuts; the 2-D / 3-D
    nearest kernels use a float scale and the shortcuts; the antialiased kernel skips a
    dim whose size is unchanged; area accepts an empty output size."""
    cases = [((1, 1, 2), dict(size=41, mode="nearest-exact")),
             ((1, 1, 2), dict(size=82, mode="nearest-exact")),
             ((1, 1, 7), dict(scale_factor=1.1, mode="nearest")),
             ((1, 1, 7), dict(scale_factor=2.0000001, mode="nearest")),
             ((1, 1, 7, 7), dict(scale_factor=1.1, mode="nearest")),
             ((1, 1, 12, 10), dict(size=(37, 32), mode="nearest-exact")),
             ((1, 1, 14, 19), dict(size=(23, 6), mode="nearest-exact")),
             ((1, 1, 8, 20), dict(scale_factor=1.1, mode="bilinear", antialias=True)),
             ((1, 1, 2, 2), dict(scale_factor=1.1, mode="bicubic", antialias=True)),
             ((1, 2, 5), dict(size=0, mode="area")),
             ((1, 2, 3, 4), dict(size=(0, 2), mode="area"))]
    for dtype in (torch.float32, torch.float64):
        for shape, kw in cases:
            n = 1
            for d in shape:
                n *= d
            x = torch.arange(n, dtype=dtype).reshape(shape)
            # torch's 1-D nearest backward kernels use the 2-D index rules, and its
            # antialiased backward does not skip the unchanged dim, so in these cases its
            # gradient is not the adjoint of its forward; lucid's is (gradcheck below)
            odd = (kw["mode"].startswith("nearest") and len(shape) == 3) or kw.get("antialias")
            empty = kw["mode"] == "area"  # to an empty size: torch has no backward for it
            run_both(lambda a: LF.interpolate(a, **kw), lambda a: TF.interpolate(a, **kw), x, grads=not (odd or empty),
                     tol=1e-5 if dtype == torch.float32 else 1e-9)
            if odd and dtype == torch.float64:
                lx = to_lucid(x).requires_grad_()
                assert lucid.autograd.gradcheck(lambda a: LF.interpolate(a, **kw), (lx,))


@pytest.mark.parametrize("mode,shape", [("nearest", (1, 2, 3, 4)), ("nearest-exact", (1, 2, 5)),
                                        ("linear", (2, 1, 5)), ("bilinear", (1, 2, 3, 4)),
                                        ("bicubic", (1, 1, 4, 3)), ("trilinear", (1, 1, 2, 3, 3)),
                                        ("area", (1, 2, 5, 4))])
def test_interpolate_gradcheck(mode, shape, device):
    x = lucid.randn(*shape, dtype=lucid.float64).to(device).requires_grad_()
    kw = {} if mode in ("nearest", "nearest-exact", "area") else {"align_corners": False}
    assert lucid.autograd.gradcheck(lambda a: LF.interpolate(a, scale_factor=1.6, mode=mode, **kw), (x,))
    assert lucid.autograd.gradcheck(lambda a: LF.interpolate(a, size=[2] * (len(shape) - 2), mode=mode, **kw), (x,))
    assert lucid.autograd.gradgradcheck(lambda a: LF.interpolate(a, scale_factor=1.6, mode=mode, **kw), (x,))


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("mode", ["bilinear", "bicubic"])
def test_interpolate_antialias_matches_torch(mode, dtype, device):
    tol = 1e-5 if dtype == torch.float32 else 1e-10
    x = torch.randn(2, 3, 17, 13, dtype=dtype)
    for kw in (dict(size=(5, 4)), dict(size=(30, 20)), dict(scale_factor=0.3), dict(scale_factor=0.5),
               dict(size=(8, 13)), dict(size=(5, 4), align_corners=True),
               dict(scale_factor=(0.4, 1.7), align_corners=True),
               dict(size=1)):
        run_both(lambda a: LF.interpolate(a, mode=mode, antialias=True, **kw),
                 lambda a: TF.interpolate(a, mode=mode, antialias=True, **kw), x, tol=tol, device=device)
    lx = lucid.randn(1, 1, 7, 5, dtype=lucid.float64).to(device).requires_grad_()
    assert lucid.autograd.gradcheck(lambda a: LF.interpolate(a, size=(3, 2), mode=mode, antialias=True), (lx,))


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_interpolate_half_precision(dtype, device):
    x = torch.randn(1, 2, 5, 6).to(dtype)
    for mode in ("nearest", "bilinear", "bicubic", "area"):
        same(LF.interpolate(to_lucid(x, device), scale_factor=1.5, mode=mode),
             TF.interpolate(x, scale_factor=1.5, mode=mode), 1e-2)


def test_deprecated_upsample_functions():
    x = torch.randn(1, 2, 3, 3, dtype=torch.float64)
    with pytest.warns(UserWarning, match="deprecated"):
        out = LF.upsample(to_lucid(x), scale_factor=2, mode="bilinear")
    same(out, TF.interpolate(x, scale_factor=2, mode="bilinear"))
    with pytest.warns(UserWarning, match="deprecated"):
        out = LF.upsample_bilinear(to_lucid(x), size=5)
    same(out, TF.interpolate(x, size=5, mode="bilinear", align_corners=True))
    with pytest.warns(UserWarning, match="deprecated"):
        out = LF.upsample_nearest(to_lucid(x), scale_factor=3)
    same(out, TF.interpolate(x, scale_factor=3))


def test_empty_batch():
    x, g = torch.randn(0, 2, 5, 6), torch.rand(0, 3, 3, 2)
    same(LF.interpolate(to_lucid(x), size=3, mode="bilinear"), TF.interpolate(x, size=3, mode="bilinear"))
    same(LF.grid_sample(to_lucid(x), to_lucid(g), align_corners=False), TF.grid_sample(x, g, align_corners=False))


def test_upsample_modules():
    x = torch.randn(2, 3, 4, 5, dtype=torch.float64)
    pairs = [(lnn.Upsample(scale_factor=2, mode="bilinear"), torch.nn.Upsample(scale_factor=2, mode="bilinear")),
             (lnn.Upsample(size=(3, 7)), torch.nn.Upsample(size=(3, 7))),
             (lnn.Upsample(scale_factor=(1.5, 2.0), mode="bicubic", align_corners=True),
              torch.nn.Upsample(scale_factor=(1.5, 2.0), mode="bicubic", align_corners=True)),
             (lnn.UpsamplingNearest2d(scale_factor=3), torch.nn.UpsamplingNearest2d(scale_factor=3)),
             (lnn.UpsamplingBilinear2d(size=6), torch.nn.UpsamplingBilinear2d(size=6))]
    for lm, tm in pairs:
        assert repr(lm) == repr(tm)
        run_both(lm, tm, x)


def test_interpolate_bad_input():
    x = lucid.randn(1, 2, 4, 4)
    with pytest.raises(ValueError, match="only one of size or scale_factor"):
        LF.interpolate(x, size=2, scale_factor=2)
    with pytest.raises(ValueError, match="either size or scale_factor"):
        LF.interpolate(x)
    with pytest.raises(ValueError, match="align_corners"):
        LF.interpolate(x, size=2, mode="nearest", align_corners=True)
    with pytest.raises(ValueError, match="spatial dimensions"):
        LF.interpolate(x, size=(2, 2, 2))
    with pytest.raises(ValueError, match="spatial dimensions"):
        LF.interpolate(x, scale_factor=(2.0,))
    with pytest.raises(NotImplementedError, match="linear mode needs 3D"):
        LF.interpolate(x, size=2, mode="linear")
    with pytest.raises(NotImplementedError, match="trilinear mode needs 5D"):
        LF.interpolate(x, size=2, mode="trilinear")
    with pytest.raises(NotImplementedError):
        LF.interpolate(lucid.randn(2, 4), size=2)
    with pytest.raises(NotImplementedError):
        LF.interpolate(x, size=2, mode="cubic")
    with pytest.raises(ValueError, match="recompute_scale_factor"):
        LF.interpolate(x, size=2, recompute_scale_factor=True)
    with pytest.raises(RuntimeError, match="greater than 0"):
        LF.interpolate(x, scale_factor=0.1)
    with pytest.raises(ValueError, match="Anti-alias"):
        LF.interpolate(x, size=2, mode="nearest", antialias=True)
    with pytest.raises(ValueError, match="Anti-alias"):
        LF.interpolate(lucid.randn(1, 2, 4), size=2, mode="linear", antialias=True)
    with pytest.raises(RuntimeError, match="floating-point"):
        LF.interpolate(lucid.ones(1, 1, 2, 2, dtype=lucid.int64), size=3, mode="bilinear")
    with pytest.raises(TypeError, match="expected size"):
        LF.interpolate(x, size=(2.5, 2))
    for bad in ((lambda: TF.interpolate(torch.randn(1, 2, 4, 4), size=(2, 2, 2))),):
        with pytest.raises(ValueError):
            bad()


# ---- grid_sample / affine_grid -------------------------------------------------------------------------
@pytest.mark.parametrize("mode,dims", [("bilinear", 2), ("nearest", 2), ("bicubic", 2), ("bilinear", 3),
                                       ("nearest", 3)])
@pytest.mark.parametrize("padding_mode", ["zeros", "border", "reflection"])
@pytest.mark.parametrize("align_corners", [False, True])
def test_grid_sample_matches_torch(mode, padding_mode, align_corners, dims, device):
    """4-D bilinear / nearest run the engine's kernel; bicubic and 5-D the composition
    (bicubic 5-D does not exist: tested as an error below)."""
    torch.manual_seed(0)
    if dims == 2:
        x, g = torch.randn(2, 3, 5, 6, dtype=torch.float64), torch.rand(2, 4, 7, 2, dtype=torch.float64) * 2.6 - 1.3
    else:
        x = torch.randn(2, 2, 3, 4, 5, dtype=torch.float64)
        g = torch.rand(2, 3, 2, 4, 3, dtype=torch.float64) * 2.6 - 1.3
    kw = dict(mode=mode, padding_mode=padding_mode, align_corners=align_corners)
    run_both(lambda a, b: LF.grid_sample(a, b, **kw), lambda a, b: TF.grid_sample(a, b, **kw), x, g, tol=1e-8,
             device=device)


def test_grid_sample_float32_and_gradcheck(device):
    x, g = torch.randn(1, 2, 4, 5), torch.rand(1, 3, 3, 2) * 2.4 - 1.2
    for mode in ("bilinear", "bicubic", "nearest"):
        run_both(lambda a, b: LF.grid_sample(a, b, mode=mode, align_corners=False),
                 lambda a, b: TF.grid_sample(a, b, mode=mode, align_corners=False), x, g, tol=1e-5, device=device)
    lx = lucid.randn(1, 2, 3, 4, dtype=lucid.float64).to(device).requires_grad_()
    lg = (lucid.rand(1, 2, 3, 2, dtype=lucid.float64) * 2.2 - 1.1).to(device).requires_grad_()
    for mode in ("bilinear", "bicubic"):
        for pm in ("zeros", "border", "reflection"):
            assert lucid.autograd.gradcheck(
                lambda a, b: LF.grid_sample(a, b, mode=mode, padding_mode=pm, align_corners=False), (lx, lg))
    assert lucid.autograd.gradcheck(lambda a: LF.grid_sample(a, lg.detach(), mode="nearest", align_corners=True), (lx,))


@pytest.mark.parametrize("mode", ["bilinear", "nearest"])
@pytest.mark.parametrize("padding_mode", ["zeros", "border", "reflection"])
@pytest.mark.parametrize("align_corners", [False, True])
def test_grid_sample_float32_blocks(mode, padding_mode, align_corners, device):
    # float32 with enough points for the kernel's 16-wide gathers and its blocks of
    # points (221 per image: a full block and a partial one), corners off the image
    g = torch.Generator().manual_seed(0)
    x = torch.randn(2, 3, 9, 11, generator=g)
    grid = torch.rand(2, 13, 17, 2, generator=g) * 2.6 - 1.3
    kw = dict(mode=mode, padding_mode=padding_mode, align_corners=align_corners)
    run_both(lambda a, b: LF.grid_sample(a, b, **kw), lambda a, b: TF.grid_sample(a, b, **kw), x, grid, tol=2e-5,
             device=device)


def test_grid_sample_off_image_corners_ignore_nan(device):
    # a NaN at pixel (0, 0) reaches only the points that read it, not those whose
    # corners fall off the image (zeros padding)
    x = torch.randn(1, 2, 6, 6)
    x[:, :, 0, 0] = float("nan")
    grid = torch.rand(1, 5, 8, 2, generator=torch.Generator().manual_seed(1)) * 6 - 3  # mostly far outside
    for mode in ("bilinear", "nearest"):
        out = to_torch(LF.grid_sample(to_lucid(x, device), to_lucid(grid, device), mode=mode, align_corners=False))
        ref = TF.grid_sample(x, grid, mode=mode, align_corners=False)
        assert torch.equal(out.isnan(), ref.isnan())
        torch.testing.assert_close(out, ref, equal_nan=True)


@pytest.mark.parametrize("mode", ["bilinear", "nearest", "bicubic"])
@pytest.mark.parametrize("padding_mode", ["zeros", "border", "reflection"])
def test_grid_sample_double_backward(mode, padding_mode):
    """The kernel's backward is first order; create_graph differentiates the composition."""
    lx = lucid.randn(1, 2, 3, 4, dtype=lucid.float64, requires_grad=True)
    lg = (lucid.rand(1, 2, 3, 2, dtype=lucid.float64) * 2.2 - 1.1).requires_grad_()
    fn = lambda a, b: LF.grid_sample(a, b, mode=mode, padding_mode=padding_mode, align_corners=False)  # noqa: E731
    assert lucid.autograd.gradgradcheck(fn, (lx, lg))
    x, g = to_torch(lx.detach()).requires_grad_(), to_torch(lg.detach()).requires_grad_()
    tgx, tgg = torch.autograd.grad(TF.grid_sample(x, g, mode=mode, padding_mode=padding_mode, align_corners=False)
                                   .pow(2).sum(), (x, g), create_graph=True)
    lgx, lgg = lucid.autograd.grad(fn(lx, lg).pow(2).sum(), (lx, lg), create_graph=True)
    same(lgx, tgx)
    same(lgg, tgg)
    try:
        (tgx.pow(2).sum() + tgg.pow(2).sum()).backward()
    except RuntimeError as e:  # torch 2.11 has no double backward for grid_sampler_2d
        if "not implemented" not in str(e):
            raise
        return  # gradgradcheck above has checked lucid's second derivatives
    (lgx.pow(2).sum() + lgg.pow(2).sum()).backward()
    same(lx.grad, x.grad)
    same(lg.grad, g.grad)


def test_grid_sample_strided_inputs_and_large_channels(device):
    x = torch.randn(2, 5, 6, 40, dtype=torch.float64)        # permuted below: non-contiguous input
    g = torch.rand(2, 2, 7, 3, dtype=torch.float64) * 2.4 - 1.2
    for mode in ("bilinear", "nearest"):
        for pm in ("zeros", "reflection"):
            run_both(lambda a, b: LF.grid_sample(a.permute(0, 3, 1, 2), b.transpose(1, 3), mode=mode, padding_mode=pm,
                                                 align_corners=True),
                     lambda a, b: TF.grid_sample(a.permute(0, 3, 1, 2), b.transpose(1, 3), mode=mode, padding_mode=pm,
                                                 align_corners=True), x, g, device=device)


def test_grid_sample_bad_input():
    x, g = lucid.randn(1, 2, 4, 5), lucid.rand(1, 3, 3, 2)
    with pytest.raises(ValueError, match="mode"):
        LF.grid_sample(x, g, mode="linear")
    with pytest.raises(ValueError, match="padding_mode"):
        LF.grid_sample(x, g, padding_mode="wrap")
    with pytest.raises(RuntimeError, match="last dimension"):
        LF.grid_sample(x, lucid.rand(1, 3, 3, 3))
    with pytest.raises(RuntimeError, match="batch size"):
        LF.grid_sample(x, lucid.rand(2, 3, 3, 2))
    with pytest.raises(RuntimeError, match="same number of dimensions"):
        LF.grid_sample(x, lucid.rand(1, 3, 2))
    with pytest.raises(RuntimeError, match="bicubic"):
        LF.grid_sample(lucid.randn(1, 1, 2, 3, 4), lucid.rand(1, 2, 2, 2, 3), mode="bicubic")


@pytest.mark.parametrize("align_corners", [False, True])
def test_affine_grid_matches_torch(align_corners):
    for size, shape in (((2, 3, 4, 5), (2, 2, 3)), ((2, 1, 3, 4, 5), (2, 3, 4)), ((1, 1, 1, 4), (1, 2, 3))):
        theta = torch.randn(*shape, dtype=torch.float64)
        run_both(lambda t: LF.affine_grid(t, size, align_corners=align_corners),
                 lambda t: TF.affine_grid(t, size, align_corners=align_corners), theta)
    lt = lucid.randn(2, 2, 3, dtype=lucid.float64, requires_grad=True)
    assert lucid.autograd.gradcheck(lambda t: LF.affine_grid(t, (2, 1, 3, 4), align_corners=align_corners), (lt,))
    # the usual pairing: sample an image through an affine grid, gradients to theta
    x, th = torch.randn(2, 3, 6, 5, dtype=torch.float64), torch.randn(2, 2, 3, dtype=torch.float64) * 0.5
    run_both(lambda a, t: LF.grid_sample(a, LF.affine_grid(t, (2, 3, 4, 4), align_corners=False), align_corners=False),
             lambda a, t: TF.grid_sample(a, TF.affine_grid(t, (2, 3, 4, 4), align_corners=False), align_corners=False),
             x, th)


def test_affine_grid_bad_input():
    with pytest.raises(ValueError, match="Nx2x3"):
        LF.affine_grid(lucid.randn(2, 3, 3), (2, 1, 4, 4), align_corners=False)
    with pytest.raises(ValueError, match="Nx3x4"):
        LF.affine_grid(lucid.randn(2, 2, 3), (2, 1, 4, 4, 4), align_corners=False)
    with pytest.raises(NotImplementedError):
        LF.affine_grid(lucid.randn(2, 2, 3), (2, 4, 4), align_corners=False)
    with pytest.raises(ValueError, match="floating point"):
        LF.affine_grid(lucid.ones(2, 2, 3, dtype=lucid.int64), (2, 1, 4, 4), align_corners=False)


# ---- shuffles ---------------------------------------------------------------------------------------
def test_pixel_and_channel_shuffle():
    x = torch.randn(2, 12, 3, 4, dtype=torch.float64)
    run_both(lambda a: LF.pixel_shuffle(a, 2), lambda a: TF.pixel_shuffle(a, 2), x)
    run_both(lambda a: LF.pixel_unshuffle(a, 1), lambda a: TF.pixel_unshuffle(a, 1), x)
    y = torch.randn(3, 2, 6, 4, 8, dtype=torch.float64)   # extra leading batch dim
    run_both(lambda a: LF.pixel_unshuffle(a, 2), lambda a: TF.pixel_unshuffle(a, 2), y)
    run_both(lambda a: LF.pixel_shuffle(LF.pixel_unshuffle(a, 2), 2), lambda a: a * 1, y)
    run_both(lambda a: LF.channel_shuffle(a, 3), lambda a: TF.channel_shuffle(a, 3), x)
    run_both(lambda a: LF.channel_shuffle(a, 4), lambda a: torch.nn.ChannelShuffle(4)(a), torch.randn(2, 8, 5))
    for lm, tm in ((lnn.PixelShuffle(2), torch.nn.PixelShuffle(2)), (lnn.PixelUnshuffle(3), torch.nn.PixelUnshuffle(3)),
                   (lnn.ChannelShuffle(2), torch.nn.ChannelShuffle(2))):
        assert repr(lm) == repr(tm)
    run_both(lnn.PixelShuffle(2), torch.nn.PixelShuffle(2), x)
    run_both(lnn.PixelUnshuffle(3), torch.nn.PixelUnshuffle(3), torch.randn(1, 2, 6, 9))
    lx = lucid.randn(1, 8, 2, 3, dtype=lucid.float64, requires_grad=True)
    assert lucid.autograd.gradcheck(lambda a: LF.pixel_shuffle(a, 2), (lx,))


def test_shuffle_bad_input():
    with pytest.raises(RuntimeError, match="divisible by the square"):
        LF.pixel_shuffle(lucid.randn(1, 6, 2, 2), 2)
    with pytest.raises(RuntimeError, match="at least 3 dimensions"):
        LF.pixel_shuffle(lucid.randn(4, 2), 2)
    with pytest.raises(RuntimeError, match="height to be divisible"):
        LF.pixel_unshuffle(lucid.randn(1, 1, 3, 4), 2)
    with pytest.raises(RuntimeError, match="width to be divisible"):
        LF.pixel_unshuffle(lucid.randn(1, 1, 4, 3), 2)
    with pytest.raises(RuntimeError, match="divisible by groups"):
        LF.channel_shuffle(lucid.randn(1, 7, 2), 2)
    with pytest.raises(RuntimeError, match="positive"):
        LF.channel_shuffle(lucid.randn(1, 4, 2), 0)
    for fn in (lambda: TF.pixel_shuffle(torch.randn(1, 6, 2, 2), 2),
               lambda: TF.channel_shuffle(torch.randn(1, 7, 2), 2)):
        with pytest.raises(RuntimeError):
            fn()


# ---- padding layers ------------------------------------------------------------------------------------
PADS = [("ZeroPad1d", (2, 1), (2, 3, 5)), ("ZeroPad2d", (1, 0, 2, 1), (2, 3, 4, 5)), ("ZeroPad3d", 1, (1, 2, 2, 3, 2)),
        ("ConstantPad1d", 3, (3, 4)), ("ConstantPad2d", (1, 2, 0, 1), (3, 4, 5)),
        ("ConstantPad3d", (1, 0, 0, 1, 2, 0), (1, 1, 2, 3, 2)),
        ("ReflectionPad1d", (2, 3), (2, 3, 5)), ("ReflectionPad2d", 2, (1, 2, 4, 5)),
        ("ReflectionPad3d", 1, (1, 2, 2, 3, 4)),
        ("ReplicationPad1d", (3, 1), (3, 4)), ("ReplicationPad2d", (1, 2, 3, 0), (2, 2, 3, 4)),
        ("ReplicationPad3d", (1, 0, 2, 1, 0, 2), (1, 1, 2, 3, 2)),
        ("CircularPad1d", 2, (2, 3, 4)), ("CircularPad2d", (1, 2, 2, 1), (1, 2, 3, 4)),
        ("CircularPad3d", 1, (1, 1, 2, 3, 4)),
        ("ZeroPad2d", (-1, 2, 1, -2), (1, 2, 4, 5))]


@pytest.mark.parametrize("name,padding,shape", PADS)
def test_padding_layers_match_torch(name, padding, shape):
    args = (padding, 1.5) if name.startswith("Constant") else (padding,)
    lm, tm = getattr(lnn, name)(*args), getattr(torch.nn, name)(*args)
    assert repr(lm) == repr(tm)
    assert lm.padding == tm.padding
    run_both(lm, tm, torch.randn(*shape, dtype=torch.float64))


def test_padding_layers_bad_input():
    with pytest.raises(ValueError, match="expected 3D or 4D input"):
        lnn.CircularPad2d(1)(lucid.randn(4, 4))
    with pytest.raises(RuntimeError, match="Padding size should be less than"):
        lnn.ReflectionPad1d(4)(lucid.randn(1, 2, 3))
    with pytest.raises(ValueError):
        torch.nn.CircularPad2d(1)(torch.randn(4, 4))


# ---- the engine's fused resample op ---------------------------------------------------------------------
def test_resample_taps_op_is_its_adjoints_adjoint(device):
    C = lucid._C
    idx = lucid.tensor([[0, 1, 1, 3, 2], [1, 2, 3, 3, 0]], device=device)
    w = lucid.tensor([[0.5, 1.0, -2.0, 0.25, 1.5], [0.5, 0.0, 3.0, 0.75, -1.0]], dtype=lucid.float64, device=device)
    for dim in (0, 1, 2):
        shape = [3, 2, 2]
        shape[dim] = 4
        x = lucid.randn(*shape, dtype=lucid.float64).to(device).requires_grad_()
        y = C._resample_taps(x, dim, idx, w)
        wshape = [5 if d == dim else 1 for d in range(3)]
        ref = sum(x.index_select(dim, idx[k]) * w[k].reshape(wshape) for k in range(2))
        same(y, to_torch(ref.detach()))
        g = lucid.randn(*y.shape, dtype=lucid.float64).to(device)
        gx = C._resample_taps_adjoint(g, dim, idx, w, 4)
        assert abs(float((y * g).sum()) - float((x * gx).sum())) < 1e-9        # <Fx, g> = <x, F^T g>
        assert lucid.autograd.gradcheck(lambda a: C._resample_taps(a, dim, idx, w), (x,))
        assert lucid.autograd.gradgradcheck(lambda a: C._resample_taps(a, dim, idx, w), (x,))
        gg = g.clone().requires_grad_()
        assert lucid.autograd.gradcheck(lambda a: C._resample_taps_adjoint(a, dim, idx, w, 4), (gg,))


def test_resample_taps_op_bad_input(device):
    C = lucid._C
    x = lucid.randn(2, 4).to(device)
    idx, w = lucid.tensor([[0, 4]], device=device), lucid.ones(1, 2).to(device)
    with pytest.raises(IndexError, match="tap index 4 is out of range for size 4"):
        C._resample_taps(x, 1, idx, w).tolist()  # (the GPU raises at the next sync)
    with pytest.raises(IndexError, match="resample_taps_adjoint.*tap index -1 is out of range for size 4"):
        C._resample_taps_adjoint(lucid.ones(2, 2).to(device), 1, lucid.tensor([[0, -1]], device=device), w, 4).tolist()
    if device != "cpu":
        return
    with pytest.raises(RuntimeError, match="dtype"):
        C._resample_taps(x, 1, lucid.tensor([[0, 1]]), lucid.ones(1, 2, dtype=lucid.float64))
    with pytest.raises(RuntimeError, match="int64"):
        C._resample_taps(x, 1, lucid.tensor([[0, 1]], dtype=lucid.int32), w)
    with pytest.raises(RuntimeError, match="taps"):
        C._resample_taps(x, 1, lucid.tensor([0, 1]), lucid.ones(2))
    with pytest.raises(RuntimeError, match="float32 or float64"):
        C._resample_taps(lucid.ones(2, 4, dtype=lucid.int64), 1, lucid.tensor([[0, 1]]),
                         lucid.ones(1, 2, dtype=lucid.int64))
    with pytest.raises(IndexError):
        C._resample_taps(x, 2, lucid.tensor([[0, 1]]), w)
