"""Upstream Lucid's colour and intensity transforms (image only; masks, boxes and keypoints
pass through). Images are float [C, H, W] / [B, C, H, W] with values in [0, 1]; limits given
on 0-255 scales (RGBShift, HueSaturationValue, Solarize, GaussNoise) are Albumentations'.

Normalize and ColorJitter here are upstream's forms; the public names are torchvision's
classes, which hand upstream-style calls (p=, max_pixel_value=) to these.
"""

import lucid
from . import _functional_color as FC
from ._base import (PhotometricTransform, Transform, check_channels, check_float_image, is_number, permutation,
                    randint, to_int_range, to_range, uniform)
from ._tv_color import _jitter_range, adjust_brightness, adjust_contrast, adjust_hue, adjust_saturation


def _per_channel(values, img, where, name):
    """values (a number or one per channel) as a tensor [C, 1, 1] on img's device."""
    values = [values] if is_number(values) else list(values)
    c = img.shape[-3]
    if len(values) not in (1, c) or not all(is_number(v) for v in values):
        raise ValueError(f"{where}: {name} should have one value or one per channel ({c}), got {values!r}")
    return lucid.tensor(values, dtype=img.dtype, device=img.device).reshape(-1, 1, 1)


class Normalize(PhotometricTransform):
    """(img - mean * max_pixel_value) / (std * max_pixel_value) per channel (upstream's
    Normalize: max_pixel_value=255 for 0-255 images, 1 for [0, 1] ones)."""

    def __init__(self, mean, std, max_pixel_value=255.0, p=1.0):
        super().__init__(p=p)
        self.mean, self.std = tuple(mean) if not is_number(mean) else (mean,), tuple(std) if not is_number(std) \
            else (std,)
        if any(not is_number(s) or s == 0 for s in self.std):
            raise ValueError(f"Normalize: std should be non-zero numbers, got {self.std}")
        if not is_number(max_pixel_value) or max_pixel_value <= 0:
            raise ValueError(f"Normalize: max_pixel_value should be a positive number, got {max_pixel_value!r}")
        self.max_pixel_value = float(max_pixel_value)

    def _apply_image(self, img, params):
        mean = _per_channel(self.mean, img, "Normalize", "mean") * self.max_pixel_value
        std = _per_channel(self.std, img, "Normalize", "std") * self.max_pixel_value
        return (img - mean) / std

    def _args_repr(self):
        return f"mean={self.mean}, std={self.std}, max_pixel_value={self.max_pixel_value}, p={self.p}"


class ColorJitter(PhotometricTransform):
    """With probability p, brightness, contrast, saturation and hue changes in a random
    order (torchvision's formulas), factors uniform in their ranges: a number v means
    [max(0, 1 - v), 1 + v] (hue: [-v, v], v <= 0.5)."""

    def __init__(self, brightness=0.2, contrast=0.2, saturation=0.2, hue=0.2, p=0.5):
        super().__init__(p=p)
        self.brightness = _jitter_range(brightness, "brightness")
        self.contrast = _jitter_range(contrast, "contrast")
        self.saturation = _jitter_range(saturation, "saturation")
        self.hue = _jitter_range(hue, "hue", center=0.0, bound=(-0.5, 0.5), clip_first_on_zero=False)

    def make_params(self, img):
        factors = [None if r is None else uniform(*r) for r in (self.brightness, self.contrast, self.saturation,
                                                                 self.hue)]
        return permutation(4), factors

    def _apply_image(self, img, params):
        order, factors = params
        adjust = (adjust_brightness, adjust_contrast, adjust_saturation, adjust_hue)
        for i in order:
            if factors[i] is not None:
                img = adjust[i](img, factors[i])
        return img

    def _args_repr(self):
        return (f"brightness={self.brightness}, contrast={self.contrast}, saturation={self.saturation}, "
                f"hue={self.hue}, p={self.p}")


