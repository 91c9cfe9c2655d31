"""Upstream Lucid's noise and occlusion transforms (image only): GaussNoise,
MultiplicativeNoise, ISONoise, CoarseDropout, GridDropout, PixelDropout, XYMasking, and
RandomErasing (torchvision's and upstream's, one class). Images are float [C, H, W] /
[B, C, H, W] in [0, 1]; the random fields are drawn with the parameters (so a replay repeats
them) on the image's device.
"""

import math
import numbers
import warnings
from collections.abc import Sequence

import lucid
from ._base import (PhotometricTransform, Transform, check_positive_int, check_probability, is_number, randint,
                    to_range, uniform)
from ._functional_color import rgb_to_hsv


def _dtype(img):
    return img.dtype if img.is_floating_point() else lucid.float32


class GaussNoise(PhotometricTransform):
    """Adds Gaussian noise of variance uniform in var_limit and mean mean (both on the 0-255
    scale), independently per pixel and channel; clamped to [0, 1]."""

    def __init__(self, var_limit=(10.0, 50.0), mean=0.0, p=0.5):
        super().__init__(p=p)
        self.var_limit = to_range(var_limit, "GaussNoise", "var_limit", symmetric=False, low=0.0)
        if not is_number(mean):
            raise TypeError(f"GaussNoise: mean should be a number, got {mean!r}")
        self.mean = float(mean)

    def make_params(self, img):
        std = math.sqrt(uniform(*self.var_limit)) / 255.0
        return lucid.randn(*img.shape, dtype=_dtype(img), device=img.device) * std + self.mean / 255.0

    def _apply_image(self, img, noise):
        return (img + noise).clamp(0.0, 1.0)

    def _args_repr(self):
        return f"var_limit={self.var_limit}, mean={self.mean}, p={self.p}"


class MultiplicativeNoise(PhotometricTransform):
    """Multiplies by a factor uniform in multiplier (a (min, max) range, or one number): one
    for the image, or one per pixel and channel (elementwise); clamped to [0, 1]."""

    def __init__(self, multiplier=(0.9, 1.1), elementwise=False, p=0.5):
        super().__init__(p=p)
        self.multiplier = (float(multiplier),) * 2 if is_number(multiplier) else to_range(
            multiplier, "MultiplicativeNoise", "multiplier", low=0.0)
        self.elementwise = bool(elementwise)

    def make_params(self, img):
        lo, hi = self.multiplier
        if self.elementwise:
            return lucid.rand(*img.shape, dtype=_dtype(img), device=img.device) * (hi - lo) + lo
        return uniform(lo, hi)

    def _apply_image(self, img, factor):
        return (img * factor).clamp(0.0, 1.0)

    def _args_repr(self):
        return f"multiplier={self.multiplier}, elementwise={self.elementwise}, p={self.p}"


def _rgb_to_hls(img):
    """(h, l, s) of RGB [..., 3, H, W], each [..., H, W], as colorsys.rgb_to_hls."""
    hue = rgb_to_hsv(img)[0].squeeze(-3)
    high, low = img.amax(-3), img.amin(-3)
    light = (high + low) / 2
    chroma = high - low
    denom = lucid.where(light <= 0.5, high + low, 2 - high - low)
    sat = lucid.where(chroma > 0, chroma / lucid.where(denom > 0, denom, lucid.ones_like(denom)),
                      lucid.zeros_like(chroma))
    return hue, light, sat


def _hls_to_rgb(hue, light, sat):
    """colorsys.hls_to_rgb on tensors [..., H, W], as [..., 3, H, W]."""
    m2 = lucid.where(light <= 0.5, light * (1 + sat), light + sat - light * sat)
    m1 = 2 * light - m2

    def channel(h):
        h = h - lucid.floor(h)
        rising = m1 + (m2 - m1) * h * 6
        falling = m1 + (m2 - m1) * (2 / 3 - h) * 6
        return lucid.where(h < 1 / 6, rising, lucid.where(h < 0.5, m2, lucid.where(h < 2 / 3, falling, m1)))
    return lucid.stack([channel(hue + 1 / 3), channel(hue), channel(hue - 1 / 3)], -3).clamp(0.0, 1.0)


