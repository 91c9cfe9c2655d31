"""Upstream Lucid's functional colour ops on float images [..., C, H, W] with values in
[0, 1]: rgb_to_hsv / hsv_to_rgb, adjust_hsv, adjust_sharpness, autocontrast, equalize,
clahe, posterize, solarize, invert, rescale. Part of lucid.utils.transforms.functional.

posterize, solarize, invert, autocontrast and adjust_sharpness also take torchvision's
arguments and integer (uint8) images, as torchvision's functions of those names do.
"""

import lucid
from ...nn import functional as _F
from ._base import MISSING, factor_argument, is_number
from ._functional_warp import as_nchw, pad_reflect101
from ._tv_color import _hsv2rgb, _rgb2hsv

def _check(img, where, channels=None, allow_int=False):
    if not isinstance(img, lucid.Tensor):
        raise TypeError(f"{where}: expected an image tensor [..., C, H, W], got {type(img).__name__}")
    if img.ndim < 3:
        raise ValueError(f"{where}: expected an image tensor [..., C, H, W], got shape {list(img.shape)}")
    if not img.is_floating_point() and not (allow_int and img.dtype == lucid.uint8):
        kinds = "a float or uint8" if allow_int else "a float"
        raise TypeError(f"{where}: expected {kinds} image, got dtype {img.dtype}")
    if channels is not None and img.shape[-3] not in channels:
        raise ValueError(f"{where}: expected {' or '.join(map(str, channels))} channels, got {img.shape[-3]} "
                         f"(shape {list(img.shape)})")


def _bound(img):
    return 1.0 if img.is_floating_point() else 255.0


def rgb_to_hsv(img):
    """(h, s, v) of an RGB image [..., 3, H, W], each [..., 1, H, W]; hue in [0, 1) (0 for
    grey pixels), as colorsys / PIL."""
    _check(img, "rgb_to_hsv", (3,))
    return tuple(_rgb2hsv(img).split(1, dim=-3))


def hsv_to_rgb(h, s, v):
    """The RGB image [..., 3, H, W] of hue / saturation / value tensors [..., 1, H, W] (hue
    wraps modulo 1); values clamped to [0, 1]."""
    for name, t in (("h", h), ("s", s), ("v", v)):
        if not isinstance(t, lucid.Tensor) or t.ndim < 3 or t.shape[-3] != 1:
            raise ValueError(f"hsv_to_rgb: {name} should be a tensor [..., 1, H, W], got "
                             f"{list(t.shape) if isinstance(t, lucid.Tensor) else type(t).__name__}")
    if not (h.shape == s.shape == v.shape):
        raise ValueError(f"hsv_to_rgb: h, s and v should have the same shape, got {list(h.shape)}, "
                         f"{list(s.shape)}, {list(v.shape)}")
    hue = h - lucid.floor(h)
    return _hsv2rgb(lucid.cat([hue, s, v], -3)).clamp(0.0, 1.0)


def adjust_hsv(img, hue_shift, sat_shift, val_shift):
    """Shifts hue, saturation and value of an RGB image by amounts on OpenCV's scales
    (hue: 180 = a full turn; saturation, value: 255 = the full range), as Albumentations'
    HueSaturationValue: hue wraps, saturation and value are clamped to [0, 1]."""
    _check(img, "adjust_hsv", (3,))
    h, s, v = rgb_to_hsv(img)
    return hsv_to_rgb(h + hue_shift / 180.0, (s + sat_shift / 255.0).clamp(0.0, 1.0),
                      (v + val_shift / 255.0).clamp(0.0, 1.0))


def adjust_sharpness(img, sharpness_factor=MISSING, *, factor=MISSING):
    """Blends with a smoothed copy (PIL's SMOOTH kernel [[1, 1, 1], [1, 5, 1], [1, 1, 1]] / 13
    on the interior; the 1-pixel border is kept): 0 gives the smoothed image, 1 the image,
    above 1 sharpens. As torchvision's adjust_sharpness (factor= is upstream's name)."""
    value = factor_argument(sharpness_factor, factor, "sharpness_factor", "adjust_sharpness")
    if not is_number(value) or value < 0:
        raise ValueError(f"adjust_sharpness: sharpness_factor should be a non-negative number, got {value!r}")
    _check(img, "adjust_sharpness", allow_int=True)
    h, w = img.shape[-2], img.shape[-1]
    if h <= 2 or w <= 2:
        return img
    x, restore = as_nchw(img.to(lucid.float32) if not img.is_floating_point() else img)
    kernel = lucid.tensor([[1.0, 1.0, 1.0], [1.0, 5.0, 1.0], [1.0, 1.0, 1.0]], dtype=x.dtype, device=x.device) / 13
    c = x.shape[1]
    inner = _F.conv2d(x, kernel.reshape(1, 1, 3, 3).expand(c, 1, 3, 3), groups=c)
    if not img.is_floating_point():
        inner = lucid.round(inner)
    smooth = x.clone()
    smooth[..., 1:-1, 1:-1] = inner
    out = (value * x + (1 - value) * smooth).clamp(0, _bound(img))
    return restore(out).to(img.dtype)


