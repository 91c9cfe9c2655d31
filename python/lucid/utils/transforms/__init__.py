"""lucid.utils.transforms: torchvision.transforms' image transforms for lucid tensors and PIL images.

An image is a tensor [..., C, H, W] (or [H, W]) or a PIL image; the transforms keep
torchvision's names, arguments, defaults, semantics and __repr__. A PIL image in gives a PIL
image out, computed by the same PIL calls torchvision makes (_pil.py); Pillow is
imported only once a PIL image is seen or made. The functional forms are module-level
functions, also grouped as `lucid.utils.transforms.functional` (importable like
torchvision.transforms.functional).

Differences from torchvision:
  * ToTensor / to_tensor also take a lucid tensor, read like the NumPy array torchvision
    takes: [H, W] or [H, W, C] -> [C, H, W]; uint8 scaled to [0, 1] in the default float
    dtype, other dtypes keep their values. (torchvision refuses tensors.) A NumPy array is
    taken only when the caller has imported NumPy.
  * pil_to_tensor gives int32 for mode I;16 (torchvision: uint16, which lucid lacks).
  * interpolation may also be given as InterpolationMode's string value ("bilinear");
    there is no BOX, HAMMING or LANCZOS (PIL-only modes in torchvision).
  * resize and rotate take any [..., C, H, W] batch and [H, W].
  * pad's edge / reflect / symmetric modes keep a PIL image's mode (torchvision's give
    YCbCr, HSV, CMYK images back labelled RGB / RGBA).
  * pad's "reflect" and "symmetric" modes raise ValueError (not IndexError / RuntimeError)
    when a side's padding exceeds what the mode can mirror.
Random draws come from lucid's global generator (lucid.rand / lucid.randint), so
lucid.manual_seed repeats them, and DataLoader workers (seeded per worker) differ.

The module also carries upstream Lucid's (Albumentations-style) transforms: typed targets
(Image, Mask, BoundingBoxes, Keypoints) that geometric transforms move together, a
probability p on every transform, composition (Compose with BboxParams, OneOf, SomeOf,
OneOrOther, Sequential, ReplayCompose), geometric, photometric, blur, noise and dropout
families, AutoAugment / RandAugment / TrivialAugmentWide, and task presets (see _base.py for
the design, the other modules for each family). Where a name is both torchvision's and
upstream's (Compose, Lambda, Resize, CenterCrop, RandomCrop, RandomResizedCrop, Normalize,
ColorJitter, RandomErasing, and functional pad, center_crop, normalize, adjust_*,
rgb_to_grayscale, posterize), torchvision's calls behave as torchvision's and upstream's
signature selects upstream's behaviour; each docstring says how.
"""

import enum
import math
import numbers
import sys
import types
from collections.abc import Sequence

import lucid
from ...nn import functional as _F
from ...nn import Module
from . import _pil
from ._pil import PILToTensor, ToPILImage, ToTensor, pil_to_tensor, to_pil_image, to_tensor
from ._base import MISSING, factor_argument
from ._composition import Compose, Lambda
from ._twins import TwinMeta, images_of, is_int, is_plain_number, reject_typed_sample

__all__ = ["InterpolationMode", "Compose", "Lambda", "ToTensor", "PILToTensor", "ToPILImage", "ConvertImageDtype",
           "Normalize", "Resize", "CenterCrop", "RandomCrop", "RandomResizedCrop", "FiveCrop", "TenCrop", "Pad",
           "RandomHorizontalFlip", "RandomVerticalFlip", "RandomRotation", "Grayscale", "RandomGrayscale",
           "ColorJitter", "functional"]


class InterpolationMode(enum.Enum):
    """The interpolation modes torchvision supports for tensor images."""
    NEAREST = "nearest"
    NEAREST_EXACT = "nearest-exact"
    BILINEAR = "bilinear"
    BICUBIC = "bicubic"


# Pillow's resampling filters for the modes (torchvision's pil_modes_mapping), which also
# name the modes when given as ints (Image.BILINEAR is 2).
_PIL_FILTERS = {InterpolationMode.NEAREST: 0, InterpolationMode.NEAREST_EXACT: 0, InterpolationMode.BILINEAR: 2,
                InterpolationMode.BICUBIC: 3}
_PIL_FILTER_MODES = {0: InterpolationMode.NEAREST, 2: InterpolationMode.BILINEAR, 3: InterpolationMode.BICUBIC}
_ALL_MODES = tuple(InterpolationMode)


def _interpolation(mode, allowed, where, kind="tensor"):
    """mode (an InterpolationMode, its string value, or Pillow's int constant for it) as an
    InterpolationMode among allowed."""
    if isinstance(mode, int) and not isinstance(mode, bool):
        if mode not in _PIL_FILTER_MODES:
            raise ValueError(f"{where}: Pillow resampling filter {mode} has no InterpolationMode in lucid, expected "
                             f"one of {sorted(_PIL_FILTER_MODES)} (nearest, bilinear, bicubic)")
        mode = _PIL_FILTER_MODES[mode]
    if isinstance(mode, str):
        try:
            mode = InterpolationMode(mode)
        except ValueError:
            raise ValueError(f"{where}: unknown interpolation {mode!r}, expected one of "
                             f"{[m.value for m in allowed]}") from None
    if not isinstance(mode, InterpolationMode):
        raise TypeError(f"{where}: interpolation should be an InterpolationMode or its string value, "
                        f"got {type(mode).__name__}")
    if mode not in allowed:
        raise ValueError(f"{where}: interpolation mode '{mode.value}' is unsupported with {kind} input, "
                         f"expected one of {[m.value for m in allowed]}")
    return mode


# ---- helpers ---------------------------------------------------------------------------------------
def _assert_image_tensor(img, where):
    if not isinstance(img, lucid.Tensor):
        raise TypeError(f"{where}: img should be a lucid Tensor image [..., C, H, W] or [H, W], or a PIL image, "
                        f"got {type(img).__name__}{_pil.pil_status()}")
    if img.ndim < 2:
        raise TypeError(f"{where}: expected a tensor image [..., C, H, W] or [H, W] (at least 2 dims), got a "
                        f"tensor of shape {list(img.shape)}")


