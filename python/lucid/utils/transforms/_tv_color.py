"""Colour transforms, as torchvision: rgb_to_grayscale / to_grayscale, adjust_brightness,
adjust_contrast, adjust_saturation, adjust_hue and Grayscale, RandomGrayscale, ColorJitter.
A PIL image goes through PIL (ImageEnhance, HSV conversion: _pil.py); a tensor
[..., 1 or 3, H, W] through torchvision's tensor formulas, written with lucid ops (part of
lucid.utils.transforms, whose __init__ imports this file)."""

import numbers

import lucid
from ...nn import Module
from . import _pil
from ._base import MISSING, factor_argument
from ._twins import TwinMeta, images_of, is_typed_sample
from . import _assert_image_tensor, _check_p, _uniform, convert_image_dtype, get_dimensions


def _assert_rgb_or_gray(img, where):
    _assert_image_tensor(img, where)
    if img.ndim < 3:
        raise TypeError(f"{where}: input image tensor should have at least 3 dimensions [..., C, H, W], but found "
                        f"{img.ndim}")
    if img.shape[-3] not in (1, 3):
        raise TypeError(f"{where}: input image tensor permitted channel values are [1, 3], but found "
                        f"{img.shape[-3]}")


def rgb_to_grayscale(img, num_output_channels=1, *, keep_channels=None):
    """Luma 0.2989 R + 0.587 G + 0.114 B (in img's dtype, truncating for integers, as
    torchvision), as 1 channel or repeated over 3; a PIL image through PIL's convert('L').
    keep_channels (upstream's name): True for 3 channels, False for 1 (upstream's default is
    3 channels; called without it, this is torchvision's function, 1 channel)."""
    if keep_channels is not None:
        num_output_channels = 3 if keep_channels else 1
    if num_output_channels not in (1, 3):
        raise ValueError(f"rgb_to_grayscale: num_output_channels should be either 1 or 3, got "
                         f"{num_output_channels!r}")
    if _pil.is_pil_image(img):
        return _pil.to_grayscale(img, num_output_channels)
    _assert_rgb_or_gray(img, "rgb_to_grayscale")
    if img.shape[-3] == 3:
        r, g, b = img.unbind(-3)
        gray = (0.2989 * r + 0.587 * g + 0.114 * b).to(img.dtype).unsqueeze(-3)
    else:
        gray = img.clone()
    return gray.expand(img.shape) if num_output_channels == 3 else gray


def to_grayscale(img, num_output_channels=1):
    """rgb_to_grayscale for PIL images only (torchvision's older name)."""
    if not _pil.is_pil_image(img):
        raise TypeError(f"to_grayscale: input should be PIL Image, got {type(img).__name__}{_pil.pil_status()}")
    return rgb_to_grayscale(img, num_output_channels)


def _blend(img1, img2, ratio):
    """ratio * img1 + (1 - ratio) * img2, clamped to img1's range ([0, 1] for floats)."""
    bound = 1.0 if img1.is_floating_point() else float(lucid.iinfo(img1.dtype).max)
    return (ratio * img1 + (1.0 - ratio) * img2).clamp(0, bound).to(img1.dtype)


def _check_factor(factor, name, where):
    if not isinstance(factor, numbers.Real) or isinstance(factor, bool):
        raise TypeError(f"{where}: {name} should be a number, got {factor!r}")
    if factor < 0:
        raise ValueError(f"{where}: {name} ({factor}) is not non-negative.")


def adjust_brightness(img, brightness_factor=MISSING, *, factor=MISSING):
    """Scales the values by brightness_factor (0: black, 1: the image). factor=
    is upstream Lucid's name for the factor."""
    brightness_factor = factor_argument(brightness_factor, factor, "brightness_factor", "adjust_brightness")
    if _pil.is_pil_image(img):
        return _pil.adjust_brightness(img, brightness_factor)
    _check_factor(brightness_factor, "brightness_factor", "adjust_brightness")
    _assert_rgb_or_gray(img, "adjust_brightness")
    return _blend(img, lucid.zeros_like(img), float(brightness_factor))


