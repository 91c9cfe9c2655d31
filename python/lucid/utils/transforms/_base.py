"""Upstream Lucid's transform core (Albumentations-style): Transform with its probability p,
GeometricTransform / PhotometricTransform, Interpolation, BboxParams, and the helpers every
upstream-style transform shares (random draws, argument checks, sample traversal).

A transform is called on one object: an image tensor [C, H, W] / [B, C, H, W], a typed target
(Image, Mask, BoundingBoxes, Keypoints) or dicts / lists / tuples nesting them. With
probability p it draws its parameters once (make_params, from the sample's image) and hands
every target to its hook (_apply_image / _apply_mask / _apply_boxes / _apply_keypoints);
otherwise the sample comes back unchanged. Random draws come from lucid's global generator
(so lucid.manual_seed repeats them): numbers on the CPU (DataLoader workers never touch the
GPU for them), per-pixel fields (noise, displacements) on the image's device.
"""

import abc
import enum
import numbers

import lucid
from ._targets import BoundingBoxes, Image, Keypoints, Mask, normalize_box_format


# ---- random draws ------------------------------------------------------------------------------
def rand():
    """A float uniform in [0, 1)."""
    return float(lucid.rand(1, dtype=lucid.float64, device="cpu").item())


def uniform(low, high):
    return low + (high - low) * rand()


def randint(low, high):
    """An int uniform in [low, high) (low when the range is empty)."""
    low, high = int(low), int(high)
    return low if high <= low else int(lucid.randint(low, high, (1,), device="cpu").item())


def permutation(n):
    return lucid.randperm(n, device="cpu").tolist()


def sample_without_replacement(pool, k):
    """k items of pool, in pool's order."""
    picks = sorted(permutation(len(pool))[:k])
    return [pool[i] for i in picks]


# ---- argument checks ----------------------------------------------------------------------------
MISSING = object()


def factor_argument(value, alias, name, where, alias_name="factor"):
    """An argument given under one of its two names (torchvision's and upstream's)."""
    if value is not MISSING and alias is not MISSING:
        raise TypeError(f"{where}: give {name} or {alias_name}=, not both")
    value = alias if value is MISSING else value
    if value is MISSING:
        raise TypeError(f"{where}: missing the {name} argument (also accepted as {alias_name}=)")
    return value


def is_number(v):
    return isinstance(v, numbers.Real) and not isinstance(v, bool)


def check_probability(p, where, name="p"):
    if not is_number(p) or not 0.0 <= p <= 1.0:
        raise ValueError(f"{where}: {name} should be a probability in [0, 1], got {p!r}")
    return float(p)


def to_range(value, where, name, *, symmetric=True, offset=0.0, low=None):
    """value as a (min, max) range: a number v gives (offset - v, offset + v) when symmetric,
    else (offset, v); a pair is taken as is. low: the smallest allowed bound."""
    if is_number(value):
        lo, hi = (offset - value, offset + value) if symmetric else (offset, value)
    elif isinstance(value, (tuple, list)) and len(value) == 2 and all(is_number(v) for v in value):
        lo, hi = value
    else:
        raise TypeError(f"{where}: {name} should be a number or a (min, max) pair, got {value!r}")
    if lo > hi:
        raise ValueError(f"{where}: {name} should be (min, max) with min <= max, got {value!r}")
    if low is not None and lo < low:
        raise ValueError(f"{where}: {name} should not go below {low}, got {value!r}")
    return (float(lo), float(hi))


def to_int_range(value, where, name, *, minimum=1):
    """value (an int n, giving (minimum, n), or a (min, max) pair of ints) as an int range."""
    if isinstance(value, int) and not isinstance(value, bool):
        value = (minimum, value)
    if (not isinstance(value, (tuple, list)) or len(value) != 2
            or not all(isinstance(v, int) and not isinstance(v, bool) for v in value)):
        raise TypeError(f"{where}: {name} should be an int or a (min, max) pair of ints, got {value!r}")
    if not minimum <= value[0] <= value[1]:
        raise ValueError(f"{where}: {name} should satisfy {minimum} <= min <= max, got {tuple(value)}")
    return (value[0], value[1])


def check_positive_int(v, where, name):
    if not isinstance(v, int) or isinstance(v, bool) or v <= 0:
        raise ValueError(f"{where}: {name} should be a positive int, got {v!r}")
    return v