class RandomBrightnessContrast(PhotometricTransform):
    """img * (1 + c) + b, clamped to [0, 1]; b uniform in brightness_limit, c in
    contrast_limit (v means (-v, v))."""

    def __init__(self, brightness_limit=0.2, contrast_limit=0.2, p=0.5):
        super().__init__(p=p)
        self.brightness_limit = to_range(brightness_limit, type(self).__name__, "brightness_limit")
        self.contrast_limit = to_range(contrast_limit, type(self).__name__, "contrast_limit")

    def make_params(self, img):
        return uniform(*self.brightness_limit), uniform(*self.contrast_limit)

    def _apply_image(self, img, params):
        brightness, contrast = params
        return (img * (1 + contrast) + brightness).clamp(0.0, 1.0)

    def _args_repr(self):
        return f"brightness_limit={self.brightness_limit}, contrast_limit={self.contrast_limit}, p={self.p}"


class RandomBrightness(RandomBrightnessContrast):
    """img + b, clamped to [0, 1]; b uniform in limit."""

    def __init__(self, limit=0.2, p=0.5):
        super().__init__(limit, 0.0, p)

    def _args_repr(self):
        return f"limit={self.brightness_limit}, p={self.p}"


class RandomContrast(RandomBrightnessContrast):
    """img * (1 + c), clamped to [0, 1]; c uniform in limit."""

    def __init__(self, limit=0.2, p=0.5):
        super().__init__(0.0, limit, p)

    def _args_repr(self):
        return f"limit={self.contrast_limit}, p={self.p}"


class RandomGamma(PhotometricTransform):
    """img ** (g / 100), g uniform in gamma_limit ((min, max), or v meaning (100 - v, 100 + v))."""

    def __init__(self, gamma_limit=(80, 120), p=0.5):
        super().__init__(p=p)
        self.gamma_limit = to_range(gamma_limit, "RandomGamma", "gamma_limit", offset=100.0, low=1e-6)

    def make_params(self, img):
        return uniform(*self.gamma_limit) / 100.0

    def _apply_image(self, img, gamma):
        return img.clamp(0.0, 1.0) ** gamma

    def _args_repr(self):
        return f"gamma_limit={self.gamma_limit}, p={self.p}"


class HueSaturationValue(PhotometricTransform):
    """adjust_hsv with shifts uniform in the limits (OpenCV scales: hue 180 = a turn,
    saturation / value 255 = the range; v means (-v, v)). RGB images."""

    def __init__(self, hue_shift_limit=20, sat_shift_limit=30, val_shift_limit=20, p=0.5):
        super().__init__(p=p)
        self.hue_shift_limit = to_range(hue_shift_limit, "HueSaturationValue", "hue_shift_limit")
        self.sat_shift_limit = to_range(sat_shift_limit, "HueSaturationValue", "sat_shift_limit")
        self.val_shift_limit = to_range(val_shift_limit, "HueSaturationValue", "val_shift_limit")

    def make_params(self, img):
        return tuple(uniform(*r) for r in (self.hue_shift_limit, self.sat_shift_limit, self.val_shift_limit))

    def _apply_image(self, img, params):
        return FC.adjust_hsv(img, *params)

    def _args_repr(self):
        return (f"hue_shift_limit={self.hue_shift_limit}, sat_shift_limit={self.sat_shift_limit}, "
                f"val_shift_limit={self.val_shift_limit}, p={self.p}")


class RGBShift(PhotometricTransform):
    """Adds a shift to each of R, G, B (uniform in its limit, 0-255 scale), clamped."""

    def __init__(self, r_shift_limit=20, g_shift_limit=20, b_shift_limit=20, p=0.5):
        super().__init__(p=p)
        self.limits = tuple(to_range(v, "RGBShift", n) for v, n in ((r_shift_limit, "r_shift_limit"),
                                                                     (g_shift_limit, "g_shift_limit"),
                                                                     (b_shift_limit, "b_shift_limit")))

    def make_params(self, img):
        return [uniform(*r) / 255.0 for r in self.limits]

    def _apply_image(self, img, shifts):
        check_channels(img, (3,), "RGBShift")
        return (img + _per_channel(shifts, img, "RGBShift", "shift")).clamp(0.0, 1.0)

    def _args_repr(self):
        r, g, b = self.limits
        return f"r_shift_limit={r}, g_shift_limit={g}, b_shift_limit={b}, p={self.p}"