def adjust_contrast(img, contrast_factor=MISSING, *, factor=MISSING):
    """Blends with the mean grey level (0: flat grey, 1: the image). factor=
    is upstream Lucid's name for the factor."""
    contrast_factor = factor_argument(contrast_factor, factor, "contrast_factor", "adjust_contrast")
    if _pil.is_pil_image(img):
        return _pil.adjust_contrast(img, contrast_factor)
    _check_factor(contrast_factor, "contrast_factor", "adjust_contrast")
    _assert_rgb_or_gray(img, "adjust_contrast")
    dtype = img.dtype if img.is_floating_point() else lucid.float32
    gray = rgb_to_grayscale(img) if img.shape[-3] == 3 else img
    mean = gray.to(dtype).mean(dim=(-3, -2, -1), keepdim=True)
    return _blend(img, mean, float(contrast_factor))


def adjust_saturation(img, saturation_factor=MISSING, *, factor=MISSING):
    """Blends with the grayscale image (0: grey, 1: the image); one channel is left as is. factor=
    is upstream Lucid's name for the factor."""
    saturation_factor = factor_argument(saturation_factor, factor, "saturation_factor", "adjust_saturation")
    if _pil.is_pil_image(img):
        return _pil.adjust_saturation(img, saturation_factor)
    _check_factor(saturation_factor, "saturation_factor", "adjust_saturation")
    _assert_rgb_or_gray(img, "adjust_saturation")
    if img.shape[-3] == 1:  # as PIL
        return img
    return _blend(img, rgb_to_grayscale(img), float(saturation_factor))


def _rgb2hsv(img):
    """torchvision's (PIL's) RGB -> HSV on [..., 3, H, W] floats, H in [0, 1)."""
    r, g, b = img.unbind(-3)
    maxc = img.amax(-3)
    minc = img.amin(-3)
    # maxc == minc (grey) would divide by zero below; any divisor works there, since the
    # terms then cancel, so 1 stands in.
    eqc = maxc == minc
    cr = maxc - minc
    ones = lucid.ones_like(maxc)
    s = cr / lucid.where(eqc, ones, maxc)
    cr_divisor = lucid.where(eqc, ones, cr)
    rc, gc, bc = (maxc - r) / cr_divisor, (maxc - g) / cr_divisor, (maxc - b) / cr_divisor
    hr = (maxc == r).to(img.dtype) * (bc - gc)
    hg = ((maxc == g) & (maxc != r)).to(img.dtype) * (2.0 + rc - bc)
    hb = ((maxc != g) & (maxc != r)).to(img.dtype) * (4.0 + gc - rc)
    h = lucid.fmod((hr + hg + hb) / 6.0 + 1.0, 1.0)
    return lucid.stack((h, s, maxc), -3)


def _hsv2rgb(img):
    h, s, v = img.unbind(-3)
    i = lucid.floor(h * 6.0)
    f = h * 6.0 - i
    i = i.to(lucid.int32) % 6
    p = (v * (1.0 - s)).clamp(0.0, 1.0)
    q = (v * (1.0 - s * f)).clamp(0.0, 1.0)
    t = (v * (1.0 - s * (1.0 - f))).clamp(0.0, 1.0)
    # Sector i of the hue circle picks one of six (r, g, b) arrangements of v, p, q, t.
    mask = (i.unsqueeze(-3) == lucid.arange(6, device=i.device).reshape(-1, 1, 1)).to(img.dtype)
    a1 = lucid.stack((v, q, p, p, t, v), -3)
    a2 = lucid.stack((t, v, v, q, p, p), -3)
    a3 = lucid.stack((p, p, t, v, v, q), -3)
    return (mask.unsqueeze(-4) * lucid.stack((a1, a2, a3), -4)).sum(-3)


def adjust_hue(img, hue_factor=MISSING, *, factor=MISSING):
    """Turns the hue by hue_factor (in [-0.5, 0.5]) of a full circle; one channel is left as is. factor=
    is upstream Lucid's name for the factor."""
    hue_factor = factor_argument(hue_factor, factor, "hue_factor", "adjust_hue")
    if not isinstance(hue_factor, numbers.Real) or isinstance(hue_factor, bool):
        raise TypeError(f"adjust_hue: hue_factor should be a number, got {hue_factor!r}")
    if not -0.5 <= hue_factor <= 0.5:
        raise ValueError(f"adjust_hue: hue_factor ({hue_factor}) is not in [-0.5, 0.5].")
    if _pil.is_pil_image(img):
        return _pil.adjust_hue(img, hue_factor)
    _assert_rgb_or_gray(img, "adjust_hue")
    if img.shape[-3] == 1:  # as PIL
        return img
    orig_dtype = img.dtype
    h, s, v = _rgb2hsv(convert_image_dtype(img, lucid.float32)).unbind(-3)
    h = (h + hue_factor) % 1.0
    return convert_image_dtype(_hsv2rgb(lucid.stack((h, s, v), -3)), orig_dtype)