def get_dimensions(img):
    """[channels, height, width] of an image (channels 1 for a tensor [H, W])."""
    if _pil.is_pil_image(img):
        return _pil.get_dimensions(img)
    _assert_image_tensor(img, "get_dimensions")
    channels = 1 if img.ndim == 2 else img.shape[-3]
    return [channels, img.shape[-2], img.shape[-1]]


def get_image_size(img):
    """[width, height], as torchvision (note the order)."""
    _, h, w = get_dimensions(img)
    return [w, h]


def get_image_num_channels(img):
    return get_dimensions(img)[0]


def _as_batch(img):
    """img as [N, C, H, W] (interpolate and grid_sample take only that) and a function that
    gives a result [N, C, h, w] back the leading dims of img."""
    lead = list(img.shape[:-2])                    # [..., C] or [] for [H, W]
    c = lead[-1] if lead else 1
    x = img.reshape(-1, c, img.shape[-2], img.shape[-1])
    return x, lambda out: out.reshape(lead + [out.shape[-2], out.shape[-1]])


def _cast_in(x, dtypes):
    """x in dtypes (else the first of them): the resampling ops work on floats only."""
    return x if x.dtype in dtypes else x.to(dtypes[0])


def _cast_out(x, dtype):
    """Back to dtype; integer images are rounded first, as torchvision (a cast truncates)."""
    if x.dtype == dtype:
        return x
    if not dtype.is_floating_point:
        x = lucid.round(x)
    return x.to(dtype)


def _setup_size(size, what):
    """size (an int, or a sequence of one or two) as a (height, width) tuple of positive ints."""
    if isinstance(size, numbers.Number) and not isinstance(size, bool):
        size = (int(size), int(size))
    elif isinstance(size, Sequence) and len(size) == 1:
        size = (size[0], size[0])
    elif not isinstance(size, Sequence) or len(size) != 2:
        raise ValueError(f"{what}: please provide only two dimensions (h, w) for size, got {size!r}")
    if not all(isinstance(s, int) and not isinstance(s, bool) and s > 0 for s in size):
        raise ValueError(f"{what}: size should be positive ints (h, w), got {size!r}")
    return tuple(size)


# ---- functional: geometry ------------------------------------------------------------------------
def hflip(img):
    """Flips the image left to right (the last dim)."""
    if _pil.is_pil_image(img):
        return _pil.hflip(img)
    _assert_image_tensor(img, "hflip")
    return img.flip(-1)


def vflip(img):
    """Flips the image top to bottom (the second last dim)."""
    if _pil.is_pil_image(img):
        return _pil.vflip(img)
    _assert_image_tensor(img, "vflip")
    return img.flip(-2)


_PADDING_MODES = ("constant", "edge", "reflect", "symmetric")


