"""Upstream Lucid's typed targets: Image, Mask, BoundingBoxes, Keypoints, and the geometry
that moves boxes and keypoints along with the pixels.

A sample is a tensor, one of these wrappers, or dicts / lists / tuples nesting them; a
transform routes each wrapper to the hook for its kind, with one parameter draw per call, so
an image, its mask, its boxes and its keypoints move together.

Coordinates are continuous: pixel column i spans [i, i + 1), so a box covering columns
2..4 is x1 = 2, x2 = 5, and a horizontal flip of a W-wide canvas maps x to W - x. (Matrices
for warps are in OpenCV's pixel-index convention, where pixel i sits at i; `map_boxes` /
`map_keypoints` take the half-pixel shift between the two into account.)

Boxes carry a `visibility`: for each box, the fraction of its area that survived the clipping
done so far (1 for fresh boxes). Compose's BboxParams(min_visibility=...) filters on it, so
the measure does not change when the image is only rescaled.
"""

import lucid

# Absolute formats are in pixels; albumentations (xyxy) and yolo (cxcywh) are fractions of
# the canvas. pascal_voc and coco are Albumentations' names for xyxy and xywh.
BOX_FORMATS = ("xyxy", "xywh", "cxcywh", "albumentations", "yolo")
_FORMAT_ALIASES = {"pascal_voc": "xyxy", "coco": "xywh"}


def normalize_box_format(fmt, where="BoundingBoxes"):
    """fmt as one of BOX_FORMATS (resolving pascal_voc / coco), else ValueError."""
    if not isinstance(fmt, str):
        raise TypeError(f"{where}: format should be a string, got {type(fmt).__name__}")
    name = _FORMAT_ALIASES.get(fmt.lower(), fmt.lower())
    if name not in BOX_FORMATS:
        raise ValueError(f"{where}: unknown bounding box format {fmt!r}, expected one of "
                         f"{list(BOX_FORMATS) + list(_FORMAT_ALIASES)}")
    return name


def _as_tensor(data, what, where):
    if isinstance(data, lucid.Tensor):
        return data
    if isinstance(data, (list, tuple)):
        return lucid.tensor(data, dtype=lucid.float32) if len(data) else lucid.zeros(0, 4)
    raise TypeError(f"{where}: {what} should be a lucid Tensor, got {type(data).__name__}")


def _check_canvas(canvas_size, where):
    if (not isinstance(canvas_size, (tuple, list)) or len(canvas_size) != 2
            or not all(isinstance(s, int) and not isinstance(s, bool) and s > 0 for s in canvas_size)):
        raise ValueError(f"{where}: canvas_size should be (height, width), two positive ints, got {canvas_size!r}")
    return (int(canvas_size[0]), int(canvas_size[1]))


class Image:
    """An image tensor [C, H, W] or [B, C, H, W] in a sample (a bare tensor is an image too)."""

    __slots__ = ("data",)

    def __init__(self, data):
        if not isinstance(data, lucid.Tensor):
            raise TypeError(f"Image: data should be a lucid Tensor [C, H, W] or [B, C, H, W], "
                            f"got {type(data).__name__}")
        if data.ndim not in (3, 4):
            raise ValueError(f"Image: data should be [C, H, W] or [B, C, H, W], got shape {list(data.shape)}")
        self.data = data

    def __repr__(self):
        return f"Image(shape={list(self.data.shape)}, dtype={self.data.dtype})"


class Mask:
    """A label / probability map [H, W], [C, H, W] or [B, C, H, W]: geometric transforms move
    it with nearest sampling, photometric ones leave it alone."""

    __slots__ = ("data",)

    def __init__(self, data):
        if not isinstance(data, lucid.Tensor):
            raise TypeError(f"Mask: data should be a lucid Tensor [H, W], [C, H, W] or [B, C, H, W], "
                            f"got {type(data).__name__}")
        if data.ndim not in (2, 3, 4):
            raise ValueError(f"Mask: data should be [H, W], [C, H, W] or [B, C, H, W], got shape "
                             f"{list(data.shape)}")
        self.data = data

    def __repr__(self):
        return f"Mask(shape={list(self.data.shape)}, dtype={self.data.dtype})"