def check_image(img, where):
    """img as an image tensor [C, H, W] or [B, C, H, W]."""
    if not isinstance(img, lucid.Tensor):
        raise TypeError(f"{where}: expected an image tensor [C, H, W] or [B, C, H, W], got {type(img).__name__}")
    if img.ndim not in (3, 4):
        raise ValueError(f"{where}: expected an image tensor [C, H, W] or [B, C, H, W], got shape "
                         f"{list(img.shape)}")
    return img


def check_float_image(img, where):
    check_image(img, where)
    if not img.is_floating_point():
        raise TypeError(f"{where}: expected a float image (values in [0, 1]), got dtype {img.dtype}; "
                        "convert it first, e.g. with ToFloat(max_value=255)")
    return img


def check_channels(img, allowed, where):
    if img.shape[-3] not in allowed:
        raise ValueError(f"{where}: expected an image with {' or '.join(map(str, allowed))} channels, got "
                         f"{img.shape[-3]} (shape {list(img.shape)})")


def spatial_size(x):
    return int(x.shape[-2]), int(x.shape[-1])


# ---- interpolation ------------------------------------------------------------------------------
class Interpolation(str, enum.Enum):
    """Resampling modes of the upstream-style transforms; members equal their string values
    ("bilinear", ...), which lucid.nn.functional.interpolate takes."""
    NEAREST = "nearest"
    LINEAR = "linear"
    BILINEAR = "bilinear"
    BICUBIC = "bicubic"
    TRILINEAR = "trilinear"
    AREA = "area"

    def __str__(self):
        return self.value


# OpenCV's codes, which Albumentations-style code passes (cv2.INTER_LINEAR is 1).
_OPENCV_CODES = {0: Interpolation.NEAREST, 1: Interpolation.BILINEAR, 2: Interpolation.BICUBIC,
                 3: Interpolation.AREA}


def as_interpolation(mode, where):
    """mode (an Interpolation, its string, an OpenCV code 0-3, or torchvision's
    InterpolationMode) as an Interpolation usable on 2-D images."""
    if isinstance(mode, int) and not isinstance(mode, bool):
        if mode not in _OPENCV_CODES:
            raise ValueError(f"{where}: interpolation code {mode} is not supported, expected an OpenCV code "
                             f"{sorted(_OPENCV_CODES)} (nearest, linear, cubic, area)")
        return _OPENCV_CODES[mode]
    if isinstance(mode, enum.Enum) and not isinstance(mode, Interpolation):
        mode = mode.value  # torchvision's InterpolationMode
    try:
        mode = Interpolation(mode)
    except ValueError:
        raise ValueError(f"{where}: unknown interpolation {mode!r}, expected one of "
                         f"{[m.value for m in Interpolation]}") from None
    # 2-D images have no linear / trilinear resampling: those names mean bilinear here.
    return Interpolation.BILINEAR if mode in (Interpolation.LINEAR, Interpolation.TRILINEAR) else mode


# ---- samples ------------------------------------------------------------------------------------
def is_typed_sample(obj):
    """Whether obj is or holds one of the upstream targets (Image, Mask, BoundingBoxes, Keypoints)."""
    if isinstance(obj, (Image, Mask, BoundingBoxes, Keypoints)):
        return True
    if isinstance(obj, dict):
        return any(is_typed_sample(v) for v in obj.values())
    if isinstance(obj, (list, tuple)):
        return any(is_typed_sample(v) for v in obj)
    return False


def _first(obj, kinds):
    if isinstance(obj, kinds) and (kinds is not lucid.Tensor or obj.ndim in (3, 4)):
        return obj
    values = obj.values() if isinstance(obj, dict) else obj if isinstance(obj, (list, tuple)) else ()
    for v in values:
        found = _first(v, kinds)
        if found is not None:
            return found
    return None


def find_reference(obj):
    """The tensor that sizes random parameters: the first Image, else bare image tensor
    ([C, H, W] / [B, C, H, W]; a lone tensor of any shape), else Mask in the sample."""
    if isinstance(obj, lucid.Tensor):
        return obj
    for kinds in (Image, lucid.Tensor, Mask):
        found = _first(obj, kinds)
        if found is not None:
            return found if isinstance(found, lucid.Tensor) else found.data
    return None


def find_all(obj, kind):
    if isinstance(obj, kind):
        return [obj]
    values = obj.values() if isinstance(obj, dict) else obj if isinstance(obj, (list, tuple)) else ()
    return [x for v in values for x in find_all(v, kind)]


