"""Upstream Lucid's transforms whose parameters depend on a sample's boxes or mask:
BBoxSafeRandomCrop, RandomSizedBBoxSafeCrop, RandomCropNearBBox (crops chosen so the boxes
stay inside) and MaskDropout (objects of the mask erased from image and mask).

The crops look at every BoundingBoxes in the sample (their union); without boxes,
BBoxSafeRandomCrop and RandomCropNearBBox keep the whole image and RandomSizedBBoxSafeCrop
only resizes, as upstream.
"""

import math

import lucid
from . import _targets as tg
from ._base import (Image, Mask, Transform, as_interpolation, check_positive_int, find_all, is_number, map_sample,
                    randint, sample_without_replacement, spatial_size, uniform)
from ._geometric import _Window


def _union(sample, canvas):
    """(x1, y1, x2, y2) around all non-empty boxes of the sample, clipped to canvas (h, w);
    None without boxes."""
    h, w = canvas
    found = [tg.to_xyxy(b) for b in find_all(sample, tg.BoundingBoxes) if len(b)]
    if not found:
        return None
    for b in find_all(sample, tg.BoundingBoxes):
        if tuple(b.canvas_size) != (h, w):
            raise ValueError(f"bounding boxes on a {b.canvas_size} canvas do not match the {h}x{w} image")
    xyxy = lucid.cat(found, 0)
    x1, y1 = float(xyxy[:, 0].min().item()), float(xyxy[:, 1].min().item())
    x2, y2 = float(xyxy[:, 2].max().item()), float(xyxy[:, 3].max().item())
    return max(x1, 0.0), max(y1, 0.0), min(x2, float(w)), min(y2, float(h))


def _check_erosion(rate, where):
    if not is_number(rate) or not 0.0 <= rate <= 1.0:
        raise ValueError(f"{where}: erosion_rate should be in [0, 1], got {rate!r}")
    return float(rate)


class BBoxSafeRandomCrop(_Window):
    """A random crop that keeps every box whole: each side of the window is drawn between
    the image edge and the union of the boxes (the union shrunk by erosion_rate of its size
    first, which lets up to that much of the boxes be cut)."""

    def __init__(self, erosion_rate=0.0, p=1.0):
        super().__init__(p=p)
        self.erosion_rate = _check_erosion(erosion_rate, type(self).__name__)

    def _safe_window(self, inputs):
        h, w = spatial_size(self._reference(inputs))
        union = _union(inputs, (h, w))
        if union is None:
            return 0, 0, h, w
        x1, y1, x2, y2 = union
        ex, ey = (x2 - x1) * self.erosion_rate / 2, (y2 - y1) * self.erosion_rate / 2
        x1, y1, x2, y2 = x1 + ex, y1 + ey, x2 - ex, y2 - ey
        left, top = randint(0, math.floor(x1) + 1), randint(0, math.floor(y1) + 1)
        right = randint(min(max(math.ceil(x2), left + 1), w), w + 1)
        bottom = randint(min(max(math.ceil(y2), top + 1), h), h + 1)
        return top, left, bottom - top, right - left

    def _draw(self, inputs):
        return (*self._safe_window(inputs), None)

    def _args_repr(self):
        return f"erosion_rate={self.erosion_rate}, p={self.p}"


class RandomSizedBBoxSafeCrop(BBoxSafeRandomCrop):
    """BBoxSafeRandomCrop, then a resize to height x width."""

    def __init__(self, height, width, erosion_rate=0.0, interpolation=1, p=1.0):
        super().__init__(erosion_rate, p)
        self.height = check_positive_int(height, "RandomSizedBBoxSafeCrop", "height")
        self.width = check_positive_int(width, "RandomSizedBBoxSafeCrop", "width")
        self.interpolation = as_interpolation(interpolation, "RandomSizedBBoxSafeCrop")

    def _draw(self, inputs):
        return (*self._safe_window(inputs), (self.height, self.width))

    def _args_repr(self):
        return (f"height={self.height}, width={self.width}, erosion_rate={self.erosion_rate}, "
                f"interpolation={self.interpolation.value!r}, p={self.p}")