def autocontrast(img):
    """Each channel stretched so its minimum becomes 0 and its maximum the top of the range
    (channels with one value are left alone), as torchvision."""
    _check(img, "autocontrast", allow_int=True)
    x = img if img.is_floating_point() else img.to(lucid.float32)
    low, high = x.amin((-2, -1), keepdim=True), x.amax((-2, -1), keepdim=True)
    flat = high == low
    scale = _bound(img) / lucid.where(flat, lucid.ones_like(high), high - low)
    low = lucid.where(flat, lucid.zeros_like(low), low)
    scale = lucid.where(flat, lucid.ones_like(scale), scale)
    out = ((x - low) * scale).clamp(0, _bound(img))
    return out if img.is_floating_point() else lucid.round(out).to(img.dtype)


def _levels(img):
    """The 256 levels of a [0, 1] image, as int64."""
    return lucid.round(img.clamp(0.0, 1.0) * 255).to(lucid.int64)


def _clip_histograms(hist, limit):
    """Histograms [T, 256] with counts above limit [T, 1] cut and the excess spread evenly."""
    clipped = hist.minimum(limit)
    excess = (hist - clipped).sum(-1, keepdim=True)
    return clipped + excess / 256


def equalize(img, clip_limit=None):
    """Histogram equalisation of each channel of a [0, 1] image (levels quantised to 256):
    a level maps to (cdf - cdf_min) / (pixels - cdf_min) of the range, as cv2.equalizeHist
    without the final rounding; flat channels are left alone. clip_limit: counts above
    clip_limit * pixels / 256 are cut and spread over all levels first."""
    _check(img, "equalize")
    if clip_limit is not None and (not is_number(clip_limit) or clip_limit <= 0):
        raise ValueError(f"equalize: clip_limit should be a positive number or None, got {clip_limit!r}")
    h, w = img.shape[-2], img.shape[-1]
    flat_img = img.reshape(-1, h * w)
    n = flat_img.shape[0]
    levels = _levels(flat_img)
    offsets = (lucid.arange(n, device=img.device) * 256).reshape(n, 1)
    hist = lucid.bincount((levels + offsets).reshape(-1), minlength=n * 256).reshape(n, 256).to(img.dtype)
    if clip_limit is not None:
        hist = _clip_histograms(hist, lucid.full((n, 1), clip_limit * h * w / 256, dtype=img.dtype,
                                                 device=img.device))
    cdf = hist.cumsum(-1)
    big = lucid.full_like(cdf, float("inf"))
    cdf_min = lucid.where(hist > 0, cdf, big).amin(-1, keepdim=True)
    denom = cdf[:, -1:] - cdf_min
    lut = (cdf - cdf_min) / lucid.where(denom > 0, denom, lucid.ones_like(denom))
    mapped = lucid.gather(lut.clamp(0.0, 1.0), 1, levels)
    out = lucid.where(denom > 0, mapped, flat_img)
    return out.reshape(img.shape)