def map_sample(obj, fn):
    """obj rebuilt with fn applied to every leaf (dicts, lists and tuples are walked)."""
    if isinstance(obj, dict):
        return {k: map_sample(v, fn) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return type(obj)(map_sample(v, fn) for v in obj)
    return fn(obj)


# ---- transforms ---------------------------------------------------------------------------------
class Transform(abc.ABC):
    """Base of the upstream-style transforms: applied with probability p (default 1), else
    the identity. Subclasses draw per-call parameters in make_params(image) and implement
    _apply_image; masks, boxes and keypoints pass through unless a hook is overridden."""

    def __init__(self, p=1.0):
        self.p = check_probability(p, type(self).__name__)

    def make_params(self, img):
        """The per-call parameters, drawn once for all targets (None: deterministic)."""
        return None

    @abc.abstractmethod
    def _apply_image(self, img, params):
        raise NotImplementedError

    def _apply_mask(self, mask, params):
        return mask

    def _apply_boxes(self, boxes, params):
        return boxes

    def _apply_keypoints(self, kps, params):
        return kps

    def _dispatch(self, obj, params, nested=False):
        """obj with every target sent to its hook. Inside a dict / list, a bare tensor counts
        as an image only when it is [C, H, W] or [B, C, H, W] (other tensors, e.g. labels,
        pass through); given alone, it is always taken as the image."""
        if isinstance(obj, Image):
            return Image(self._apply_image(obj.data, params))
        if isinstance(obj, lucid.Tensor):
            return self._apply_image(obj, params) if not nested or obj.ndim in (3, 4) else obj
        if isinstance(obj, Mask):
            return Mask(self._apply_mask(obj.data, params))
        if isinstance(obj, BoundingBoxes):
            return self._apply_boxes(obj, params)
        if isinstance(obj, Keypoints):
            return self._apply_keypoints(obj, params)
        if isinstance(obj, dict):
            return {k: self._dispatch(v, params, True) for k, v in obj.items()}
        if isinstance(obj, (list, tuple)):
            return type(obj)(self._dispatch(v, params, True) for v in obj)
        return obj

    def _reference(self, inputs):
        ref = find_reference(inputs)
        if ref is None:
            raise TypeError(f"{type(self).__name__}: expected an image tensor, an Image / Mask, or a dict / list "
                            f"holding one, got {type(inputs).__name__}")
        if ref.ndim < 2:
            raise ValueError(f"{type(self).__name__}: the image should be [C, H, W] or [B, C, H, W], got shape "
                             f"{list(ref.shape)}")
        return ref

    def _gate(self):
        """Whether this call applies the transform (no draw when p is 0 or 1)."""
        return self.p >= 1.0 or (self.p > 0.0 and rand() < self.p)

    # Applying is split in two so that any application can be recorded and replayed
    # (ReplayCompose): _draw picks the parameters from the sample, _apply_with applies them.
    # Transforms that need the whole sample (boxes, masks) or hold children override these.
    _needs_reference = True

    def _draw(self, inputs):
        return self.make_params(self._reference(inputs))

    def _apply_with(self, inputs, params):
        return self._dispatch(inputs, params)

    def _record_apply(self, inputs):
        """Applies unconditionally; returns (output, record for _replay)."""
        params = self._draw(inputs)
        return self._apply_with(inputs, params), params

    def _replay(self, inputs, record):
        return self._apply_with(inputs, record)

    def __call__(self, inputs):
        if self._needs_reference:
            self._reference(inputs)
        if not self._gate():
            return inputs
        return self._record_apply(inputs)[0]

    def _args_repr(self):
        return f"p={self.p}"

    def __repr__(self):
        return f"{type(self).__name__}({self._args_repr()})"


class GeometricTransform(Transform):
    """A spatial transform: it must move masks, boxes and keypoints with the image."""

    @abc.abstractmethod
    def _apply_mask(self, mask, params):
        raise NotImplementedError

    @abc.abstractmethod
    def _apply_boxes(self, boxes, params):
        raise NotImplementedError

    @abc.abstractmethod
    def _apply_keypoints(self, kps, params):
        raise NotImplementedError


class PhotometricTransform(Transform):
    """A colour / intensity transform: only images change; masks, boxes and keypoints pass
    through. Images must be float (values in [0, 1])."""

    def _dispatch(self, obj, params, nested=False):
        if isinstance(obj, Image) or (isinstance(obj, lucid.Tensor) and (not nested or obj.ndim in (3, 4))):
            check_float_image(obj.data if isinstance(obj, Image) else obj, type(self).__name__)
        return super()._dispatch(obj, params, nested)


# ---- bounding-box policy ------------------------------------------------------------------------
class BboxParams:
    """How Compose treats bounding boxes (Albumentations' BboxParams).

    After the pipeline, every BoundingBoxes in the sample loses the boxes whose area is zero,
    below min_area (pixels on the final canvas), or whose visible share (the part not cut
    off by crops / warps, see BoundingBoxes.visibility) is below min_visibility; their labels
    go with them. format: the format of Albumentations-style raw boxes, i.e. a tensor / list
    [N, 4] under the key "bboxes" of a dict sample, which Compose wraps on the sample's image
    canvas and unwraps afterwards (typed BoundingBoxes carry their own format). label_fields:
    keys of a dict sample holding one entry per box (list, tuple or tensor), filtered along.
    """

    def __init__(self, format="pascal_voc", min_area=0.0, min_visibility=0.0, label_fields=()):
        self.format = normalize_box_format(format, "BboxParams")
        if not is_number(min_area) or min_area < 0:
            raise ValueError(f"BboxParams: min_area should be a non-negative number, got {min_area!r}")
        self.min_area = float(min_area)
        self.min_visibility = check_probability(min_visibility, "BboxParams", "min_visibility")
        if isinstance(label_fields, str) or not all(isinstance(k, str) for k in label_fields):
            raise TypeError(f"BboxParams: label_fields should be a list of key names, got {label_fields!r}")
        self.label_fields = tuple(label_fields)

    def __repr__(self):
        return (f"BboxParams(format={self.format!r}, min_area={self.min_area}, "
                f"min_visibility={self.min_visibility}, label_fields={self.label_fields})")


def keep_mask(boxes, params):
    """Which boxes survive params' filters (bool [N])."""
    from ._targets import box_areas, to_xyxy
    area = box_areas(to_xyxy(boxes))
    keep = (area > 0) & (area >= params.min_area)
    if params.min_visibility > 0:
        keep = keep & (boxes.visibility >= params.min_visibility)
    return keep


def _filter_field(values, index, key):
    if isinstance(values, lucid.Tensor):
        return values.index_select(0, index.to(values.device))
    if isinstance(values, (list, tuple)):
        return type(values)(values[i] for i in index.tolist())
    raise TypeError(f"BboxParams: label field {key!r} should be a list, tuple or tensor, got "
                    f"{type(values).__name__}")


def wrap_raw_boxes(sample, params):
    """A dict sample's raw "bboxes" entry as BoundingBoxes (and a function undoing it)."""
    if not isinstance(sample, dict) or "bboxes" not in sample or isinstance(sample["bboxes"], BoundingBoxes):
        return sample, lambda out: out
    raw = sample["bboxes"]
    ref = find_reference({k: v for k, v in sample.items() if k != "bboxes"})
    if ref is None:
        raise ValueError("Compose: a sample with raw 'bboxes' needs an image to give their canvas size")
    boxes = BoundingBoxes(raw, params.format, (int(ref.shape[-2]), int(ref.shape[-1])))
    as_list = not isinstance(raw, lucid.Tensor)

    def unwrap(out):
        out = dict(out)
        data = out["bboxes"].data
        out["bboxes"] = data.tolist() if as_list else data
        return out
    return dict(sample, bboxes=boxes), unwrap


def filter_sample_boxes(sample, params):
    """sample with params' filters applied to its BoundingBoxes and label fields."""
    all_boxes = find_all(sample, BoundingBoxes)
    if params.label_fields:
        if not isinstance(sample, dict) or len(all_boxes) != 1:
            raise ValueError(f"Compose: label_fields {params.label_fields} need a dict sample with exactly one "
                             f"set of boxes, got {len(all_boxes)}")
        missing = [k for k in params.label_fields if k not in sample]
        if missing:
            raise KeyError(f"Compose: label field(s) {missing} not found in the sample (keys: {list(sample)})")
    from ._targets import rebuild_boxes, to_xyxy
    kept = {}

    def apply(leaf):
        if isinstance(leaf, BoundingBoxes):
            keep = keep_mask(leaf, params)
            kept["index"] = keep.nonzero().reshape(-1)
            return rebuild_boxes(leaf, to_xyxy(leaf), leaf.canvas_size, keep=keep)
        return leaf
    out = map_sample(sample, apply)
    if params.label_fields:
        out = dict(out)
        for key in params.label_fields:
            out[key] = _filter_field(out[key], kept["index"], key)
    return out

