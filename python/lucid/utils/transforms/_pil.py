"""The PIL side of lucid.utils.transforms (torchvision's _functional_pil): the kernels a
transform runs when it is given a PIL image, and the conversions between PIL images, NumPy
arrays and lucid tensors (to_tensor, pil_to_tensor, to_pil_image and their transforms
ToTensor, PILToTensor, ToPILImage; part of lucid.utils.transforms).

Pillow is imported only here and only when needed: a PIL image is recognised without
importing anything (an object can only be a PIL image once PIL.Image is in sys.modules),
and to_pil_image, the one function that makes PIL images from nothing, imports it then.
NumPy is never used: pixels travel as bytes (Image.tobytes / Image.frombuffer and lucid's
to_bytes / frombuffer), which is also why the modes below are listed with their byte sizes.
"""

import sys

import lucid

_INSTALL_HINT = "Pillow is not installed (pip install pillow)"


def is_pil_image(img):
    mod = sys.modules.get("PIL.Image")
    return mod is not None and isinstance(img, mod.Image)


def pil_status():
    """A note for type errors: whether PIL images could have been given at all."""
    try:
        import PIL  # noqa: F401  (only asked when a transform got something it cannot take)
    except ImportError:
        return f"; PIL images are also accepted, but {_INSTALL_HINT}"
    return ""


def _image_module(where):
    try:
        from PIL import Image
    except ImportError:
        raise ModuleNotFoundError(f"{where} makes PIL images, but {_INSTALL_HINT}") from None
    return Image


# ---- conversions: PIL image / NumPy array <-> tensor -------------------------------------------------------------
# Modes whose bands are not one byte: mode -> (lucid dtype, bytes per band, raw mode for frombuffer).
# "I;16" is unsigned 16-bit; lucid has no uint16, so it is read as int16 (the same bits),
# which is also what torchvision's to_tensor returns.
_WIDE_MODES = {"I": (lucid.int32, 4, "I"), "F": (lucid.float32, 4, "F"), "I;16": (lucid.int16, 2, "I;16")}


def _numpy_array_type():
    """NumPy's ndarray if the caller imported NumPy (lucid never imports it itself)."""
    np = sys.modules.get("numpy")
    return getattr(np, "ndarray", None)


def to_hwc(pic, where):
    """pic's pixels as an [H, W, bands] tensor (int32 for mode I, float32 for F, int16 for
    I;16, else uint8; mode 1 as 0 / 255)."""
    if pic.mode == "1":
        pic = pic.convert("L")
    dtype, nbytes, _ = _WIDE_MODES.get(pic.mode, (lucid.uint8, 1, None))
    bands = len(pic.getbands())
    data = pic.tobytes()
    if len(data) != pic.size[0] * pic.size[1] * bands * nbytes:
        raise TypeError(f"{where}: PIL mode {pic.mode!r} is not supported (its pixels are not {nbytes}-byte "
                        f"values per band)")
    return lucid.frombuffer(bytearray(data), dtype=dtype).reshape(pic.size[1], pic.size[0], bands)


def from_hwc(img, mode, Image):
    """An [H, W, bands] tensor (the dtype to_hwc gives for mode) as a PIL image of mode."""
    rawmode = _WIDE_MODES[mode][2] if mode in _WIDE_MODES else mode
    h, w = img.shape[0], img.shape[1]
    return Image.frombuffer(mode, (w, h), img.contiguous().to_bytes(), "raw", rawmode, 0, 1)


def _same_mode(pic, img_hwc):
    """img_hwc (computed from to_hwc(pic)) as a PIL image of pic's mode, palette included."""
    Image = sys.modules["PIL.Image"]
    if pic.mode == "1":
        return from_hwc(img_hwc, "L", Image).convert("1", dither=Image.Dither.NONE)
    out = from_hwc(img_hwc, pic.mode, Image)
    if pic.mode == "P":
        out.putpalette(pic.getpalette())
    return out


def _pil_values(pic):
    """pic as a [C, H, W] tensor of its own values: uint8, int32 (I), float32 (F), bool (1);
    I;16 becomes int32 (torchvision: uint16, which lucid lacks) so that no value changes."""
    if pic.mode == "1":
        return to_hwc(pic, "pil_to_tensor").permute(2, 0, 1).ne(0)
    img = to_hwc(pic, "pil_to_tensor")
    if pic.mode == "I;16":
        img = img.to(lucid.int32).bitwise_and(0xFFFF)  # the int16 bits read back as unsigned
    return img.permute(2, 0, 1)


