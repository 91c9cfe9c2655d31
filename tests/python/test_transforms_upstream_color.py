"""upstream Lucid's colour functions and photometric / filter / noise transforms in
lucid.utils.transforms, against colorsys and NumPy computations written out here."""

import colorsys
import math

import numpy as np
import pytest

import lucid
import lucid.utils.transforms as T
from lucid.utils.transforms import functional as F


def rgb(shape=(3, 7, 9), seed=0):
    return np.random.default_rng(seed).random(shape).astype(np.float32)


def per_pixel(fn, img):
    """fn(r, g, b) -> 3 values applied to every pixel of img [3, H, W]."""
    flat = img.reshape(3, -1).T
    return np.array([fn(*p) for p in flat]).T.reshape(img.shape)


# ---- colour spaces ---------------------------------------------------------------------------------
def test_rgb_to_hsv_matches_colorsys_and_round_trips():
    x = rgb()
    x[:, 0, 0] = 0.5  # a grey pixel: hue 0
    h, s, v = F.rgb_to_hsv(lucid.tensor(x))
    assert h.shape == (1, 7, 9)
    ref = per_pixel(colorsys.rgb_to_hsv, x)
    np.testing.assert_allclose(np.concatenate([h.numpy(), s.numpy(), v.numpy()]), ref, atol=1e-5)
    np.testing.assert_allclose(F.hsv_to_rgb(h, s, v).numpy(), x, atol=1e-5)
    # batches, and a hue out of [0, 1) wraps
    hb, sb, vb = F.rgb_to_hsv(lucid.tensor(np.stack([x, x[::-1]])))
    assert hb.shape == (2, 1, 7, 9)
    np.testing.assert_allclose(F.hsv_to_rgb(h + 1.0, s, v).numpy(), x, atol=1e-5)
    with pytest.raises(ValueError, match="expected 3 channels, got 1"):
        F.rgb_to_hsv(lucid.rand(1, 4, 4))
    with pytest.raises(ValueError, match="h, s and v should have the same shape"):
        F.hsv_to_rgb(h, s[..., :3], v)


def test_adjust_hsv_shifts_on_opencv_scales():
    x = rgb()

    def ref(r, g, b):
        h, s, v = colorsys.rgb_to_hsv(r, g, b)
        return colorsys.hsv_to_rgb((h + 30 / 180) % 1, min(max(s - 40 / 255, 0), 1), min(max(v + 25 / 255, 0), 1))
    np.testing.assert_allclose(F.adjust_hsv(lucid.tensor(x), 30, -40, 25).numpy(), per_pixel(ref, x), atol=1e-5)
    out = T.HueSaturationValue((30, 30), (-40, -40), (25, 25), p=1)(lucid.tensor(x))
    np.testing.assert_allclose(out.numpy(), per_pixel(ref, x), atol=1e-5)


def test_adjust_sharpness_autocontrast_posterize_solarize_invert():
    x = rgb((3, 6, 8))
    # torchvision's sharpness: the interior blended with [[1, 1, 1], [1, 5, 1], [1, 1, 1]] / 13
    k = np.array([[1, 1, 1], [1, 5, 1], [1, 1, 1]]) / 13
    smooth = x.copy()
    for i in range(1, 5):
        for j in range(1, 7):
            smooth[:, i, j] = (x[:, i - 1:i + 2, j - 1:j + 2] * k).sum((1, 2))
    for factor in (0.0, 0.5, 2.0):
        ref = np.clip(factor * x + (1 - factor) * smooth, 0, 1)
        np.testing.assert_allclose(F.adjust_sharpness(lucid.tensor(x), factor).numpy(), ref, atol=1e-5)
    np.testing.assert_allclose(F.adjust_sharpness(lucid.tensor(x), factor=2.0).numpy(),
                               F.adjust_sharpness(lucid.tensor(x), 2.0).numpy())
    with pytest.raises(ValueError, match="sharpness_factor should be a non-negative number, got -1"):
        F.adjust_sharpness(lucid.tensor(x), -1)
    flat = x.copy()
    flat[1] = 0.3
    lo, hi = flat.min((1, 2), keepdims=True), flat.max((1, 2), keepdims=True)
    ref = np.where(hi > lo, (flat - lo) / np.where(hi > lo, hi - lo, 1), flat)
    np.testing.assert_allclose(F.autocontrast(lucid.tensor(flat)).numpy(), ref, atol=1e-5)
    levels = np.round(x * 255).astype(np.int64)
    np.testing.assert_allclose(F.posterize(lucid.tensor(x), 3).numpy(), (levels & 0b11100000) / 255, atol=1e-6)
    u8 = lucid.tensor(levels.astype(np.uint8))
    np.testing.assert_array_equal(F.posterize(u8, bits=2).numpy(), levels & 0b11000000)
    np.testing.assert_allclose(F.solarize(lucid.tensor(x), 0.4).numpy(), np.where(x >= 0.4, 1 - x, x), atol=1e-6)
    np.testing.assert_array_equal(F.invert(u8).numpy(), 255 - levels)
    with pytest.raises(ValueError, match="num_bits should be an int in \\[0, 8\\], got 9"):
        F.posterize(lucid.tensor(x), 9)
    with pytest.raises(ValueError, match="threshold should be a number at most 1.0"):
        F.solarize(lucid.tensor(x), 128)