class ISONoise(PhotometricTransform):
    """Camera sensor noise (Albumentations' ISONoise) on RGB: in HLS, the hue gets Gaussian
    noise of std color_shift * intensity (of a full turn) and the lightness L gains
    (Poisson(std(L) * intensity * 255) / 255) * (1 - L); color_shift and intensity uniform in
    their ranges."""

    def __init__(self, color_shift=(0.01, 0.05), intensity=(0.1, 0.5), p=0.5):
        super().__init__(p=p)
        self.color_shift = to_range(color_shift, "ISONoise", "color_shift", symmetric=False, low=0.0)
        self.intensity = to_range(intensity, "ISONoise", "intensity", symmetric=False, low=0.0)

    def make_params(self, img):
        if img.ndim < 3 or img.shape[-3] != 3:
            raise ValueError(f"ISONoise: expected an RGB image [..., 3, H, W], got shape {list(img.shape)}")
        shift, intensity = uniform(*self.color_shift), uniform(*self.intensity)
        light = _rgb_to_hls(img.to(_dtype(img)))[1]
        spread = light.reshape(*light.shape[:-2], -1).std(-1, correction=0)
        rate = (spread * intensity * 255).reshape(*spread.shape, 1, 1).expand(light.shape)
        hue_noise = lucid.randn(*light.shape, dtype=light.dtype, device=img.device) * (shift * intensity)
        return hue_noise, lucid.poisson(rate.contiguous().to("cpu")).to(img.device) / 255

    def _apply_image(self, img, params):
        hue_noise, light_noise = params
        hue, light, sat = _rgb_to_hls(img)
        return _hls_to_rgb(hue + hue_noise, light + light_noise * (1 - light), sat)

    def _args_repr(self):
        return f"color_shift={self.color_shift}, intensity={self.intensity}, p={self.p}"


def _fill_tensor(fill, img, where):
    """fill (a number, one per channel, or "random" for uniform noise) as something to put
    into img's holes."""
    if isinstance(fill, str):
        if fill != "random":
            raise ValueError(f"{where}: fill_value should be a number, one per channel, or 'random', got {fill!r}")
        return lucid.rand(*img.shape, dtype=img.dtype, device=img.device)
    values = [fill] if is_number(fill) else list(fill)
    if len(values) not in (1, img.shape[-3]) or not all(is_number(v) for v in values):
        raise ValueError(f"{where}: fill_value should be a number or one per channel ({img.shape[-3]}), got {fill!r}")
    return lucid.tensor(values, dtype=img.dtype, device=img.device).reshape(-1, 1, 1).expand(img.shape)


def _holes_mask(img, holes):
    """A [H, W] float mask, 1 inside the (top, left, height, width) holes."""
    h, w = img.shape[-2], img.shape[-1]
    mask = lucid.zeros(h, w, dtype=img.dtype, device=img.device)
    for top, left, hh, ww in holes:
        mask[top:top + hh, left:left + ww] = 1.0
    return mask


def _fill_holes(img, holes, fill, where):
    if not holes:
        return img
    mask = _holes_mask(img, holes)
    return img * (1 - mask) + _fill_tensor(fill, img, where) * mask


def _size_range(lo, hi, where, name):
    """A hole size range: ints are pixels, floats in (0, 1] fractions of the image side."""
    for v in (lo, hi):
        if not (isinstance(v, int) and not isinstance(v, bool) and v > 0) and not (
                isinstance(v, float) and 0 < v <= 1):
            raise ValueError(f"{where}: {name} should be positive ints (pixels) or floats in (0, 1] (fractions), "
                             f"got {(lo, hi)}")
    if type(lo) is not type(hi) or lo > hi:
        raise ValueError(f"{where}: min and max {name} should be of one kind with min <= max, got {(lo, hi)}")
    return lo, hi


def _pixels(v, side):
    return v if isinstance(v, int) else max(1, int(side * v))


class CoarseDropout(PhotometricTransform):
    """Fills n rectangles (n uniform in [min_holes, max_holes]) of random size (height in
    [min_height, max_height], width likewise: ints are pixels, floats fractions of the image)
    at random places with fill_value (a number, one per channel, or "random")."""

    def __init__(self, max_holes=8, max_height=8, max_width=8, min_holes=None, min_height=None, min_width=None,
                 fill_value=0.0, p=0.5):
        super().__init__(p=p)
        self.max_holes = check_positive_int(max_holes, "CoarseDropout", "max_holes")
        self.min_holes = max_holes if min_holes is None else check_positive_int(min_holes, "CoarseDropout",
                                                                                "min_holes")
        if self.min_holes > self.max_holes:
            raise ValueError(f"CoarseDropout: min_holes ({min_holes}) should not exceed max_holes ({max_holes})")
        self.height = _size_range(max_height if min_height is None else min_height, max_height, "CoarseDropout",
                                  "height")
        self.width = _size_range(max_width if min_width is None else min_width, max_width, "CoarseDropout", "width")
        self.fill_value = fill_value

    def make_params(self, img):
        h, w = img.shape[-2], img.shape[-1]
        holes = []
        for _ in range(randint(self.min_holes, self.max_holes + 1)):
            hh = min(h, randint(_pixels(self.height[0], h), _pixels(self.height[1], h) + 1))
            ww = min(w, randint(_pixels(self.width[0], w), _pixels(self.width[1], w) + 1))
            holes.append((randint(0, h - hh + 1), randint(0, w - ww + 1), hh, ww))
        return holes

    def _apply_image(self, img, holes):
        return _fill_holes(img, holes, self.fill_value, "CoarseDropout")

    def _args_repr(self):
        return (f"max_holes={self.max_holes}, min_holes={self.min_holes}, height={self.height}, width={self.width}, "
                f"fill_value={self.fill_value!r}, p={self.p}")