_MODES_BY_CHANNELS = {2: ["LA"], 3: ["RGB", "YCbCr", "HSV"], 4: ["RGBA", "CMYK", "RGBX"]}
_ONE_CHANNEL_MODES = {lucid.uint8: "L", lucid.int16: "I;16", lucid.int32: "I", lucid.float32: "F"}


def to_pil_image(pic, mode=None):
    """A tensor [C, H, W] / [H, W] or a NumPy array [H, W, C] / [H, W] as a PIL image, with
    torchvision's rules: floats are scaled by 255 to uint8 unless mode is 'F'; one channel
    gives L / I;16 / I / F by dtype, two LA, three RGB (or YCbCr, HSV), four RGBA (or CMYK,
    RGBX). Needs Pillow."""
    ndarray = _numpy_array_type()
    if isinstance(pic, lucid.Tensor):
        if pic.ndim == 3:
            pic = pic.permute(1, 2, 0)
        img = pic.detach().cpu()  # the scaling below runs where the bytes are read: on the CPU
    elif ndarray is not None and isinstance(pic, ndarray):
        img = lucid.tensor(pic, device="cpu")
    else:
        raise TypeError(f"to_pil_image: pic should be a lucid Tensor or a NumPy array. Got {type(pic).__name__}.")
    if img.ndim == 2:
        img = img.unsqueeze(2)
    if img.ndim != 3:
        raise ValueError(f"to_pil_image: pic should be 2/3 dimensional. Got {img.ndim} dimensions.")
    if img.shape[-1] > 4:
        raise ValueError(f"to_pil_image: pic should not have > 4 channels. Got {img.shape[-1]} channels.")
    Image = _image_module("to_pil_image")
    if img.is_floating_point() and mode != "F":
        img = (img * 255).to(lucid.uint8)  # truncating, as torchvision's astype(uint8)
    channels = img.shape[2]
    if channels == 1:
        expected = _ONE_CHANNEL_MODES.get(img.dtype)
        if mode is not None and mode != expected:
            raise ValueError(f"to_pil_image: incorrect mode ({mode}) supplied for input type {img.dtype}. Should be "
                             f"{expected}")
        mode = expected
    else:
        permitted = _MODES_BY_CHANNELS[channels]
        if mode is not None and mode not in permitted:
            raise ValueError(f"to_pil_image: only modes {permitted} are supported for {channels} channel inputs, "
                             f"got {mode!r}")
        if mode is None and img.dtype == lucid.uint8:
            mode = permitted[0]
        if img.dtype != lucid.uint8:
            mode = None  # PIL's multi-band modes hold bytes only
    if mode is None:
        raise TypeError(f"to_pil_image: input type {img.dtype} is not supported for {channels} channel(s)")
    return from_hwc(img, mode, Image)


def to_tensor(pic):
    """An image [H, W] or [H, W, C] (lucid tensor, NumPy array, or PIL image) as a tensor
    [C, H, W]: uint8 becomes the default float dtype divided by 255, other dtypes keep
    their values (torchvision's rule for arrays)."""
    ndarray = _numpy_array_type()
    if is_pil_image(pic):
        img = to_hwc(pic, "to_tensor")
    elif isinstance(pic, lucid.Tensor) or (ndarray is not None and isinstance(pic, ndarray)):
        if pic.ndim not in (2, 3):
            raise ValueError(f"to_tensor: pic should be 2/3 dimensional ([H, W] or [H, W, C]). Got {pic.ndim} "
                             "dimensions.")
        # (a copy on the CPU, as torchvision's from_numpy)
        img = pic if isinstance(pic, lucid.Tensor) else lucid.tensor(pic, device="cpu")
    else:
        raise TypeError(f"to_tensor: pic should be a lucid Tensor, a NumPy array or a PIL image [H, W] or "
                        f"[H, W, C]. Got {type(pic).__name__}{pil_status()}")
    if img.ndim == 2:
        img = img.unsqueeze(-1)
    img = img.permute(2, 0, 1).contiguous()
    if img.dtype == lucid.uint8:
        return img.to(lucid.get_default_dtype()).div(255)
    return img


def pil_to_tensor(pic):
    """A PIL image as a [C, H, W] tensor of its pixel values, unscaled: uint8, int32 for
    modes I and I;16, float32 for F, bool for 1."""
    if not is_pil_image(pic):
        raise TypeError(f"pil_to_tensor: pic should be PIL Image. Got {type(pic).__name__}{pil_status()}")
    return _pil_values(pic)


class ToTensor:
    """to_tensor: [H, W] / [H, W, C] image -> [C, H, W], uint8 scaled to [0, 1] floats."""

    def __call__(self, pic):
        return to_tensor(pic)

    def __repr__(self):
        return f"{self.__class__.__name__}()"