def _is_number(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _check_padding(padding, fill, padding_mode, where, tensor=True):
    """tensor: the image is a tensor, whose fill is one number (a PIL image's may be one per
    band); the transforms' constructors check with tensor=False, not knowing the image yet."""
    if not isinstance(padding, (int, tuple, list)) or isinstance(padding, bool):
        raise TypeError(f"{where}: padding should be an int or a 1, 2 or 4 element tuple/list, "
                        f"got {type(padding).__name__}")
    if isinstance(padding, (tuple, list)):
        if len(padding) not in (1, 2, 4):
            raise ValueError(f"{where}: padding must be an int or a 1, 2, or 4 element tuple, not a "
                             f"{len(padding)} element tuple")
        if not all(isinstance(p, int) and not isinstance(p, bool) for p in padding):
            raise TypeError(f"{where}: padding values should be ints, got {padding!r}")
    if fill is not None and not _is_number(fill) and (tensor or not (
            isinstance(fill, (tuple, list)) and fill and all(_is_number(f) for f in fill))):
        raise TypeError(f"{where}: fill should be an int or float{'' if tensor else ' or a tuple of them'} "
                        f"for {'tensor' if tensor else 'tensor or PIL'} images, got {fill!r}")
    if padding_mode not in _PADDING_MODES:
        raise ValueError(f"{where}: padding mode should be either constant, edge, reflect or symmetric, "
                         f"got {padding_mode!r}")


def _parse_padding(padding):
    """padding (int, or 1, 2 or 4 values: all; left/right, top/bottom; left, top, right,
    bottom) as [left, right, top, bottom]."""
    if isinstance(padding, int):
        return [padding] * 4
    if len(padding) == 1:
        return [padding[0]] * 4
    if len(padding) == 2:
        return [padding[0], padding[0], padding[1], padding[1]]
    return [padding[0], padding[2], padding[1], padding[3]]


def _pad_index(n, lo, hi, mode):
    """For each position of a dim of size n padded by lo before and hi after: the index of
    the input element it copies."""
    def source(i):
        if 0 <= i < n:
            return i
        if mode == "edge":
            return 0 if i < 0 else n - 1
        if mode == "reflect":                  # mirrors about the edge pixel: 2 1 | 0 1 2
            return -i if i < 0 else 2 * (n - 1) - i
        return -i - 1 if i < 0 else 2 * n - 1 - i  # symmetric repeats it: 1 0 | 0 1 2
    return [source(i) for i in range(-lo, n + hi)]


_UPSTREAM_PAD_MODES = ("constant", "reflect", "replicate", "circular")


def _upstream_pad(img, padding, mode, value):
    """upstream Lucid's pad: padding an int or (left, right, top, bottom), mode one of
    lucid.nn.functional.pad's."""
    _assert_image_tensor(img, "pad")
    if is_int(padding):
        padding = (padding,) * 4
    if not isinstance(padding, (tuple, list)) or len(padding) != 4 or not all(is_int(p) for p in padding):
        raise TypeError(f"pad: with mode= / value=, padding should be an int or (left, right, top, bottom) ints, "
                        f"got {padding!r}")
    if mode not in _UPSTREAM_PAD_MODES:
        raise ValueError(f"pad: mode should be one of {_UPSTREAM_PAD_MODES}, got {mode!r}")
    if not is_plain_number(value):
        raise TypeError(f"pad: value should be a number, got {value!r}")
    return _F.pad(img, list(padding), mode=mode, value=float(value))


def pad(img, padding, fill=0, padding_mode="constant", *, mode=None, value=None):
    """Pads the last two dims. padding: int, or (left/right, top/bottom), or (left, top,
    right, bottom); a negative value crops. padding_mode: constant (fill), edge, reflect
    (without repeating the edge: a side at most size - 1), symmetric (repeating it: at most
    size). A PIL image's fill may be a value per band.

    Upstream Lucid's form pad(img, padding, *, mode="constant", value=0.0) is chosen by
    passing mode= or value=: then a 4-tuple padding is (left, right, top, bottom) (as
    lucid.nn.functional.pad) and mode is constant, reflect, replicate or circular."""
    if mode is not None or value is not None:
        if fill != 0 or padding_mode != "constant":
            raise TypeError("pad: give torchvision's fill / padding_mode or upstream's mode / value, not both")
        return _upstream_pad(img, padding, "constant" if mode is None else mode, 0.0 if value is None else value)
    if _pil.is_pil_image(img):
        _check_padding(padding, fill, padding_mode, "pad", tensor=False)
        return _pil.pad(img, padding, fill, padding_mode, pad)
    _assert_image_tensor(img, "pad")
    _check_padding(padding, fill, padding_mode, "pad")
    left, right, top, bottom = _parse_padding(padding)
    h, w = img.shape[-2], img.shape[-1]
    # Negative padding crops; cropping first leaves only growth for every mode.
    if min(left, right, top, bottom) < 0:
        if -min(left, 0) - min(right, 0) > w or -min(top, 0) - min(bottom, 0) > h:
            raise ValueError(f"pad: negative padding {[left, top, right, bottom]} (left, top, right, bottom) "
                             f"crops more than the image's {h}x{w} (h x w)")
        img = img[..., -min(top, 0):h + min(bottom, 0), -min(left, 0):w + min(right, 0)]
        left, right, top, bottom = (max(p, 0) for p in (left, right, top, bottom))
        h, w = img.shape[-2], img.shape[-1]
    if padding_mode == "constant":
        return _F.pad(img, [left, right, top, bottom], mode="constant", value=float(0 if fill is None else fill))
    for dim, n, lo, hi, name in ((-1, w, left, right, "width"), (-2, h, top, bottom, "height")):
        if lo == 0 and hi == 0:
            continue
        limit = n - 1 if padding_mode == "reflect" else n if padding_mode == "symmetric" else None
        if n == 0 or (limit is not None and max(lo, hi) > limit):
            raise ValueError(f"pad: padding ({lo}, {hi}) along the {name} ({n}) is too large for "
                             f"padding_mode='{padding_mode}': expected at most {limit} on each side")
        index = lucid.tensor(_pad_index(n, lo, hi, padding_mode), dtype=lucid.int64, device=img.device)
        img = lucid.index_select(img, img.ndim + dim, index)
    return img


def crop(img, top, left, height, width):
    """The window [top, top + height) x [left, left + width); the parts outside the image
    are zeros (as torchvision)."""
    if not _pil.is_pil_image(img):
        _assert_image_tensor(img, "crop")
    for name, v in (("top", top), ("left", left), ("height", height), ("width", width)):
        if not isinstance(v, int) or isinstance(v, bool):
            raise TypeError(f"crop: {name} should be an int, got {v!r}")
    if height < 0 or width < 0:
        raise ValueError(f"crop: height and width should be non-negative, got {height} and {width}")
    if _pil.is_pil_image(img):
        return _pil.crop(img, top, left, height, width)
    _, h, w = get_dimensions(img)
    right, bottom = left + width, top + height
    if left < 0 or top < 0 or right > w or bottom > h:
        padding_ltrb = [max(-left + min(0, right), 0), max(-top + min(0, bottom), 0),
                        max(right - max(w, left), 0), max(bottom - max(h, top), 0)]
        return pad(img[..., max(top, 0):max(bottom, 0), max(left, 0):max(right, 0)], padding_ltrb, fill=0)
    return img[..., top:bottom, left:right]


def center_crop(img, output_size=MISSING, *, size=MISSING):
    """The central (h, w) window; an image smaller than it is zero-padded first (the odd
    pixel of padding going right / bottom), as torchvision. size= is upstream Lucid's name
    for output_size."""
    output_size = factor_argument(output_size, size, "output_size", "center_crop", "size")
    if not _pil.is_pil_image(img):
        _assert_image_tensor(img, "center_crop")
    crop_height, crop_width = _setup_size(output_size, "center_crop")
    _, image_height, image_width = get_dimensions(img)
    if crop_width > image_width or crop_height > image_height:
        padding_ltrb = [(crop_width - image_width) // 2 if crop_width > image_width else 0,
                        (crop_height - image_height) // 2 if crop_height > image_height else 0,
                        (crop_width - image_width + 1) // 2 if crop_width > image_width else 0,
                        (crop_height - image_height + 1) // 2 if crop_height > image_height else 0]
        img = pad(img, padding_ltrb, fill=0)
        _, image_height, image_width = get_dimensions(img)
        if crop_width == image_width and crop_height == image_height:
            return img
    crop_top = int(round((image_height - crop_height) / 2.0))
    crop_left = int(round((image_width - crop_width) / 2.0))
    return crop(img, crop_top, crop_left, crop_height, crop_width)


def _resized_output_size(h, w, size, max_size):
    """torchvision's rule: (h, w) given; one value = the smaller edge, the other scaled (and
    truncated) to keep the aspect ratio, then both shrunk if the longer exceeds max_size;
    None = the longer edge becomes max_size."""
    short, long = (w, h) if w <= h else (h, w)
    if size is None:
        new_short, new_long = int(max_size * short / long), max_size
    elif len(size) == 1:
        new_short, new_long = size[0], int(size[0] * long / short)
        if max_size is not None:
            if max_size <= size[0]:
                raise ValueError(f"resize: max_size = {max_size} must be strictly greater than the requested size "
                                 f"for the smaller edge size = {size}")
            if new_long > max_size:
                new_short, new_long = int(max_size * new_short / new_long), max_size
    else:
        return [size[0], size[1]]
    new_w, new_h = (new_short, new_long) if w <= h else (new_long, new_short)
    if new_h < 1 or new_w < 1:
        raise ValueError(f"resize: resizing {h}x{w} (h x w) with size={size}, max_size={max_size} gives an empty "
                         f"{new_h}x{new_w} image")
    return [new_h, new_w]


def _check_resize_size(size, max_size, where):
    if size is None:
        if not isinstance(max_size, int) or isinstance(max_size, bool):
            raise ValueError(f"{where}: max_size must be an int when size is None, got {max_size!r}")
        return None
    given = size
    if isinstance(size, int) and not isinstance(size, bool):
        size = [size]
    elif not isinstance(size, (list, tuple)):
        raise TypeError(f"{where}: size should be an int or a sequence, got {type(size).__name__}")
    if len(size) not in (1, 2):
        raise ValueError(f"{where}: size must be an int or a 1 or 2 element tuple/list, not a {len(size)} "
                         "element tuple/list")
    if not all(isinstance(s, int) and not isinstance(s, bool) and s > 0 for s in size):
        raise ValueError(f"{where}: size should be a positive int or positive ints (h, w), got {given!r}")
    if max_size is not None and len(size) != 1:
        raise ValueError(f"{where}: max_size should only be passed if size specifies the length of the smaller "
                         "edge, i.e. size should be an int or a sequence of length 1")
    return list(size)


_RESIZE_MODES = (InterpolationMode.NEAREST, InterpolationMode.NEAREST_EXACT, InterpolationMode.BILINEAR,
                 InterpolationMode.BICUBIC)


def resize(img, size, interpolation=InterpolationMode.BILINEAR, max_size=None, antialias=True):
    """Resizes the last two dims to size ((h, w), or an int / [int]: the smaller edge, the
    other keeping the aspect ratio) with F.interpolate (align_corners=False); antialias
    applies to bilinear and bicubic only. Integer images are resampled as float32 and
    rounded back (bicubic uint8 clamped to [0, 255]), as torchvision. A PIL image is resized
    by PIL's resize with the mode's filter (which always antialiases)."""
    if not _pil.is_pil_image(img):
        _assert_image_tensor(img, "resize")
    mode = _interpolation(interpolation, _RESIZE_MODES, "resize")
    size = _check_resize_size(size, max_size, "resize")
    _, h, w = get_dimensions(img)
    output_size = _resized_output_size(h, w, size, max_size)
    if [h, w] == output_size:
        return img
    if _pil.is_pil_image(img):
        return _pil.resize(img, output_size, _PIL_FILTERS[mode])
    antialias = bool(antialias) and mode in (InterpolationMode.BILINEAR, InterpolationMode.BICUBIC)
    x, restore = _as_batch(img)
    x = _cast_in(x, (lucid.float32, lucid.float64))
    align_corners = False if mode in (InterpolationMode.BILINEAR, InterpolationMode.BICUBIC) else None
    x = _F.interpolate(x, size=output_size, mode=mode.value, align_corners=align_corners, antialias=antialias)
    if mode == InterpolationMode.BICUBIC and img.dtype == lucid.uint8:
        x = x.clamp(0, 255)  # bicubic overshoots; a uint8 cast would wrap
    return restore(_cast_out(x, img.dtype))


def _rotation_inverse_matrix(center, angle):
    """torchvision's _get_inverse_affine_matrix for a pure rotation: the 2x3 map (row-major)
    from output to input pixel coordinates centred on the image, rotating by angle degrees
    clockwise about center."""
    rot = math.radians(angle)
    cx, cy = center
    m = [math.cos(rot), math.sin(rot), 0.0, -math.sin(rot), math.cos(rot), 0.0]
    m[2] = m[0] * -cx + m[1] * -cy + cx
    m[5] = m[3] * -cx + m[4] * -cy + cy
    return m


def _expanded_size(m, w, h):
    """(width, height) holding the whole rotated image (PIL's rule, as torchvision)."""
    corners = [(-0.5 * w, -0.5 * h), (-0.5 * w, 0.5 * h), (0.5 * w, 0.5 * h), (0.5 * w, -0.5 * h)]
    xs = [m[0] * x + m[1] * y + m[2] + 0.5 * w for x, y in corners]
    ys = [m[3] * x + m[4] * y + m[5] + 0.5 * h for x, y in corners]
    tol = 1e-4  # truncate to 1e-4 so that ceil(5 + 1e-15) stays 5

    def extent(vals):
        return math.ceil(math.trunc(max(vals) / tol) * tol) - math.floor(math.trunc(min(vals) / tol) * tol)
    return int(extent(xs)), int(extent(ys))


_TENSOR_ROTATE_MODES = (InterpolationMode.NEAREST, InterpolationMode.BILINEAR)
_PIL_ROTATE_MODES = (InterpolationMode.NEAREST, InterpolationMode.NEAREST_EXACT, InterpolationMode.BILINEAR,
                     InterpolationMode.BICUBIC)


def rotate(img, angle, interpolation=InterpolationMode.NEAREST, expand=False, center=None, fill=None):
    """Rotates by angle degrees counter-clockwise about center ((x, y), torchvision's
    convention: pixel i spans [i, i + 1]; default the image centre, pixel index
    ((W - 1) / 2, (H - 1) / 2)), sampling with grid_sample
    (nearest or bilinear, align_corners=False). expand: the output grows to hold the whole
    rotated image. fill: value(s) (one, or one per channel) for the area outside the image;
    None leaves grid_sample's zeros (without the mask blend torchvision uses for a fill).
    A PIL image is rotated by PIL's rotate (nearest, bilinear or bicubic)."""
    is_pil = _pil.is_pil_image(img)
    if not is_pil:
        _assert_image_tensor(img, "rotate")
    if not isinstance(angle, (int, float)) or isinstance(angle, bool):
        raise TypeError(f"rotate: angle should be an int or float, got {type(angle).__name__}")
    if center is not None and (not isinstance(center, (list, tuple)) or len(center) != 2):
        raise TypeError(f"rotate: center should be a sequence (x, y), got {center!r}")
    if is_pil:
        mode = _interpolation(interpolation, _PIL_ROTATE_MODES, "rotate", kind="PIL")
        return _pil.rotate(img, angle, _PIL_FILTERS[mode], expand, center, fill)
    mode = _interpolation(interpolation, _TENSOR_ROTATE_MODES, "rotate")
    channels, h, w = get_dimensions(img)
    if fill is not None:
        values = [fill] if isinstance(fill, (int, float)) else list(fill) if isinstance(fill, (list, tuple)) else []
        if not values or any(not isinstance(f, (int, float)) for f in values):
            raise TypeError(f"rotate: fill should be a number or a list/tuple of numbers, got {fill!r}")
        fill = [float(f) for f in values]
        if len(fill) not in (1, channels):
            raise ValueError(f"rotate: the number of elements in 'fill' cannot broadcast to match the number of "
                             f"channels of the image ({len(fill)} != {channels})")
    # Coordinates are centred on the image: pixel i sits at i + 0.5 - size / 2. torchvision
    # gives center in coordinates where pixel i spans [i, i + 1]; it builds the matrix for
    # -angle since its affine convention turns the other way.
    center_f = [0.0, 0.0] if center is None else [float(c) - s * 0.5 for c, s in zip(center, (w, h))]
    m = _rotation_inverse_matrix(center_f, -angle)
    ow, oh = _expanded_size(m, w, h) if expand else (w, h)

    x, restore = _as_batch(img)
    dtype = img.dtype if img.dtype.is_floating_point else lucid.float32
    x = _cast_in(x, (dtype,))
    # The sampling grid: each output pixel centre mapped through m, normalised by the
    # *input* size (so an expanded output samples outside [-1, 1] where there is nothing).
    xs = lucid.linspace(-ow * 0.5 + 0.5, ow * 0.5 - 0.5, steps=ow, dtype=dtype, device=img.device).reshape(1, ow)
    ys = lucid.linspace(-oh * 0.5 + 0.5, oh * 0.5 - 0.5, steps=oh, dtype=dtype, device=img.device).reshape(oh, 1)
    gx = (xs * m[0] + ys * m[1] + m[2]) / (0.5 * w)
    gy = (xs * m[3] + ys * m[4] + m[5]) / (0.5 * h)
    n = x.shape[0]
    grid = lucid.stack([gx, gy], -1).reshape(1, oh, ow, 2).expand(n, oh, ow, 2)
    if fill is not None:
        # A channel of ones rides along: after sampling it says how much of each output
        # pixel came from inside the image, and the rest is blended with fill.
        x = lucid.cat([x, lucid.ones(n, 1, h, w, dtype=dtype, device=img.device)], 1)
    out = _F.grid_sample(x, grid, mode=mode.value, padding_mode="zeros", align_corners=False)
    if fill is not None:
        out, mask = out[:, :-1], out[:, -1:]
        fill_t = lucid.tensor(fill, dtype=dtype, device=img.device).reshape(1, len(fill), 1, 1)
        if mode == InterpolationMode.NEAREST:
            out = lucid.where(mask < 0.5, fill_t, out)
        else:
            out = (out - fill_t) * mask + fill_t
    return restore(_cast_out(out, img.dtype))


# ---- functional: values ------------------------------------------------------------------------------
_INT_DTYPES = (lucid.uint8, lucid.int8, lucid.int16, lucid.int32, lucid.int64)


def _max_value(dtype):
    return lucid.iinfo(dtype).max


def convert_image_dtype(image, dtype=lucid.float32):
    """Converts an image to dtype, rescaling values: floats live in [0, 1], integers in
    [0, dtype's max]."""
    if not isinstance(image, lucid.Tensor):
        raise TypeError(f"convert_image_dtype: input img should be a lucid Tensor image, got {type(image).__name__}")
    if not isinstance(dtype, lucid.dtype):
        raise TypeError(f"convert_image_dtype: dtype should be a lucid.dtype, got {dtype!r}")
    for d in (image.dtype, dtype):
        if d == lucid.bool or not (d.is_floating_point or d in _INT_DTYPES):
            raise TypeError(f"convert_image_dtype: expected float or integer dtypes, got {d}")
    if image.dtype == dtype:
        return image
    if image.is_floating_point():
        if dtype.is_floating_point:
            return image.to(dtype)
        if (image.dtype == lucid.float32 and dtype in (lucid.int32, lucid.int64)) or (
                image.dtype == lucid.float64 and dtype == lucid.int64):
            raise RuntimeError(f"convert_image_dtype: the cast from {image.dtype} to {dtype} cannot be performed "
                               "safely.")
        # Scaling by max + 1 - eps (then truncating) gives each integer an equal share of
        # [0, 1]; scaling by max would give max only to exactly 1.0.
        eps = 1e-3
        return image.mul(float(_max_value(dtype)) + 1.0 - eps).to(dtype)
    input_max = float(_max_value(image.dtype))
    if dtype.is_floating_point:
        return image.to(dtype) / input_max
    output_max = float(_max_value(dtype))
    # int to int: integer factors of the (max + 1) ranges, as torchvision
    if input_max > output_max:
        factor = int((input_max + 1) // (output_max + 1))
        return image.div(factor, rounding_mode="floor").to(dtype)
    factor = int((output_max + 1) // (input_max + 1))
    return image.to(dtype) * factor


def normalize(tensor=MISSING, mean=MISSING, std=MISSING, inplace=False, *, img=MISSING):
    """(tensor - mean) / std per channel of a float tensor [..., C, H, W]. img= is upstream
    Lucid's name for tensor."""
    tensor = factor_argument(tensor, img, "tensor", "normalize", "img")
    if mean is MISSING or std is MISSING:
        raise TypeError("normalize: missing the mean and std arguments")
    if not isinstance(tensor, lucid.Tensor):
        raise TypeError(f"normalize: img should be a lucid Tensor image. Got {type(tensor).__name__}")
    if not tensor.is_floating_point():
        raise TypeError(f"normalize: input tensor should be a float tensor. Got {tensor.dtype}.")
    if tensor.ndim < 3:
        raise ValueError(f"normalize: expected tensor to be a tensor image of size (..., C, H, W). Got "
                         f"tensor.size() = {list(tensor.shape)}")
    if not inplace:
        tensor = tensor.clone()
    dtype = tensor.dtype
    mean = lucid.as_tensor(mean, dtype=dtype, device=tensor.device)
    std = lucid.as_tensor(std, dtype=dtype, device=tensor.device)
    if (std == 0).any().item():
        raise ValueError(f"normalize: std evaluated to zero after conversion to {dtype}, leading to division by "
                         "zero.")
    channels = tensor.shape[-3]
    for name, t in (("mean", mean), ("std", std)):
        if t.ndim > 1 or t.numel() not in (1, channels):
            raise ValueError(f"normalize: {name} should have one value or one per channel ({channels}), got "
                             f"shape {list(t.shape)}")
    mean, std = mean.reshape(-1, 1, 1), std.reshape(-1, 1, 1)
    return tensor.sub_(mean).div_(std)


# ---- transforms ----------------------------------------------------------------------------------------
class ConvertImageDtype(Module):
    """convert_image_dtype to dtype, rescaling the values."""

    def __init__(self, dtype):
        super().__init__()
        if not isinstance(dtype, lucid.dtype):
            raise TypeError(f"ConvertImageDtype: dtype should be a lucid.dtype, got {dtype!r}")
        self.dtype = dtype

    def forward(self, image):
        return convert_image_dtype(image, self.dtype)

    def __repr__(self):
        return f"{self.__class__.__name__}()"


class Normalize(Module, metaclass=TwinMeta):
    """normalize: (x - mean) / std per channel of a float [..., C, H, W] tensor.

    Two forms: torchvision's Normalize(mean, std, inplace=False) (on a typed sample it
    normalizes the images), and upstream Lucid's Normalize(mean, std, max_pixel_value=255.0,
    p=1.0), i.e. (x - mean * max_pixel_value) / (std * max_pixel_value), chosen by passing
    max_pixel_value or p (keyword, or a number as third argument). Normalize(mean, std)
    alone is torchvision's, which equals upstream's with max_pixel_value=1.
    """

    @staticmethod
    def _upstream_call(args, kwargs):
        return bool({"max_pixel_value", "p"} & set(kwargs)) or (len(args) >= 3 and is_plain_number(args[2])) \
            or len(args) >= 4

    def __init__(self, mean, std, inplace=False):
        super().__init__()
        self.mean = mean
        self.std = std
        self.inplace = inplace

    def forward(self, tensor):
        if not isinstance(tensor, lucid.Tensor) and not _pil.is_pil_image(tensor):
            return images_of(tensor, self.forward)
        return normalize(tensor, self.mean, self.std, self.inplace)

    def __repr__(self):
        return f"{self.__class__.__name__}(mean={self.mean}, std={self.std})"


class Resize(Module, metaclass=TwinMeta):
    """resize to size ((h, w), or an int: the smaller edge).

    Two forms: torchvision's Resize(size, interpolation, max_size, antialias), and upstream
    Lucid's Resize(height, width, interpolation=1, p=1.0), which moves masks / boxes /
    keypoints too. The upstream form is chosen by height= / width= / p=, or by two ints
    whose second is not a Pillow filter code torchvision takes as interpolation (0, 2, 3):
    Resize(224, 224) is upstream's, Resize(224, 2) torchvision's (bilinear).
    """

    @staticmethod
    def _upstream_call(args, kwargs):
        return bool({"height", "width", "p"} & set(kwargs)) or (
            len(args) >= 2 and is_int(args[0]) and is_int(args[1]) and args[1] not in _PIL_FILTER_MODES)

    def __init__(self, size, interpolation=InterpolationMode.BILINEAR, max_size=None, antialias=True):
        super().__init__()
        _check_resize_size(size, max_size, "Resize")
        self.size = size
        self.max_size = max_size
        self.interpolation = _interpolation(interpolation, _RESIZE_MODES, "Resize")
        self.antialias = antialias

    def forward(self, img):
        reject_typed_sample(img, "Resize", "Resize(height, width, ...)")
        return resize(img, self.size, self.interpolation, self.max_size, self.antialias)

    def __repr__(self):
        return (f"{self.__class__.__name__}(size={self.size}, interpolation={self.interpolation.value}, "
                f"max_size={self.max_size}, antialias={self.antialias})")


class CenterCrop(Module, metaclass=TwinMeta):
    """center_crop to size ((h, w) or an int for a square).

    Two forms: torchvision's CenterCrop(size), and upstream Lucid's CenterCrop(height, width,
    p=1.0) (chosen by two arguments or height= / width= / p=), which moves masks / boxes /
    keypoints too, puts the window at ((H - h) // 2, (W - w) // 2) and refuses windows
    larger than the image (torchvision rounds the offsets and pads).
    """

    @staticmethod
    def _upstream_call(args, kwargs):
        return bool({"height", "width", "p"} & set(kwargs)) or len(args) >= 2

    def __init__(self, size):
        super().__init__()
        self.size = _setup_size(size, "CenterCrop")

    def forward(self, img):
        reject_typed_sample(img, "CenterCrop", "CenterCrop(height, width, p)")
        return center_crop(img, self.size)

    def __repr__(self):
        return f"{self.__class__.__name__}(size={self.size})"


class Pad(Module):
    """pad on all sides (see pad)."""

    def __init__(self, padding, fill=0, padding_mode="constant"):
        super().__init__()
        _check_padding(padding, fill, padding_mode, "Pad", tensor=False)
        self.padding = padding
        self.fill = fill
        self.padding_mode = padding_mode

    def forward(self, img):
        return pad(img, self.padding, self.fill, self.padding_mode)

    def __repr__(self):
        return f"{self.__class__.__name__}(padding={self.padding}, fill={self.fill}, padding_mode={self.padding_mode})"


class RandomCrop(Module, metaclass=TwinMeta):
    """A crop of size at a random place, after optional padding; pad_if_needed pads an
    image smaller than size (by the shortfall on each side, as torchvision).

    Two forms: torchvision's RandomCrop(size, padding, pad_if_needed, fill, padding_mode),
    and upstream Lucid's RandomCrop(height, width, p=1.0), which moves masks / boxes /
    keypoints too. RandomCrop(a, b) is torchvision's (size a, padding b); the upstream form
    needs height= / width= / p=, or a number as third argument (RandomCrop(h, w, 1.0)).
    """

    @staticmethod
    def _upstream_call(args, kwargs):
        return bool({"height", "width", "p"} & set(kwargs)) or (len(args) >= 3 and is_plain_number(args[2]))

    def __init__(self, size, padding=None, pad_if_needed=False, fill=0, padding_mode="constant"):
        super().__init__()
        self.size = _setup_size(size, "RandomCrop")
        _check_padding(0 if padding is None else padding, fill, padding_mode, "RandomCrop", tensor=False)
        self.padding = padding
        self.pad_if_needed = pad_if_needed
        self.fill = fill
        self.padding_mode = padding_mode

    @staticmethod
    def get_params(img, output_size):
        """(top, left, height, width) of a uniformly random crop of output_size."""
        _, h, w = get_dimensions(img)
        th, tw = output_size
        if h < th or w < tw:
            raise ValueError(f"Required crop size {(th, tw)} is larger than input image size {(h, w)}")
        if w == tw and h == th:
            return 0, 0, h, w
        i = lucid.randint(0, h - th + 1, size=(1,), device="cpu").item()
        j = lucid.randint(0, w - tw + 1, size=(1,), device="cpu").item()
        return i, j, th, tw

    def forward(self, img):
        reject_typed_sample(img, "RandomCrop", "RandomCrop(height=..., width=..., p=...)")
        if self.padding is not None:
            img = pad(img, self.padding, self.fill, self.padding_mode)
        _, height, width = get_dimensions(img)
        if self.pad_if_needed and width < self.size[1]:
            img = pad(img, [self.size[1] - width, 0], self.fill, self.padding_mode)
        if self.pad_if_needed and height < self.size[0]:
            img = pad(img, [0, self.size[0] - height], self.fill, self.padding_mode)
        i, j, h, w = self.get_params(img, self.size)
        return crop(img, i, j, h, w)

    def __repr__(self):
        return f"{self.__class__.__name__}(size={self.size}, padding={self.padding})"


def _uniform(low, high):
    """A float uniform in [low, high) from lucid's global (CPU) generator, whatever the default
    device: transforms run in DataLoader workers, which must not touch the GPU."""
    return lucid.empty(1, dtype=lucid.float64, device="cpu").uniform_(low, high).item()


def _check_p(p, where):
    if not isinstance(p, (int, float)) or isinstance(p, bool) or not 0.0 <= p <= 1.0:
        raise ValueError(f"{where}: p should be a probability in [0, 1], got {p!r}")
    return p


class RandomHorizontalFlip(Module):
    """hflip with probability p."""

    def __init__(self, p=0.5):
        super().__init__()
        self.p = _check_p(p, "RandomHorizontalFlip")

    def forward(self, img):
        if lucid.rand(1, device="cpu").item() < self.p:
            return hflip(img)
        return img

    def __repr__(self):
        return f"{self.__class__.__name__}(p={self.p})"


class RandomVerticalFlip(Module):
    """vflip with probability p."""

    def __init__(self, p=0.5):
        super().__init__()
        self.p = _check_p(p, "RandomVerticalFlip")

    def forward(self, img):
        if lucid.rand(1, device="cpu").item() < self.p:
            return vflip(img)
        return img

    def __repr__(self):
        return f"{self.__class__.__name__}(p={self.p})"


class RandomRotation(Module):
    """rotate by an angle drawn uniformly from degrees ((min, max), or d for (-d, d))."""

    def __init__(self, degrees, interpolation=InterpolationMode.NEAREST, expand=False, center=None, fill=0):
        super().__init__()
        if isinstance(degrees, numbers.Number) and not isinstance(degrees, bool):
            if degrees < 0:
                raise ValueError(f"RandomRotation: if degrees is a single number, it must be positive, got {degrees}")
            degrees = [-degrees, degrees]
        elif not isinstance(degrees, Sequence) or len(degrees) != 2:
            raise ValueError(f"RandomRotation: degrees should be a number or a sequence of length 2, got {degrees!r}")
        self.degrees = [float(d) for d in degrees]
        if center is not None and (not isinstance(center, Sequence) or len(center) != 2):
            raise ValueError(f"RandomRotation: center should be a sequence of length 2, got {center!r}")
        self.center = center
        # Checked against the image's kind in rotate: PIL images also take bicubic.
        self.interpolation = _interpolation(interpolation, _ALL_MODES, "RandomRotation")
        self.expand = expand
        if fill is None:
            fill = 0
        elif not (isinstance(fill, numbers.Number) or (isinstance(fill, Sequence) and not isinstance(fill, str)
                                                        and all(isinstance(f, numbers.Number) for f in fill))):
            raise TypeError(f"RandomRotation: fill should be either a sequence of numbers or a number, got {fill!r}")
        self.fill = fill

    @staticmethod
    def get_params(degrees):
        """An angle uniform in [degrees[0], degrees[1])."""
        return float(degrees[0] + (degrees[1] - degrees[0]) * lucid.rand(1, dtype=lucid.float64, device="cpu").item())

    def forward(self, img):
        channels = get_dimensions(img)[0]
        fill = self.fill
        if not _pil.is_pil_image(img):  # a PIL image takes fill as given (one value, or one per band)
            fill = [float(fill)] * channels if isinstance(fill, (int, float)) else [float(f) for f in fill]
        angle = self.get_params(self.degrees)
        return rotate(img, angle, self.interpolation, self.expand, self.center, fill)

    def __repr__(self):
        s = f"{self.__class__.__name__}(degrees={self.degrees}, interpolation={self.interpolation.value}"
        s += f", expand={self.expand}"
        if self.center is not None:
            s += f", center={self.center}"
        return s + f", fill={self.fill})"


# The crops that pick their own windows and the colour transforms live in their own files;
# they build on the functions above, so they are imported only now.
from ._tv_crops import (FiveCrop, RandomResizedCrop, TenCrop, five_crop,  # noqa: E402
                                resized_crop, ten_crop)
from ._tv_color import (ColorJitter, Grayscale, RandomGrayscale, adjust_brightness,  # noqa: E402
                                adjust_contrast, adjust_hue, adjust_saturation, rgb_to_grayscale, to_grayscale)

# Upstream Lucid's (Albumentations-style) transforms: typed targets, composition, and the
# geometric / photometric families. The names torchvision also has (Resize, CenterCrop,
# RandomCrop, RandomResizedCrop, Normalize, ColorJitter) stay torchvision's classes above, which
# build these upstream forms when called in upstream's form (see _twins.py).
from ._base import (BboxParams, GeometricTransform, Interpolation, PhotometricTransform,  # noqa: E402
                    Transform)
from ._targets import BoundingBoxes, Image, Keypoints, Mask  # noqa: E402
from ._composition import OneOf, OneOrOther, ReplayCompose, Sequential, SomeOf  # noqa: E402
from . import _geometric, _photometric  # noqa: E402
from ._geometric import (D4, Crop, CropAndPad, Flip, HorizontalFlip, LongestMaxSize, PadIfNeeded,  # noqa: E402
                         RandomGridShuffle, RandomRotate90, RandomScale, RandomSizedCrop, ResizeShortestEdge,
                         SmallestMaxSize, Transpose, VerticalFlip)
from ._warps import (Affine, ElasticTransform, GridDistortion, GridElasticDeform, OpticalDistortion,  # noqa: E402
                     Perspective, Rotate, SafeRotate, ShiftScaleRotate)
from ._bbox_crops import (BBoxSafeRandomCrop, MaskDropout, RandomCropNearBBox,  # noqa: E402
                          RandomSizedBBoxSafeCrop)
from ._photometric import (CLAHE, ChannelDropout, ChannelShuffle, Equalize, FancyPCA, FromFloat,  # noqa: E402
                           HueSaturationValue, InvertImg, Posterize, RandomBrightness, RandomBrightnessContrast,
                           RandomContrast, RandomGamma, RandomToneCurve, RGBShift, Solarize, ToFloat, ToGray,
                           ToSepia)
from ._filters import (Blur, Defocus, Downscale, Emboss, GaussianBlur, MedianBlur, MotionBlur,  # noqa: E402
                       RingingOvershoot, Sharpen, UnsharpMask, ZoomBlur)
from ._noise_dropout import (CoarseDropout, GaussNoise, GridDropout, ISONoise,  # noqa: E402
                             MultiplicativeNoise, PixelDropout, RandomErasing, XYMasking)
from ._autoaugment import AutoAugment, RandAugment, TrivialAugmentWide  # noqa: E402
from ._presets import (AutoTransformsPreset, Detection, ImageClassification,  # noqa: E402
                       ImageClassificationAugment, Pose, Segmentation, TransformsPreset)
from ._functional_warp import (affine_matrix, affine_points, affine_theta, depthwise_conv2d,  # noqa: E402
                               gaussian_blur, perspective_matrix, remap, resize_target, rotation_matrix,
                               sample_field_at_points, warp_affine)
from ._functional_color import (adjust_hsv, adjust_sharpness, autocontrast, clahe, equalize,  # noqa: E402
                                hsv_to_rgb, invert, posterize, rescale, rgb_to_hsv, solarize)

for _tv, _twin in ((Resize, _geometric.Resize), (CenterCrop, _geometric.CenterCrop),
                   (RandomCrop, _geometric.RandomCrop), (RandomResizedCrop, _geometric.RandomResizedCrop),
                   (Normalize, _photometric.Normalize), (ColorJitter, _photometric.ColorJitter)):
    _tv._upstream_twin = _twin
del _tv, _twin

__all__ += ["Transform", "GeometricTransform", "PhotometricTransform", "Interpolation", "BboxParams", "Image", "Mask",
            "BoundingBoxes", "Keypoints", "OneOf", "SomeOf", "OneOrOther", "Sequential", "ReplayCompose",
            "HorizontalFlip", "VerticalFlip", "Flip", "Transpose", "RandomRotate90", "D4", "Crop", "CropAndPad",
            "PadIfNeeded", "RandomSizedCrop", "LongestMaxSize", "SmallestMaxSize", "ResizeShortestEdge",
            "RandomScale", "RandomGridShuffle", "Rotate", "SafeRotate", "ShiftScaleRotate", "Affine", "Perspective",
            "ElasticTransform", "GridDistortion", "OpticalDistortion", "GridElasticDeform", "BBoxSafeRandomCrop",
            "RandomSizedBBoxSafeCrop", "RandomCropNearBBox", "MaskDropout", "RandomBrightnessContrast",
            "RandomBrightness", "RandomContrast", "RandomGamma", "HueSaturationValue", "RGBShift", "ChannelShuffle",
            "ChannelDropout", "Equalize", "CLAHE", "Solarize", "Posterize", "InvertImg", "ToGray", "ToSepia",
            "ToFloat", "FromFloat", "FancyPCA", "RandomToneCurve", "Blur", "MedianBlur", "MotionBlur", "GaussianBlur",
            "Defocus", "ZoomBlur", "Downscale", "Sharpen", "Emboss", "UnsharpMask", "RingingOvershoot", "GaussNoise",
            "MultiplicativeNoise", "ISONoise", "CoarseDropout", "GridDropout", "PixelDropout", "XYMasking",
            "RandomErasing", "AutoAugment", "RandAugment", "TrivialAugmentWide", "TransformsPreset",
            "AutoTransformsPreset", "ImageClassification", "ImageClassificationAugment", "Detection", "Segmentation",
            "Pose"]

# torchvision.transforms.functional's counterpart: the functional forms as a module, so that
# both `from lucid.utils.transforms import functional as F` and
# `import lucid.utils.transforms.functional` work.
functional = types.ModuleType(__name__ + ".functional", "The functional forms of lucid.utils.transforms.")
for _f in (hflip, vflip, pad, crop, center_crop, resize, rotate, normalize, to_tensor, convert_image_dtype,
           get_dimensions, get_image_size, get_image_num_channels, pil_to_tensor, to_pil_image, resized_crop,
           five_crop, ten_crop, rgb_to_grayscale, to_grayscale, adjust_brightness, adjust_contrast,
           adjust_saturation, adjust_hue,
           # upstream Lucid's functional names
           adjust_hsv, adjust_sharpness, autocontrast, clahe, equalize, hsv_to_rgb, invert, posterize, rescale,
           rgb_to_hsv, solarize, affine_matrix, affine_points, affine_theta, depthwise_conv2d, gaussian_blur,
           perspective_matrix, remap, resize_target, rotation_matrix, sample_field_at_points, warp_affine):
    setattr(functional, _f.__name__, _f)
functional.InterpolationMode = InterpolationMode
functional.Interpolation = Interpolation
sys.modules[functional.__name__] = functional
del _f