def np_equalize(channel, clip=None):
    levels = np.round(np.clip(channel, 0, 1) * 255).astype(int)
    hist = np.bincount(levels.ravel(), minlength=256).astype(np.float64)
    if clip is not None:
        cap = clip * levels.size / 256
        excess = np.maximum(hist - cap, 0).sum()
        hist = np.minimum(hist, cap) + excess / 256
    cdf = np.cumsum(hist)
    cdf_min = cdf[hist > 0].min()
    if cdf[-1] == cdf_min:
        return channel
    return (cdf[levels] - cdf_min) / (cdf[-1] - cdf_min)


def test_equalize_matches_the_cdf_formula():
    x = rgb((2, 3, 10, 12)) ** 2
    x[1, 2] = 0.25  # a flat channel is left alone
    out = F.equalize(lucid.tensor(x)).numpy()
    for b in range(2):
        for c in range(3):
            np.testing.assert_allclose(out[b, c], np_equalize(x[b, c]), atol=1e-5)
    out = F.equalize(lucid.tensor(x[0]), clip_limit=2.0).numpy()
    np.testing.assert_allclose(out[0], np_equalize(x[0, 0], clip=2.0), atol=1e-5)
    np.testing.assert_allclose(T.Equalize(p=1)(lucid.tensor(x)).numpy(), F.equalize(lucid.tensor(x)).numpy())