class PILToTensor:
    """pil_to_tensor: a PIL image -> [C, H, W] tensor of its unscaled pixel values."""

    def __call__(self, pic):
        return pil_to_tensor(pic)

    def __repr__(self):
        return f"{self.__class__.__name__}()"


class ToPILImage:
    """to_pil_image: a tensor [C, H, W] / [H, W] or NumPy array [H, W, C] -> PIL image of
    mode (None: from the channels and dtype)."""

    def __init__(self, mode=None):
        self.mode = mode

    def __call__(self, pic):
        return to_pil_image(pic, self.mode)

    def __repr__(self):
        return self.__class__.__name__ + ("()" if self.mode is None else f"(mode={self.mode})")


# ---- geometry ---------------------------------------------------------------------------------------
def get_dimensions(pic):
    return [len(pic.getbands()), pic.size[1], pic.size[0]]


def hflip(pic):
    return pic.transpose(sys.modules["PIL.Image"].FLIP_LEFT_RIGHT)


def vflip(pic):
    return pic.transpose(sys.modules["PIL.Image"].FLIP_TOP_BOTTOM)


def crop(pic, top, left, height, width):
    return pic.crop((left, top, left + width, top + height))  # PIL fills outside the image with 0


def resize(pic, size, pil_filter):
    """size: [h, w]."""
    return pic.resize((size[1], size[0]), pil_filter)


def parse_fill(fill, pic, name="fillcolor"):
    """fill as PIL takes it for pic: one value per band (ints unless mode F); None is 0."""
    channels = len(pic.getbands())
    if fill is None:
        fill = 0
    if isinstance(fill, (int, float)) and channels > 1:
        fill = tuple([fill] * channels)
    if isinstance(fill, (list, tuple)):
        if len(fill) == 1:
            fill = tuple(fill) * channels
        elif len(fill) != channels:
            raise ValueError(f"The number of elements in 'fill' does not match the number of channels of the image "
                             f"({len(fill)} != {channels})")
        fill = tuple(fill)
    if pic.mode != "F":
        fill = tuple(int(x) for x in fill) if isinstance(fill, tuple) else int(fill)
    return {name: fill}


def pad(pic, padding, fill, padding_mode, tensor_pad):
    """padding as torchvision's PIL pad takes it (int, or 1, 2 or 4 values). constant uses
    PIL's ImageOps.expand (a negative border crops); the mirroring modes run tensor_pad
    (lucid's tensor pad, the same semantics as the np.pad torchvision calls) on the pixels."""
    if isinstance(padding, (list, tuple)) and len(padding) == 1:
        padding = padding[0]
    if padding_mode == "constant":
        from PIL import ImageOps
        out = ImageOps.expand(pic, border=tuple(padding) if isinstance(padding, list) else padding,
                              **parse_fill(fill, pic, name="fill"))
        if pic.mode == "P":
            out.putpalette(pic.getpalette())
        return out
    chw = to_hwc(pic, "pad").permute(2, 0, 1)
    return _same_mode(pic, tensor_pad(chw, padding, 0, padding_mode).permute(1, 2, 0))


def rotate(pic, angle, pil_filter, expand, center, fill):
    return pic.rotate(angle, pil_filter, expand, center, **parse_fill(fill, pic))


# ---- colour -----------------------------------------------------------------------------------------
def to_grayscale(pic, num_output_channels):
    if num_output_channels not in (1, 3):
        raise ValueError(f"num_output_channels should be either 1 or 3, got {num_output_channels!r}")
    gray = pic.convert("L")
    if num_output_channels == 1:
        return gray
    return sys.modules["PIL.Image"].merge("RGB", (gray, gray, gray))


def _enhance(pic, name, factor):
    from PIL import ImageEnhance
    return getattr(ImageEnhance, name)(pic).enhance(factor)


def adjust_brightness(pic, factor):
    return _enhance(pic, "Brightness", factor)


def adjust_contrast(pic, factor):
    return _enhance(pic, "Contrast", factor)


def adjust_saturation(pic, factor):
    return _enhance(pic, "Color", factor)


def adjust_hue(pic, hue_factor):
    """Shifts the H band of pic's HSV form by hue_factor of a turn, wrapping as uint8 (so
    as torchvision: int(hue_factor * 255), then modulo 256)."""
    if pic.mode in ("L", "1", "I", "F"):
        return pic
    Image = sys.modules["PIL.Image"]
    h, s, v = pic.convert("HSV").split()
    shift = int(hue_factor * 255) % 256
    h = h.point(lambda x: (x + shift) % 256)
    return Image.merge("HSV", (h, s, v)).convert(pic.mode)