class ChannelShuffle(PhotometricTransform):
    """Permutes the channels (uniformly)."""

    def __init__(self, p=0.5):
        super().__init__(p=p)

    def make_params(self, img):
        return permutation(img.shape[-3])

    def _apply_image(self, img, order):
        return img.index_select(img.ndim - 3, lucid.tensor(order, device=img.device))


class ChannelDropout(PhotometricTransform):
    """Sets n channels (n uniform in channel_drop_range, channels uniform) to fill_value; at
    least one channel must stay."""

    def __init__(self, channel_drop_range=(1, 1), fill_value=0.0, p=0.5):
        super().__init__(p=p)
        self.channel_drop_range = to_int_range(channel_drop_range, "ChannelDropout", "channel_drop_range")
        if not is_number(fill_value):
            raise TypeError(f"ChannelDropout: fill_value should be a number, got {fill_value!r}")
        self.fill_value = fill_value

    def make_params(self, img):
        c = img.shape[-3]
        if c <= self.channel_drop_range[1]:
            raise ValueError(f"ChannelDropout: can drop up to {self.channel_drop_range[1]} channels, so the image "
                             f"needs more than that, got {c} channel(s)")
        count = randint(self.channel_drop_range[0], self.channel_drop_range[1] + 1)
        return sorted(permutation(c)[:count])

    def _apply_image(self, img, channels):
        drop = [1.0 if i in channels else 0.0 for i in range(img.shape[-3])]
        hit = _per_channel(drop, img, "ChannelDropout", "channels")
        return img * (1 - hit) + self.fill_value * hit

    def _args_repr(self):
        return f"channel_drop_range={self.channel_drop_range}, fill_value={self.fill_value}, p={self.p}"


class Equalize(PhotometricTransform):
    """Histogram equalisation of each channel (functional.equalize)."""

    def __init__(self, p=0.5):
        super().__init__(p=p)

    def _apply_image(self, img, params):
        return FC.equalize(img)


class CLAHE(PhotometricTransform):
    """functional.clahe with clip_limit (a number, or a (min, max) range to draw from) and
    tile_grid_size. One-channel or RGB images."""

    def __init__(self, clip_limit=4.0, tile_grid_size=(8, 8), p=0.5):
        super().__init__(p=p)
        self.clip_limit = (float(clip_limit),) * 2 if is_number(clip_limit) else to_range(clip_limit, "CLAHE",
                                                                                           "clip_limit")
        if self.clip_limit[0] < 0:
            raise ValueError(f"CLAHE: clip_limit should be non-negative, got {clip_limit!r}")
        self.tile_grid_size = tuple(tile_grid_size)

    def make_params(self, img):
        return uniform(*self.clip_limit)

    def _apply_image(self, img, clip_limit):
        return FC.clahe(img, clip_limit, self.tile_grid_size)

    def _args_repr(self):
        return f"clip_limit={self.clip_limit}, tile_grid_size={self.tile_grid_size}, p={self.p}"


class Solarize(PhotometricTransform):
    """Inverts values at or above a threshold (0-255 scale; a number, or a (min, max) range
    to draw from)."""

    def __init__(self, threshold=128, p=0.5):
        super().__init__(p=p)
        self.threshold = (float(threshold),) * 2 if is_number(threshold) else to_range(threshold, "Solarize",
                                                                                        "threshold")
        if not 0 <= self.threshold[0] <= self.threshold[1] <= 255:
            raise ValueError(f"Solarize: threshold should lie in [0, 255], got {threshold!r}")

    def make_params(self, img):
        return uniform(*self.threshold) / 255.0

    def _apply_image(self, img, threshold):
        return FC.solarize(img, threshold)

    def _args_repr(self):
        return f"threshold={self.threshold}, p={self.p}"