class Keypoints:
    """Points [N, D] (D >= 2; columns 0 and 1 are x and y, the rest ride along unchanged) on a
    canvas (height, width)."""

    __slots__ = ("data", "canvas_size")

    def __init__(self, data, canvas_size):
        data = _as_tensor(data, "data", "Keypoints")
        if data.ndim != 2 or data.shape[1] < 2:
            raise ValueError(f"Keypoints: data should be [N, D] with D >= 2 (x, y, ...), got shape "
                             f"{list(data.shape)}")
        self.data = data if data.is_floating_point() else data.to(lucid.float32)
        self.canvas_size = _check_canvas(canvas_size, "Keypoints")

    def __repr__(self):
        return f"Keypoints(n={self.data.shape[0]}, canvas_size={self.canvas_size})"


class BoundingBoxes:
    """Boxes [N, 4] in a format (xyxy, xywh, cxcywh in pixels; albumentations = xyxy and
    yolo = cxcywh in fractions of the canvas; pascal_voc / coco as aliases), on a canvas
    (height, width), with optional per-box labels [N] that are kept in step when boxes are
    filtered. visibility [N]: the share of each box's area that crops and warps have left
    inside the canvas so far (1 for new boxes), which BboxParams(min_visibility) tests."""

    __slots__ = ("data", "format", "canvas_size", "labels", "visibility")

    def __init__(self, data, format="xyxy", canvas_size=None, labels=None):
        data = _as_tensor(data, "data", "BoundingBoxes")
        if data.ndim != 2 or data.shape[1] != 4:
            raise ValueError(f"BoundingBoxes: data should be [N, 4], got shape {list(data.shape)}")
        self.data = data if data.is_floating_point() else data.to(lucid.float32)
        self.format = normalize_box_format(format)
        if canvas_size is None:
            raise ValueError("BoundingBoxes: canvas_size (height, width) of the image the boxes index into is "
                             "required")
        self.canvas_size = _check_canvas(canvas_size, "BoundingBoxes")
        if labels is not None:
            if isinstance(labels, (list, tuple)):
                labels = lucid.tensor(list(labels))
            elif not isinstance(labels, lucid.Tensor):
                raise TypeError(f"BoundingBoxes: labels should be a lucid Tensor or a list, got "
                                f"{type(labels).__name__}")
            if labels.ndim < 1 or labels.shape[0] != data.shape[0]:
                raise ValueError(f"BoundingBoxes: labels should have one entry per box ({data.shape[0]}), got "
                                 f"shape {list(labels.shape)}")
        self.labels = labels
        self.visibility = lucid.ones(data.shape[0], dtype=self.data.dtype, device=data.device)

    def __len__(self):
        return self.data.shape[0]

    def __repr__(self):
        return f"BoundingBoxes(n={len(self)}, format={self.format!r}, canvas_size={self.canvas_size})"


# ---- box coordinates -------------------------------------------------------------------------
def to_xyxy(boxes):
    """The boxes as absolute pixel xyxy [N, 4]."""
    d, fmt = boxes.data, boxes.format
    h, w = boxes.canvas_size
    a, b, c, e = d.unbind(1)
    if fmt == "xyxy":
        return d
    if fmt == "xywh":
        return lucid.stack([a, b, a + c, b + e], 1)
    if fmt == "albumentations":
        return lucid.stack([a * w, b * h, c * w, e * h], 1)
    if fmt == "yolo":
        a, b, c, e = a * w, b * h, c * w, e * h
    return lucid.stack([a - c / 2, b - e / 2, a + c / 2, b + e / 2], 1)  # cxcywh