class Grayscale(Module):
    """rgb_to_grayscale to num_output_channels (1 or 3)."""

    def __init__(self, num_output_channels=1):
        super().__init__()
        self.num_output_channels = num_output_channels

    def forward(self, img):
        return rgb_to_grayscale(img, num_output_channels=self.num_output_channels)

    def __repr__(self):
        return f"{self.__class__.__name__}(num_output_channels={self.num_output_channels})"


class RandomGrayscale(Module):
    """rgb_to_grayscale with probability p, keeping the number of channels."""

    def __init__(self, p=0.1):
        super().__init__()
        self.p = _check_p(p, "RandomGrayscale")

    def forward(self, img):
        num_output_channels = get_dimensions(img)[0]
        if lucid.rand(1, device="cpu").item() < self.p:
            return rgb_to_grayscale(img, num_output_channels=num_output_channels)
        return img

    def __repr__(self):
        return f"{self.__class__.__name__}(p={self.p})"


def _jitter_range(value, name, center=1.0, bound=(0.0, float("inf")), clip_first_on_zero=True):
    """value (v: [center - v, center + v]; or (min, max)) as a range within bound, or None
    when it is just center (nothing to do)."""
    if isinstance(value, numbers.Real) and not isinstance(value, bool):
        if value < 0:
            raise ValueError(f"ColorJitter: if {name} is a single number, it must be non negative, got {value}")
        value = [center - float(value), center + float(value)]
        if clip_first_on_zero:
            value[0] = max(value[0], 0.0)
    elif isinstance(value, (tuple, list)) and len(value) == 2 and all(isinstance(v, numbers.Real) for v in value):
        value = [float(value[0]), float(value[1])]
    else:
        raise TypeError(f"ColorJitter: {name} should be a single number or a list/tuple with length 2, got {value!r}")
    if not bound[0] <= value[0] <= value[1] <= bound[1]:
        raise ValueError(f"ColorJitter: {name} values should be between {bound}, but got {value}.")
    return None if value[0] == value[1] == center else tuple(value)


class ColorJitter(Module, metaclass=TwinMeta):
    """Random brightness, contrast, saturation and hue changes, applied in a random order.

    Two forms: torchvision's ColorJitter(brightness=0, contrast=0, saturation=0, hue=0)
    (always applied; on a typed sample it changes the images only), and upstream Lucid's
    ColorJitter(brightness=0.2, contrast=0.2, saturation=0.2, hue=0.2, p=0.5), chosen by
    passing p (as a keyword or fifth argument): applied with probability p, with upstream's
    defaults for the factors not given.
    """

    @staticmethod
    def _upstream_call(args, kwargs):
        return "p" in kwargs or len(args) >= 5

    def __init__(self, brightness=0, contrast=0, saturation=0, hue=0):
        super().__init__()
        self.brightness = _jitter_range(brightness, "brightness")
        self.contrast = _jitter_range(contrast, "contrast")
        self.saturation = _jitter_range(saturation, "saturation")
        self.hue = _jitter_range(hue, "hue", center=0.0, bound=(-0.5, 0.5), clip_first_on_zero=False)

    @staticmethod
    def get_params(brightness, contrast, saturation, hue):
        """(the order of the four adjustments, then each factor or None)."""
        fn_idx = lucid.randperm(4, device="cpu")
        factors = [None if r is None else _uniform(r[0], r[1]) for r in (brightness, contrast, saturation, hue)]
        return (fn_idx, *factors)

    def forward(self, img):
        fn_idx, *factors = self.get_params(self.brightness, self.contrast, self.saturation, self.hue)

        def jitter(x):
            adjust = (adjust_brightness, adjust_contrast, adjust_saturation, adjust_hue)
            for fn_id in fn_idx.tolist():
                if factors[fn_id] is not None:
                    x = adjust[fn_id](x, factors[fn_id])
            return x
        # A typed sample's images all get the one draw.
        return images_of(img, jitter) if is_typed_sample(img) else jitter(img)

    def __repr__(self):
        return (f"{self.__class__.__name__}(brightness={self.brightness}, contrast={self.contrast}, "
                f"saturation={self.saturation}, hue={self.hue})")