class Posterize(PhotometricTransform):
    """Keeps num_bits bits per channel (an int in [1, 7], or a (min, max) range). mode
    "uint8_mask": the 8-bit levels' top bits (as PIL / OpenCV); "float": floor(x * 2^bits)
    / 2^bits."""

    def __init__(self, num_bits=4, mode="uint8_mask", p=0.5):
        super().__init__(p=p)
        self.num_bits = to_int_range((num_bits, num_bits) if isinstance(num_bits, int) else num_bits, "Posterize",
                                     "num_bits")
        if self.num_bits[1] > 7:
            raise ValueError(f"Posterize: num_bits should lie in [1, 7], got {num_bits!r}")
        if mode not in ("uint8_mask", "float"):
            raise ValueError(f"Posterize: mode should be 'uint8_mask' or 'float', got {mode!r}")
        self.mode = mode

    def make_params(self, img):
        return randint(self.num_bits[0], self.num_bits[1] + 1)

    def _apply_image(self, img, bits):
        if self.mode == "float":
            levels = float(2 ** bits)
            return lucid.floor(img.clamp(0.0, 1.0) * levels).clamp(max=levels - 1) / levels
        return FC.posterize(img, bits)

    def _args_repr(self):
        return f"num_bits={self.num_bits}, mode={self.mode!r}, p={self.p}"


class InvertImg(PhotometricTransform):
    """1 - img."""

    def __init__(self, p=0.5):
        super().__init__(p=p)

    def _apply_image(self, img, params):
        return FC.invert(img)


class ToGray(PhotometricTransform):
    """Grey 0.299 R + 0.587 G + 0.114 B, repeated over the 3 channels."""

    def __init__(self, p=0.5):
        super().__init__(p=p)

    def _apply_image(self, img, params):
        check_channels(img, (3,), "ToGray")
        r, g, b = img.unbind(-3)
        return (0.299 * r + 0.587 * g + 0.114 * b).unsqueeze(-3).expand(img.shape).clone()


_SEPIA = ((0.393, 0.769, 0.189), (0.349, 0.686, 0.168), (0.272, 0.534, 0.131))


class ToSepia(PhotometricTransform):
    """The sepia matrix applied to RGB, clamped to [0, 1]."""

    def __init__(self, p=0.5):
        super().__init__(p=p)

    def _apply_image(self, img, params):
        check_channels(img, (3,), "ToSepia")
        r, g, b = img.unbind(-3)
        return lucid.stack([m[0] * r + m[1] * g + m[2] * b for m in _SEPIA], -3).clamp(0.0, 1.0)


class ToFloat(Transform):
    """img / max_value as float32 (max_value None: the dtype's maximum, 255 for uint8)."""

    def __init__(self, max_value=None, p=1.0):
        super().__init__(p=p)
        if max_value is not None and (not is_number(max_value) or max_value <= 0):
            raise ValueError(f"ToFloat: max_value should be a positive number or None, got {max_value!r}")
        self.max_value = max_value

    def _apply_image(self, img, params):
        if self.max_value is None and img.is_floating_point():
            raise TypeError(f"ToFloat: a {img.dtype} image has no default max_value; give max_value")
        top = self.max_value if self.max_value is not None else lucid.iinfo(img.dtype).max
        return img.to(lucid.float32) / float(top)

    def _args_repr(self):
        return f"max_value={self.max_value}, p={self.p}"


_DTYPE_NAMES = {"uint8": "uint8", "uint16": "int32", "int16": "int16", "int32": "int32", "float16": "float16",
                "float32": "float32", "float64": "float64"}