def from_xyxy(xyxy, fmt, canvas_size):
    """Absolute xyxy [N, 4] back into fmt on canvas_size."""
    h, w = canvas_size
    x1, y1, x2, y2 = xyxy.unbind(1)
    if fmt == "xyxy":
        return xyxy
    if fmt == "xywh":
        return lucid.stack([x1, y1, x2 - x1, y2 - y1], 1)
    if fmt == "albumentations":
        return lucid.stack([x1 / w, y1 / h, x2 / w, y2 / h], 1)
    cx, cy, bw, bh = (x1 + x2) / 2, (y1 + y2) / 2, x2 - x1, y2 - y1
    if fmt == "yolo":
        return lucid.stack([cx / w, cy / h, bw / w, bh / h], 1)
    return lucid.stack([cx, cy, bw, bh], 1)


def rebuild_boxes(boxes, xyxy, canvas_size, visibility=None, keep=None):
    """New BoundingBoxes from absolute xyxy on canvas_size, keeping format and labels;
    keep (a bool tensor [N]) drops rows."""
    labels, vis = boxes.labels, boxes.visibility if visibility is None else visibility
    if keep is not None:
        index = keep.nonzero().reshape(-1)
        xyxy, vis = xyxy.index_select(0, index), vis.index_select(0, index)
        labels = None if labels is None else labels.index_select(0, index.to(labels.device))
    out = BoundingBoxes(from_xyxy(xyxy, boxes.format, canvas_size), boxes.format, canvas_size, labels)
    out.visibility = vis
    return out


def box_areas(xyxy):
    return (xyxy[:, 2] - xyxy[:, 0]).clamp(min=0) * (xyxy[:, 3] - xyxy[:, 1]).clamp(min=0)


def clip_boxes(boxes, xyxy, canvas_size):
    """xyxy clipped to canvas_size, as BoundingBoxes whose visibility drops by the share of
    each box's area that was cut off."""
    h, w = canvas_size
    before = box_areas(xyxy)
    clipped = lucid.stack([xyxy[:, 0].clamp(0, w), xyxy[:, 1].clamp(0, h), xyxy[:, 2].clamp(0, w),
                           xyxy[:, 3].clamp(0, h)], 1)
    after = box_areas(clipped)
    share = lucid.where(before > 0, after / lucid.where(before > 0, before, lucid.ones_like(before)),
                        lucid.zeros_like(before))
    return rebuild_boxes(boxes, clipped, canvas_size, visibility=boxes.visibility * share)


def flip_boxes(boxes, horizontal):
    h, w = boxes.canvas_size
    x1, y1, x2, y2 = to_xyxy(boxes).unbind(1)
    new = [w - x2, y1, w - x1, y2] if horizontal else [x1, h - y2, x2, h - y1]
    return rebuild_boxes(boxes, lucid.stack(new, 1), boxes.canvas_size)


def crop_boxes(boxes, top, left, height, width):
    """Boxes seen through the window (top, left, height, width), clipped to it."""
    x1, y1, x2, y2 = to_xyxy(boxes).unbind(1)
    return clip_boxes(boxes, lucid.stack([x1 - left, y1 - top, x2 - left, y2 - top], 1), (height, width))


def pad_boxes(boxes, left, top, new_h, new_w):
    x1, y1, x2, y2 = to_xyxy(boxes).unbind(1)
    return rebuild_boxes(boxes, lucid.stack([x1 + left, y1 + top, x2 + left, y2 + top], 1), (new_h, new_w))


def resize_boxes(boxes, new_h, new_w):
    h, w = boxes.canvas_size
    sx, sy = new_w / w, new_h / h
    x1, y1, x2, y2 = to_xyxy(boxes).unbind(1)
    return rebuild_boxes(boxes, lucid.stack([x1 * sx, y1 * sy, x2 * sx, y2 * sy], 1), (new_h, new_w))


def transpose_boxes(boxes):
    h, w = boxes.canvas_size
    x1, y1, x2, y2 = to_xyxy(boxes).unbind(1)
    return rebuild_boxes(boxes, lucid.stack([y1, x1, y2, x2], 1), (w, h))