def np_clahe(levels, clip_limit, tiles_y, tiles_x):
    """OpenCV's CLAHE (imgproc/src/clahe.cpp) on uint8 levels [H, W], written with loops."""
    h, w = levels.shape
    th, tw = -(-h // tiles_y), -(-w // tiles_x)
    padded = np.pad(levels, ((0, th * tiles_y - h), (0, tw * tiles_x - w)), mode="reflect")
    area = th * tw
    limit = max(int(clip_limit * area / 256), 1) if clip_limit > 0 else None
    lut = np.zeros((tiles_y, tiles_x, 256))
    for ty in range(tiles_y):
        for tx in range(tiles_x):
            hist = np.bincount(padded[ty * th:(ty + 1) * th, tx * tw:(tx + 1) * tw].ravel(), minlength=256)
            if limit is not None:
                clipped = int(np.maximum(hist - limit, 0).sum())
                hist = np.minimum(hist, limit) + clipped // 256
                residual = clipped - (clipped // 256) * 256
                step = max(256 // residual, 1) if residual else 256
                i = 0
                while i < 256 and residual > 0:
                    hist[i] += 1
                    i += step
                    residual -= 1
            lut[ty, tx] = np.clip(np.round(np.cumsum(hist) * 255.0 / area), 0, 255)
    # As OpenCV, the blending runs in float32: coordinate * (1 / tile size) - 0.5.
    f32, lut = np.float32, lut.astype(np.float32)
    out = np.zeros((h, w), np.float32)
    for y in range(h):
        fy = f32(y) * (f32(1) / f32(th)) - f32(0.5)
        y1 = math.floor(fy)
        ya = fy - f32(y1)
        y1, y2 = max(y1, 0), min(y1 + 1, tiles_y - 1)
        for x in range(w):
            fx = f32(x) * (f32(1) / f32(tw)) - f32(0.5)
            x1 = math.floor(fx)
            xa = fx - f32(x1)
            x1, x2 = max(x1, 0), min(x1 + 1, tiles_x - 1)
            v = levels[y, x]
            out[y, x] = ((lut[y1, x1, v] * (f32(1) - xa) + lut[y1, x2, v] * xa) * (f32(1) - ya)
                         + (lut[y2, x1, v] * (f32(1) - xa) + lut[y2, x2, v] * xa) * ya)
    return np.clip(np.round(out), 0, 255)


@pytest.mark.parametrize("shape, tiles, clip", [((16, 24), (2, 3), 2.0), ((17, 23), (3, 2), 1.0),
                                                ((12, 12), (2, 2), 0.0), ((20, 21), (4, 4), 40.0)])
def test_clahe_matches_opencvs_algorithm(shape, tiles, clip):
    x = (rgb((1,) + shape, seed=3) ** 3).astype(np.float32)
    levels = np.round(x[0] * 255).astype(np.int64)
    out = F.clahe(lucid.tensor(x), clip, tiles).numpy()[0]
    np.testing.assert_allclose(out * 255, np_clahe(levels, clip, *tiles), atol=1e-3)


def test_clahe_on_rgb_equalizes_the_value_keeping_hue_and_saturation():
    x = rgb((3, 16, 16), seed=4) * 0.5
    out = F.clahe(lucid.tensor(x), 3.0, (2, 2))
    h, s, v = F.rgb_to_hsv(lucid.tensor(x))
    h2, s2, v2 = F.rgb_to_hsv(out)
    np.testing.assert_allclose(F.hsv_to_rgb(h, s, v2).numpy(), out.numpy(), atol=1e-5)
    ref = np_clahe(np.round(v.numpy()[0] * 255).astype(np.int64), 3.0, 2, 2) / 255
    np.testing.assert_allclose(v2.numpy()[0], ref, atol=1e-5)
    with pytest.raises(ValueError, match="expected 1 or 3 channels, got 2"):
        F.clahe(lucid.rand(2, 8, 8))
    with pytest.raises(ValueError, match="more tiles than the 4x4 image has pixels"):
        F.clahe(lucid.rand(1, 4, 4), 2.0, (8, 8))


# ---- photometric transforms ----------------------------------------------------------------------------
def test_photometric_formulas():
    x = rgb()
    lx = lucid.tensor(x)
    out = T.RandomBrightnessContrast((0.1, 0.1), (0.3, 0.3), p=1)(lx)
    np.testing.assert_allclose(out.numpy(), np.clip(x * 1.3 + 0.1, 0, 1), atol=1e-6)
    np.testing.assert_allclose(T.RandomBrightness((-0.2, -0.2), p=1)(lx).numpy(), np.clip(x - 0.2, 0, 1), atol=1e-6)
    np.testing.assert_allclose(T.RandomContrast((0.5, 0.5), p=1)(lx).numpy(), np.clip(x * 1.5, 0, 1), atol=1e-6)
    np.testing.assert_allclose(T.RandomGamma((150, 150), p=1)(lx).numpy(), x ** 1.5, atol=1e-5)
    out = T.RGBShift((51, 51), (-25.5, -25.5), (0, 0), p=1)(lx)
    np.testing.assert_allclose(out.numpy(), np.clip(x + np.array([0.2, -0.1, 0])[:, None, None], 0, 1), atol=1e-6)
    gray = 0.299 * x[0] + 0.587 * x[1] + 0.114 * x[2]
    np.testing.assert_allclose(T.ToGray(p=1)(lx).numpy(), np.stack([gray] * 3), atol=1e-6)
    sepia = np.array([[0.393, 0.769, 0.189], [0.349, 0.686, 0.168], [0.272, 0.534, 0.131]])
    np.testing.assert_allclose(T.ToSepia(p=1)(lx).numpy(), np.clip(np.einsum("ij,jhw->ihw", sepia, x), 0, 1),
                               atol=1e-6)
    np.testing.assert_allclose(T.Solarize(threshold=102, p=1)(lx).numpy(), np.where(x >= 0.4, 1 - x, x), atol=1e-6)
    np.testing.assert_allclose(T.InvertImg(p=1)(lx).numpy(), 1 - x, atol=1e-6)
    np.testing.assert_allclose(T.Posterize(2, mode="float", p=1)(lx).numpy(), np.floor(x * 4) / 4, atol=1e-6)
    np.testing.assert_allclose(T.Posterize(2, p=1)(lx).numpy(), (np.round(x * 255).astype(int) & 192) / 255,
                               atol=1e-6)
    shuffled = T.ChannelShuffle(p=1)(lx).numpy()
    assert sorted(c.tobytes() for c in shuffled) == sorted(c.tobytes() for c in x)
    dropped = T.ChannelDropout((2, 2), fill_value=0.5, p=1)(lx).numpy()
    assert sum(np.all(c == 0.5) for c in dropped) == 2
    with pytest.raises(ValueError, match="can drop up to 3 channels, so the image needs more than that"):
        T.ChannelDropout((1, 3), p=1)(lx)
    u8 = lucid.tensor((x * 255).astype(np.uint8))
    np.testing.assert_allclose(T.ToFloat()(u8).numpy(), (x * 255).astype(np.uint8) / 255, atol=1e-6)
    np.testing.assert_array_equal(T.FromFloat(dtype="uint8")(lx).numpy(), (x * 255).astype(np.uint8))
    with pytest.raises(ValueError, match="FromFloat: unknown dtype 'uint4'"):
        T.FromFloat(dtype="uint4")


def test_color_jitter_and_fancy_pca():
    x = rgb()
    lx = lucid.tensor(x)
    out = T.ColorJitter(brightness=(0.5, 0.5), contrast=0, saturation=0, hue=0, p=1.0)(lx)
    np.testing.assert_allclose(out.numpy(), x * 0.5, atol=1e-6)
    assert T.ColorJitter(p=0.0)(lx) is lx
    lucid.manual_seed(0)
    tf = T.FancyPCA(alpha=0.3, p=1)
    alphas = tf.make_params(lx)
    out = tf._apply_image(lx, alphas).numpy()
    pixels = x.reshape(3, -1)
    values, vectors = np.linalg.eigh(np.cov(pixels))
    np.testing.assert_allclose(out, np.clip(x + (vectors @ (np.array(alphas) * values))[:, None, None], 0, 1),
                               atol=1e-5)


def test_tone_curve_ends_fixed_and_clahe_transform():
    x = lucid.tensor(np.linspace(0, 1, 3 * 4 * 5, dtype=np.float32).reshape(3, 4, 5))
    out = T.RandomToneCurve(scale=0.2, p=1)(x).numpy().ravel()
    assert abs(out[0]) < 1e-6 and abs(out[-1] - 1) < 1e-6 and np.all(np.diff(out) >= -1e-6)
    y = lucid.tensor(rgb((1, 16, 16)))
    np.testing.assert_allclose(T.CLAHE(2.0, (2, 2), p=1)(y).numpy(), F.clahe(y, 2.0, (2, 2)).numpy())


# ---- filters -------------------------------------------------------------------------------------------
def np_correlate(x, kernel, mode="reflect"):
    kh, kw = kernel.shape
    p = np.pad(x, ((0, 0), (kh // 2, kh - 1 - kh // 2), (kw // 2, kw - 1 - kw // 2)), mode=mode)
    return sum(kernel[i, j] * p[:, i:i + x.shape[1], j:j + x.shape[2]] for i in range(kh) for j in range(kw))


def test_blurs_match_their_kernels():
    x = rgb((3, 10, 11))
    lx = lucid.tensor(x)
    np.testing.assert_allclose(T.Blur((5, 5), p=1)(lx).numpy(), np_correlate(x, np.full((5, 5), 1 / 25)), atol=1e-5)
    med = T.MedianBlur((3, 3), p=1)(lx).numpy()
    p = np.pad(x, ((0, 0), (1, 1), (1, 1)), mode="edge")
    ref = np.median(np.stack([p[:, i:i + 10, j:j + 11] for i in range(3) for j in range(3)]), 0)
    np.testing.assert_allclose(med, ref, atol=1e-6)
    disc = np.array([[1.0 if (i - 2) ** 2 + (j - 2) ** 2 <= 4 else 0 for j in range(5)] for i in range(5)])
    np.testing.assert_allclose(T.Defocus((2, 2), p=1)(lx).numpy(), np_correlate(x, disc / disc.sum()), atol=1e-5)
    out = T.GaussianBlur((5, 5), (1.2, 1.2), p=1)(lx).numpy()
    np.testing.assert_allclose(out, F.gaussian_blur(lx, 1.2, 5).numpy(), atol=1e-6)
    lucid.manual_seed(1)
    motion = T.MotionBlur((7, 7), p=1)
    kernel = np.array(motion.make_params(lx))
    assert kernel.shape == (7, 7) and abs(kernel.sum() - 1) < 1e-6 and kernel[3, 3] > 0
    np.testing.assert_allclose(motion._apply_image(lx, kernel.tolist()).numpy(), np_correlate(x, kernel), atol=1e-5)
    with pytest.raises(ValueError, match="blur_limit \\(4, 4\\) holds no odd kernel size"):
        T.Blur((4, 4))


def test_sharpening_filters():
    x = rgb((3, 9, 9))
    lx = lucid.tensor(x)
    ident = np.zeros((3, 3))
    ident[1, 1] = 1
    effect = np.array([[-1, -1, -1], [-1, 8.7, -1], [-1, -1, -1]])
    out = T.Sharpen((0.4, 0.4), (0.7, 0.7), p=1)(lx).numpy()
    np.testing.assert_allclose(out, np.clip(np_correlate(x, 0.6 * ident + 0.4 * effect), 0, 1), atol=1e-5)
    s = 0.5
    effect = np.array([[-1 - s, -s, 0], [-s, 1, s], [0, s, 1 + s]])
    out = T.Emboss((0.3, 0.3), (s, s), p=1)(lx).numpy()
    np.testing.assert_allclose(out, np.clip(np_correlate(x, 0.7 * ident + 0.3 * effect), 0, 1), atol=1e-5)
    np.testing.assert_allclose(T.UnsharpMask(threshold=255, p=1)(lx).numpy(), x, atol=1e-6)  # nothing exceeds it
    out = T.UnsharpMask((3, 3), (1.0, 1.0), (0.5, 0.5), threshold=0, p=1)(lx).numpy()
    blur = F.gaussian_blur(lx, 1.0, 3).numpy()
    mask = F.gaussian_blur(lucid.tensor((np.abs(x - blur) * 255 > 0).astype(np.float32)), 1.0, 3).numpy()
    np.testing.assert_allclose(out, np.clip(x + 0.5 * (x - blur) * mask, 0, 1), atol=1e-5)


def test_ringing_overshoot_uses_a_normalised_sinc_kernel():
    from lucid.utils.transforms._filters import _bessel_j1, sinc_kernel
    assert abs(_bessel_j1(1.0) - 0.4400505857449335) < 1e-9 and abs(_bessel_j1(5.0) + 0.3275791375914652) < 1e-9
    k = np.array(sinc_kernel(math.pi / 3, 9))
    assert abs(k.sum() - 1) < 1e-9 and np.allclose(k, k.T) and k.min() < 0  # the negative lobes ring
    out = T.RingingOvershoot((9, 9), p=1)(lucid.full((3, 12, 12), 0.5)).numpy()
    np.testing.assert_allclose(out, 0.5, atol=1e-5)  # a flat image stays flat


def test_downscale_and_zoom_blur():
    x = rgb((3, 8, 8))
    out = T.Downscale(0.5, 0.5, p=1)(lucid.tensor(x)).numpy()
    np.testing.assert_array_equal(out, np.repeat(np.repeat(x[:, ::2, ::2], 2, 1), 2, 2))
    np.testing.assert_allclose(T.ZoomBlur(max_factor=1.0, p=1)(lucid.tensor(x)).numpy(), x, atol=1e-6)
    with pytest.raises(ValueError, match="expected 0 < scale_min <= scale_max < 1"):
        T.Downscale(0.6, 0.3)


# ---- noise and dropout -----------------------------------------------------------------------------------
def test_noise_statistics():
    flat = lucid.full((3, 64, 64), 0.5)
    lucid.manual_seed(0)
    noise = T.GaussNoise(var_limit=(100, 100), mean=10, p=1)(flat).numpy() - 0.5
    assert abs(noise.mean() - 10 / 255) < 2e-3 and abs(noise.std() - 10 / 255) < 2e-3
    out = T.MultiplicativeNoise((0.8, 1.2), p=1)(flat).numpy()
    assert np.all(out == out.flat[0]) and 0.4 <= out.flat[0] <= 0.6
    out = T.MultiplicativeNoise((0.8, 1.2), elementwise=True, p=1)(flat).numpy()
    assert out.min() >= 0.4 and out.max() <= 0.6 and out.std() > 0.02
    out = T.ISONoise(p=1)(lucid.tensor(rgb((3, 16, 16)))).numpy()
    assert out.shape == (3, 16, 16) and out.min() >= 0 and out.max() <= 1
    dropped = T.PixelDropout(0.25, drop_value=-1.0, p=1)(flat).numpy()
    assert 0.2 < (dropped[0] == -1).mean() < 0.3 and np.array_equal(dropped[0] == -1, dropped[2] == -1)
    per_channel = T.PixelDropout(0.25, per_channel=True, p=1)(flat).numpy()
    assert not np.array_equal(per_channel[0] == 0, per_channel[1] == 0)


def test_dropout_holes():
    ones = lucid.ones(3, 20, 24)
    out = T.CoarseDropout(max_holes=1, max_height=5, max_width=7, fill_value=0.25, p=1)(ones).numpy()
    ys, xs = np.nonzero(out[0] == 0.25)
    assert (ys.max() - ys.min() + 1, xs.max() - xs.min() + 1, len(ys)) == (5, 7, 35)
    out = T.CoarseDropout(max_holes=2, max_height=0.5, max_width=0.25, fill_value=(0.1, 0.2, 0.3), p=1)(ones).numpy()
    assert np.all(np.isclose(out[1], 0.2) | (out[1] == 1.0)) and np.isclose(out[1], 0.2).sum() >= 60
    out = T.GridDropout(ratio=0.5, unit_size=8, p=1)(ones).numpy()[0]
    ref = np.ones((20, 24))
    for top in range(0, 20, 8):
        for left in range(0, 24, 8):
            ref[top:top + 4, left:left + 4] = 0
    np.testing.assert_array_equal(out, ref)
    out = T.XYMasking(num_masks_x=2, num_masks_y=1, mask_x_length=3, mask_y_length=2, p=1)(ones).numpy()[0]
    assert (out == 0).all(0).sum() in (3, 4, 5, 6) and (out == 0).all(1).sum() == 2
    with pytest.raises(ValueError, match="at least one of num_masks_x and num_masks_y should be positive"):
        T.XYMasking()


def test_random_erasing_is_torchvisions():
    x = lucid.rand(2, 3, 16, 16)
    lucid.manual_seed(3)
    out = T.RandomErasing(p=1.0, value=(0.1, 0.2, 0.3))(x).numpy()
    hit = out != x.numpy()
    assert hit.any() and np.array_equal(hit[0, 0], hit[1, 2])  # one rectangle for the whole batch
    np.testing.assert_allclose(out[1, 2][hit[1, 2]], 0.3, atol=1e-6)
    assert T.RandomErasing(p=0.0)(x) is x
    y = x.clone()
    assert T.RandomErasing(p=1.0, value="random", inplace=True)(y) is y
    assert repr(T.RandomErasing()) == "RandomErasing(p=0.5, scale=(0.02, 0.33), ratio=(0.3, 3.3), value=0, " \
                                      "inplace=False)"
    with pytest.raises(ValueError, match="If value is str, it should be 'random'"):
        T.RandomErasing(value="noise")
    with pytest.raises(ValueError, match="Scale should be between 0 and 1"):
        T.RandomErasing(scale=(0.1, 2))
    with pytest.raises(ValueError, match="single value or 3 \\(number of input channels\\)"):
        T.RandomErasing(p=1.0, value=(1, 2))(x)
    # a typed sample: only the image is erased
    mask = T.Mask(lucid.ones(16, 16))
    out = T.RandomErasing(p=1.0)({"image": T.Image(x[0]), "mask": mask})
    assert out["mask"].data is mask.data