class GridDropout(PhotometricTransform):
    """Fills the top-left round(unit_size * ratio) square of every unit_size x unit_size cell
    of a grid starting at the image's corner with fill_value."""

    def __init__(self, ratio=0.5, unit_size=32, fill_value=0.0, p=0.5):
        super().__init__(p=p)
        if not is_number(ratio) or not 0 < ratio <= 1:
            raise ValueError(f"GridDropout: ratio should be in (0, 1], got {ratio!r}")
        self.ratio = float(ratio)
        self.unit_size = check_positive_int(unit_size, "GridDropout", "unit_size")
        self.fill_value = fill_value

    def make_params(self, img):
        h, w = img.shape[-2], img.shape[-1]
        side = max(1, int(round(self.unit_size * self.ratio)))
        return [(top, left, min(side, h - top), min(side, w - left)) for top in range(0, h, self.unit_size)
                for left in range(0, w, self.unit_size)]

    def _apply_image(self, img, holes):
        return _fill_holes(img, holes, self.fill_value, "GridDropout")

    def _args_repr(self):
        return f"ratio={self.ratio}, unit_size={self.unit_size}, fill_value={self.fill_value!r}, p={self.p}"


class PixelDropout(PhotometricTransform):
    """Sets each pixel (each pixel of each channel if per_channel) to drop_value with
    probability dropout_prob."""

    def __init__(self, dropout_prob=0.01, per_channel=False, drop_value=0.0, p=0.5):
        super().__init__(p=p)
        self.dropout_prob = check_probability(dropout_prob, "PixelDropout", "dropout_prob")
        self.per_channel = bool(per_channel)
        if not is_number(drop_value):
            raise TypeError(f"PixelDropout: drop_value should be a number, got {drop_value!r}")
        self.drop_value = float(drop_value)

    def make_params(self, img):
        shape = list(img.shape)
        if not self.per_channel:
            shape[-3] = 1
        return lucid.rand(*shape, device=img.device) < self.dropout_prob

    def _apply_image(self, img, dropped):
        return lucid.where(dropped.expand(img.shape), lucid.full_like(img, self.drop_value), img)

    def _args_repr(self):
        return f"dropout_prob={self.dropout_prob}, per_channel={self.per_channel}, drop_value={self.drop_value}, " \
               f"p={self.p}"


def _count_range(v, where, name, minimum):
    if isinstance(v, int) and not isinstance(v, bool):
        v = (v, v)
    if (not isinstance(v, (tuple, list)) or len(v) != 2 or not all(isinstance(x, int) and not isinstance(x, bool)
                                                                   for x in v) or not minimum <= v[0] <= v[1]):
        raise ValueError(f"{where}: {name} should be an int >= {minimum} or a (min, max) pair of them, got {v!r}")
    return tuple(v)