class FromFloat(Transform):
    """img * max_value cast to dtype (truncating, as Albumentations); max_value None: the
    dtype's maximum (255 for uint8). lucid has no uint16: "uint16" gives int32 values."""

    def __init__(self, max_value=None, dtype="uint16", p=1.0):
        super().__init__(p=p)
        if isinstance(dtype, str):
            if dtype not in _DTYPE_NAMES:
                raise ValueError(f"FromFloat: unknown dtype {dtype!r}, expected one of {sorted(_DTYPE_NAMES)}")
            self._top = 65535 if dtype == "uint16" else None
            dtype = getattr(lucid, _DTYPE_NAMES[dtype])
        elif not isinstance(dtype, lucid.dtype):
            raise TypeError(f"FromFloat: dtype should be a name or a lucid.dtype, got {dtype!r}")
        else:
            self._top = None
        self.dtype = dtype
        if max_value is None:
            if dtype.is_floating_point:
                raise ValueError(f"FromFloat: give max_value for a float dtype ({dtype})")
            max_value = self._top or lucid.iinfo(dtype).max
        if not is_number(max_value) or max_value <= 0:
            raise ValueError(f"FromFloat: max_value should be a positive number, got {max_value!r}")
        self.max_value = float(max_value)

    def _apply_image(self, img, params):
        check_float_image(img, "FromFloat")
        return (img * self.max_value).to(self.dtype)

    def _args_repr(self):
        return f"max_value={self.max_value}, dtype={self.dtype}, p={self.p}"


class FancyPCA(PhotometricTransform):
    """AlexNet's PCA colour augmentation: adds sum_i a_i lambda_i v_i to every pixel, with
    (lambda_i, v_i) the eigenpairs of the image's RGB covariance and a_i ~ N(0, alpha)."""

    def __init__(self, alpha=0.1, p=0.5):
        super().__init__(p=p)
        if not is_number(alpha) or alpha < 0:
            raise ValueError(f"FancyPCA: alpha should be a non-negative number, got {alpha!r}")
        self.alpha = float(alpha)

    def make_params(self, img):
        return lucid.randn(3, dtype=lucid.float64, device="cpu").mul(self.alpha).tolist()

    def _apply_image(self, img, alphas):
        check_channels(img, (3,), "FancyPCA")
        pixels = img.reshape(-1, 3, img.shape[-2] * img.shape[-1])          # [N, 3, P]
        centred = pixels - pixels.mean(-1, keepdim=True)
        cov = centred @ centred.transpose(-1, -2) / max(pixels.shape[-1] - 1, 1)
        # The 3 x 3 eigenproblems are solved on the CPU, in float64.
        values, vectors = lucid.linalg.eigh(cov.to(lucid.float64).to("cpu"))
        a = lucid.tensor(alphas, dtype=lucid.float64, device="cpu")
        delta = (vectors @ (a * values).unsqueeze(-1)).to(img.dtype).to(img.device)  # [N, 3, 1]
        return (pixels + delta).reshape(img.shape).clamp(0.0, 1.0)

    def _args_repr(self):
        return f"alpha={self.alpha}, p={self.p}"


class RandomToneCurve(PhotometricTransform):
    """Maps values through the cubic Bezier curve from (0, 0) to (1, 1) with control points
    (0.25, y1) and (0.75, y2), y1 ~ N(0.25, scale), y2 ~ N(0.75, scale) clipped to [0, 1]
    (Albumentations' tone curve)."""

    def __init__(self, scale=0.1, p=0.5):
        super().__init__(p=p)
        if not is_number(scale) or not 0 <= scale <= 1:
            raise ValueError(f"RandomToneCurve: scale should be in [0, 1], got {scale!r}")
        self.scale = float(scale)

    def make_params(self, img):
        noise = lucid.randn(2, dtype=lucid.float64, device="cpu").tolist()
        return (min(max(0.25 + noise[0] * self.scale, 0.0), 1.0), min(max(0.75 + noise[1] * self.scale, 0.0), 1.0))

    def _apply_image(self, img, params):
        low, high = params
        t = img.clamp(0.0, 1.0)
        return 3 * (1 - t) ** 2 * t * low + 3 * (1 - t) * t ** 2 * high + t ** 3

    def _args_repr(self):
        return f"scale={self.scale}, p={self.p}"