class RandomCropNearBBox(_Window):
    """A crop around the union of the boxes, each side pushed outwards by up to
    max_part_shift of the union's size (uniformly), within the image."""

    def __init__(self, max_part_shift=0.3, p=1.0):
        super().__init__(p=p)
        if not is_number(max_part_shift) or max_part_shift < 0:
            raise ValueError(f"RandomCropNearBBox: max_part_shift should be a non-negative number, got "
                             f"{max_part_shift!r}")
        self.max_part_shift = float(max_part_shift)

    def _draw(self, inputs):
        h, w = spatial_size(self._reference(inputs))
        union = _union(inputs, (h, w))
        if union is None:
            return 0, 0, h, w, None
        x1, y1, x2, y2 = union
        jx, jy = (x2 - x1) * self.max_part_shift, (y2 - y1) * self.max_part_shift
        left = max(math.floor(x1 - uniform(0, jx)), 0)
        top = max(math.floor(y1 - uniform(0, jy)), 0)
        right = min(max(math.ceil(x2 + uniform(0, jx)), left + 1), w)
        bottom = min(max(math.ceil(y2 + uniform(0, jy)), top + 1), h)
        return top, left, bottom - top, right - left, None

    def _args_repr(self):
        return f"max_part_shift={self.max_part_shift}, p={self.p}"


class MaskDropout(Transform):
    """Erases up to max_objects objects (distinct non-zero mask values; how many is uniform
    in 1..max_objects) from the sample: their pixels become image_fill_value in the images
    and mask_fill_value in the masks. The sample needs a Mask (the first one decides)."""
    _needs_reference = False

    def __init__(self, max_objects=1, image_fill_value=0.0, mask_fill_value=0.0, p=0.5):
        super().__init__(p=p)
        self.max_objects = check_positive_int(max_objects, "MaskDropout", "max_objects")
        for name, v in (("image_fill_value", image_fill_value), ("mask_fill_value", mask_fill_value)):
            if not is_number(v):
                raise TypeError(f"MaskDropout: {name} should be a number, got {v!r}")
        self.image_fill_value, self.mask_fill_value = image_fill_value, mask_fill_value

    def _draw(self, inputs):
        masks = find_all(inputs, Mask)
        if not masks:
            raise ValueError("MaskDropout: the sample has no Mask to take objects from; pass e.g. "
                             "{'image': Image(x), 'mask': Mask(m)}")
        data = masks[0].data
        labels = [v for v in lucid.unique(data).tolist() if v != 0]
        if not labels:
            return data, []
        count = randint(1, self.max_objects + 1)
        return data, sample_without_replacement(labels, min(count, len(labels)))

    def _apply_with(self, inputs, params):
        data, dropped = params
        if not dropped:
            return inputs
        hit = lucid.zeros(data.shape, dtype=lucid.bool, device=data.device)
        for v in dropped:
            hit = hit | (data == v)
        hit = hit if data.ndim == 2 else hit.any(-3)  # [H, W], or [B, H, W] for a batch of masks

        def erase(x, fill):
            if tuple(x.shape[-2:]) != tuple(hit.shape[-2:]):
                raise ValueError(f"MaskDropout: the mask is {list(hit.shape[-2:])} but a target is "
                                 f"{list(x.shape[-2:])}")
            where = hit if x.ndim == 2 else hit.unsqueeze(-3)
            return lucid.where(where.to(x.device), lucid.full_like(x, fill), x)

        def apply(leaf):
            if isinstance(leaf, Image):
                return Image(erase(leaf.data, self.image_fill_value))
            if isinstance(leaf, Mask):
                return Mask(erase(leaf.data, self.mask_fill_value))
            if isinstance(leaf, lucid.Tensor) and leaf.ndim in (3, 4):
                return erase(leaf, self.image_fill_value)
            return leaf
        return map_sample(inputs, apply)

    def _apply_image(self, img, params):
        return self._apply_with(img, params)

    def _args_repr(self):
        return (f"max_objects={self.max_objects}, image_fill_value={self.image_fill_value}, "
                f"mask_fill_value={self.mask_fill_value}, p={self.p}")