class XYMasking(PhotometricTransform):
    """Fills num_masks_x vertical stripes of width mask_x_length and num_masks_y horizontal
    ones of height mask_y_length (each an int or a (min, max) range) at random places with
    fill_value (as in spectrogram masking)."""

    def __init__(self, num_masks_x=0, num_masks_y=0, mask_x_length=10, mask_y_length=10, fill_value=0.0, p=0.5):
        super().__init__(p=p)
        self.num_masks_x = _count_range(num_masks_x, "XYMasking", "num_masks_x", 0)
        self.num_masks_y = _count_range(num_masks_y, "XYMasking", "num_masks_y", 0)
        if self.num_masks_x[1] == 0 and self.num_masks_y[1] == 0:
            raise ValueError("XYMasking: at least one of num_masks_x and num_masks_y should be positive")
        self.mask_x_length = _count_range(mask_x_length, "XYMasking", "mask_x_length", 1)
        self.mask_y_length = _count_range(mask_y_length, "XYMasking", "mask_y_length", 1)
        self.fill_value = fill_value

    def make_params(self, img):
        h, w = img.shape[-2], img.shape[-1]
        if self.mask_x_length[1] > w or self.mask_y_length[1] > h:
            raise ValueError(f"XYMasking: stripe lengths {self.mask_x_length[1]} (x) / {self.mask_y_length[1]} (y) "
                             f"exceed the {h}x{w} image")
        holes = []
        for _ in range(randint(self.num_masks_x[0], self.num_masks_x[1] + 1)):
            length = randint(self.mask_x_length[0], self.mask_x_length[1] + 1)
            holes.append((0, randint(0, w - length + 1), h, length))
        for _ in range(randint(self.num_masks_y[0], self.num_masks_y[1] + 1)):
            length = randint(self.mask_y_length[0], self.mask_y_length[1] + 1)
            holes.append((randint(0, h - length + 1), 0, length, w))
        return holes

    def _apply_image(self, img, holes):
        return _fill_holes(img, holes, self.fill_value, "XYMasking")

    def _args_repr(self):
        return (f"num_masks_x={self.num_masks_x}, num_masks_y={self.num_masks_y}, mask_x_length={self.mask_x_length}, "
                f"mask_y_length={self.mask_y_length}, fill_value={self.fill_value!r}, p={self.p}")


class RandomErasing(Transform):
    """Erases one rectangle, with probability p (torchvision's RandomErasing, which is also
    upstream Lucid's): area uniform in scale (share of the image), aspect ratio log-uniform
    in ratio; value: a number, one per channel, or "random" (standard normal noise). After 10
    draws that do not fit, the image is left alone. Works on tensors [..., C, H, W] (one
    rectangle for the whole batch) and typed samples; inplace writes into the tensor."""

    def __init__(self, p=0.5, scale=(0.02, 0.33), ratio=(0.3, 3.3), value=0, inplace=False):
        if not isinstance(value, (numbers.Number, str, tuple, list)) or isinstance(value, bool):
            raise TypeError("Argument value should be either a number or str or a sequence")
        if isinstance(value, str) and value != "random":
            raise ValueError("If value is str, it should be 'random'")
        if not isinstance(scale, Sequence) or not isinstance(ratio, Sequence):
            raise TypeError("Scale and ratio should be a sequence")
        if scale[0] > scale[1] or ratio[0] > ratio[1]:
            warnings.warn("Scale and ratio should be of kind (min, max)")
        if scale[0] < 0 or scale[1] > 1:
            raise ValueError(f"Scale should be between 0 and 1, got {tuple(scale)}")
        if not is_number(p) or not 0 <= p <= 1:
            raise ValueError(f"Random erasing probability should be between 0 and 1, got {p!r}")
        super().__init__(p=p)
        self.scale, self.ratio, self.value, self.inplace = scale, ratio, value, inplace

    def make_params(self, img):
        c, h, w = img.shape[-3], img.shape[-2], img.shape[-1]
        values = None if self.value == "random" else [self.value] if is_number(self.value) else list(self.value)
        if values is not None and len(values) not in (1, c):
            raise ValueError(f"If value is a sequence, it should have either a single value or {c} (number of input "
                             f"channels)")
        area = h * w
        log_ratio = (math.log(self.ratio[0]), math.log(self.ratio[1]))
        for _ in range(10):
            erase_area = area * uniform(self.scale[0], self.scale[1])
            aspect = math.exp(uniform(*log_ratio))
            eh, ew = int(round(math.sqrt(erase_area * aspect))), int(round(math.sqrt(erase_area / aspect)))
            if not (eh < h and ew < w):
                continue
            if values is None:
                fill = lucid.randn(c, eh, ew, dtype=_dtype(img), device=img.device)
            else:
                fill = lucid.tensor(values, dtype=_dtype(img), device=img.device).reshape(-1, 1, 1)
            return randint(0, h - eh + 1), randint(0, w - ew + 1), eh, ew, fill
        return None

    def _apply_image(self, img, params):
        if params is None:
            return img
        top, left, eh, ew, fill = params
        out = img if self.inplace else img.clone()
        out[..., top:top + eh, left:left + ew] = fill.to(img.dtype).expand(*img.shape[:-2], eh, ew)
        return out

    def __repr__(self):
        return (f"{type(self).__name__}(p={self.p}, scale={self.scale}, ratio={self.ratio}, value={self.value}, "
                f"inplace={self.inplace})")