def rot90_boxes(boxes, k):
    """Boxes after lucid.rot90(image, k, dims=(-2, -1)) (k counter-clockwise quarter turns):
    each turn sends (x, y) on an H x W canvas to (y, W - x) on a W x H one."""
    for _ in range(k % 4):
        h, w = boxes.canvas_size
        x1, y1, x2, y2 = to_xyxy(boxes).unbind(1)
        boxes = rebuild_boxes(boxes, lucid.stack([y1, w - x2, y2, w - x1], 1), (w, h))
    return boxes


def _edge_points(x1, y1, x2, y2, samples):
    """samples points along each edge of every box (the corners when samples is 2), as
    [4 * samples, N, 2]."""
    points = []
    for i in range(samples):
        t = i / (samples - 1)
        xt, yt = x1 + (x2 - x1) * t, y1 + (y2 - y1) * t
        points += [lucid.stack([xt, y1], 1), lucid.stack([xt, y2], 1), lucid.stack([x1, yt], 1),
                   lucid.stack([x2, yt], 1)]
    return lucid.stack(points, 0)


def map_boxes(boxes, map_pixel_points, out_hw, samples=2):
    """Boxes through a point map given in pixel-index coordinates ([M, 2] -> [M, 2]): each
    box becomes the axis-aligned box around its mapped outline, clipped to out_hw. The
    outline is the corners (samples=2, exact for affine maps and homographies) or samples
    points per edge (for curved maps)."""
    xyxy = to_xyxy(boxes)
    n = xyxy.shape[0]
    if n == 0:
        return rebuild_boxes(boxes, xyxy, out_hw)
    outline = _edge_points(*xyxy.unbind(1), samples)
    m = outline.shape[0]
    moved = (map_pixel_points(outline.reshape(m * n, 2) - 0.5) + 0.5).reshape(m, n, 2)
    return clip_boxes(boxes, lucid.cat([moved.amin(0), moved.amax(0)], 1), out_hw)


# ---- keypoints ----------------------------------------------------------------------------------
def _with_xy(kps, x, y, canvas_size):
    cols = [x.unsqueeze(1), y.unsqueeze(1)]
    if kps.data.shape[1] > 2:
        cols.append(kps.data[:, 2:])
    return Keypoints(lucid.cat(cols, 1), canvas_size)


def flip_keypoints(kps, horizontal):
    h, w = kps.canvas_size
    x, y = kps.data[:, 0], kps.data[:, 1]
    return _with_xy(kps, w - x, y, kps.canvas_size) if horizontal else _with_xy(kps, x, h - y, kps.canvas_size)


def crop_keypoints(kps, top, left, height, width):
    """Points in the window's frame; points outside it keep their (out of range) values,
    since dropping rows would break joint indices."""
    return _with_xy(kps, kps.data[:, 0] - left, kps.data[:, 1] - top, (height, width))


def pad_keypoints(kps, left, top, new_h, new_w):
    return _with_xy(kps, kps.data[:, 0] + left, kps.data[:, 1] + top, (new_h, new_w))


def resize_keypoints(kps, new_h, new_w):
    h, w = kps.canvas_size
    return _with_xy(kps, kps.data[:, 0] * (new_w / w), kps.data[:, 1] * (new_h / h), (new_h, new_w))


def transpose_keypoints(kps):
    h, w = kps.canvas_size
    return _with_xy(kps, kps.data[:, 1], kps.data[:, 0], (w, h))


def rot90_keypoints(kps, k):
    for _ in range(k % 4):
        h, w = kps.canvas_size
        kps = _with_xy(kps, kps.data[:, 1], w - kps.data[:, 0], (w, h))
    return kps


def map_keypoints(kps, map_pixel_points, out_hw):
    """Points through a point map in pixel-index coordinates (see map_boxes); not clipped."""
    if kps.data.shape[0] == 0:
        return Keypoints(kps.data, out_hw)
    moved = map_pixel_points(kps.data[:, :2] - 0.5) + 0.5
    return _with_xy(kps, moved[:, 0], moved[:, 1], out_hw)