def _clahe_levels(levels, clip_limit, tiles_y, tiles_x):
    """OpenCV's CLAHE of uint8-like levels [N, H, W] (int64) -> levels [N, H, W] (float)."""
    n, h, w = levels.shape
    dev = levels.device
    # OpenCV pads the image (reflect_101) to a whole number of tiles.
    th, tw = -(-h // tiles_y), -(-w // tiles_x)
    padded = pad_reflect101(levels, 0, tw * tiles_x - w, 0, th * tiles_y - h)
    tile_y = (lucid.arange(th * tiles_y, device=dev) // th).reshape(-1, 1)
    tile_x = (lucid.arange(tw * tiles_x, device=dev) // tw).reshape(1, -1)
    tile = (lucid.arange(n, device=dev).reshape(n, 1, 1) * tiles_y + tile_y) * tiles_x + tile_x
    count = n * tiles_y * tiles_x
    hist = lucid.bincount((tile * 256 + padded).reshape(-1), minlength=count * 256).reshape(count, 256)
    area = th * tw
    if clip_limit > 0:
        # As OpenCV: an integer limit, the excess spread in whole counts, the remainder one
        # by one over every step-th level.
        limit = max(int(clip_limit * area / 256), 1)
        excess = (hist - limit).clamp(min=0).sum(-1, keepdim=True)
        hist = hist.clamp(max=limit) + excess // 256
        residual = excess % 256
        step = (256 // residual.clamp(min=1)).clamp(min=1)
        level = lucid.arange(256, device=dev).reshape(1, 256)
        hist = hist + ((level % step == 0) & (level // step < residual)).to(hist.dtype)
    lut = lucid.round(hist.cumsum(-1).to(lucid.float32) * (255.0 / area)).clamp(0, 255)
    lut = lut.reshape(n, tiles_y * tiles_x * 256)

    def coords(size, tiles, tile_size):
        # float32 as OpenCV: coordinate * (1 / tile size) - 0.5
        step = lucid.tensor(1.0 / tile_size, dtype=lucid.float32, device=dev)
        f = lucid.arange(size, device=dev).to(lucid.float32) * step - 0.5
        first = lucid.floor(f)
        frac = f - first
        return first.clamp(min=0).to(lucid.int64), (first + 1).clamp(max=tiles - 1).to(lucid.int64), frac
    y1, y2, ya = coords(h, tiles_y, th)
    x1, x2, xa = coords(w, tiles_x, tw)
    base = levels

    def at(ty, tx):
        index = ((ty.reshape(-1, 1) * tiles_x + tx.reshape(1, -1)) * 256).reshape(1, h, w) + base
        return lucid.gather(lut, 1, index.reshape(n, -1)).reshape(n, h, w)
    ya, xa = ya.reshape(-1, 1), xa.reshape(1, -1)
    top = at(y1, x1) * (1 - xa) + at(y1, x2) * xa
    bottom = at(y2, x1) * (1 - xa) + at(y2, x2) * xa
    return lucid.round(top * (1 - ya) + bottom * ya).clamp(0, 255)


def clahe(img, clip_limit=4.0, tile_grid_size=(8, 8)):
    """Contrast-limited adaptive histogram equalisation (OpenCV's algorithm on 256 levels:
    per-tile clipped histograms, bilinear blending between tile centres). One channel is
    equalised directly; RGB through the value channel of HSV (hue and saturation kept;
    Albumentations goes through LAB's L instead)."""
    _check(img, "clahe", (1, 3))
    if not is_number(clip_limit) or clip_limit < 0:
        raise ValueError(f"clahe: clip_limit should be a non-negative number, got {clip_limit!r}")
    if (not isinstance(tile_grid_size, (tuple, list)) or len(tile_grid_size) != 2
            or not all(isinstance(t, int) and not isinstance(t, bool) and t > 0 for t in tile_grid_size)):
        raise ValueError(f"clahe: tile_grid_size should be (rows, cols) of positive ints, got {tile_grid_size!r}")
    h, w = img.shape[-2], img.shape[-1]
    if tile_grid_size[0] > h or tile_grid_size[1] > w:
        raise ValueError(f"clahe: tile_grid_size {tuple(tile_grid_size)} has more tiles than the {h}x{w} image "
                         "has pixels")
    if img.shape[-3] == 3:
        hue, sat, val = rgb_to_hsv(img)
        return hsv_to_rgb(hue, sat, clahe(val, clip_limit, tile_grid_size))
    levels = _levels(img.reshape(-1, h, w))
    out = _clahe_levels(levels, float(clip_limit), tile_grid_size[0], tile_grid_size[1])
    return (out / 255).to(img.dtype).reshape(img.shape)


def posterize(img, num_bits=MISSING, *, bits=MISSING):
    """Keeps the num_bits highest bits of each 8-bit level (a float image is quantised to 256
    levels first, as PIL's posterize; 8 bits leave it as it is); bits= is torchvision's name."""
    num_bits = factor_argument(num_bits, bits, "num_bits", "posterize", "bits")
    if not isinstance(num_bits, int) or isinstance(num_bits, bool) or not 0 <= num_bits <= 8:
        raise ValueError(f"posterize: num_bits should be an int in [0, 8], got {num_bits!r}")
    _check(img, "posterize", allow_int=True)
    if num_bits == 8:
        return img
    mask = (0xFF << (8 - num_bits)) & 0xFF
    if img.dtype == lucid.uint8:
        return img & mask
    return (_levels(img) & mask).to(img.dtype) / 255


def solarize(img, threshold):
    """Inverts the values at or above threshold (in the image's range: [0, 1] for floats)."""
    _check(img, "solarize", allow_int=True)
    if not is_number(threshold) or threshold > _bound(img):
        raise ValueError(f"solarize: threshold should be a number at most {_bound(img)} for {img.dtype} images, "
                         f"got {threshold!r}")
    return lucid.where(img >= threshold, invert(img), img)


def invert(img):
    """The top of the range minus the image (1 - x for floats, 255 - x for uint8)."""
    _check(img, "invert", allow_int=True)
    return 1.0 - img if img.is_floating_point() else (255 - img).to(img.dtype)


def rescale(img, scale=1.0 / 255.0):
    """img * scale (by default uint8 levels to [0, 1]), as a float tensor."""
    if not isinstance(img, lucid.Tensor):
        raise TypeError(f"rescale: expected a tensor, got {type(img).__name__}")
    if not is_number(scale):
        raise TypeError(f"rescale: scale should be a number, got {scale!r}")
    x = img if img.is_floating_point() else img.to(lucid.float32)
    return x * scale
