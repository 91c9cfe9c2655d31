"""Upstream Lucid's exact geometric transforms (flips, transpose, quarter turns), resizes
and crops: every one moves the image, masks (nearest sampling), boxes and keypoints
together. Images are [C, H, W] / [B, C, H, W] (integer images are resampled as float and
rounded back); masks [H, W] or with leading dims.

Resize, CenterCrop, RandomCrop and RandomResizedCrop here are upstream's forms; the public
names in lucid.utils.transforms are torchvision's classes, which hand an upstream-style call
(height, width, p, ...) to these.
"""

import math

import lucid
from ...nn import functional as _F
from . import _targets as tg
from ._base import (GeometricTransform, Interpolation, as_interpolation, check_positive_int, is_number,
                    permutation, randint, spatial_size, to_range, uniform)
from ._functional_warp import as_nchw, border_code, reflect101_index


# ---- resampling helpers ----------------------------------------------------------------------
def via_float(x, fn):
    """fn run on x ([H, W] or [..., C, H, W]) as a float [..., C, H, W] tensor; the result
    comes back in x's dtype (rounded for integer and bool tensors) and dims."""
    bare = x.ndim == 2
    y = x.unsqueeze(0) if bare else x
    out = fn(y if y.is_floating_point() else y.to(lucid.float32))
    if not x.is_floating_point():
        out = lucid.round(out).to(x.dtype)
    return out.squeeze(0) if bare else out


def resize_to(x, size, interpolation):
    """x resized to size = (height, width) with F.interpolate (no antialiasing)."""
    if tuple(size) == spatial_size(x):
        return x
    mode = as_interpolation(interpolation, "resize").value

    def run(y):
        y4, restore = as_nchw(y)
        corners = False if mode in ("bilinear", "bicubic") else None
        return restore(_F.interpolate(y4, size=tuple(size), mode=mode, align_corners=corners))
    return via_float(x, run)


def _choice(values):
    return values[randint(0, len(values))]


def _sizes(value, where, name):
    """An int, or a non-empty sequence of ints to pick from per call, as a tuple."""
    values = (value,) if isinstance(value, int) else tuple(value) if isinstance(value, (list, tuple)) else None
    if not values:
        raise TypeError(f"{where}: {name} should be a positive int or a list of them, got {value!r}")
    for v in values:
        check_positive_int(v, where, name)
    return values


class _Resized(GeometricTransform):
    """Base of the transforms that resize everything to params = (height, width)."""

    def __init__(self, interpolation, p):
        super().__init__(p=p)
        self.interpolation = as_interpolation(interpolation, type(self).__name__)

    def _apply_image(self, img, size):
        return resize_to(img, size, self.interpolation)

    def _apply_mask(self, mask, size):
        return resize_to(mask, size, Interpolation.NEAREST)

    def _apply_boxes(self, boxes, size):
        return tg.resize_boxes(boxes, *size)

    def _apply_keypoints(self, kps, size):
        return tg.resize_keypoints(kps, *size)


class Resize(_Resized):
    """Resizes to height x width (upstream's Resize(height, width, interpolation, p))."""

    def __init__(self, height, width, interpolation=1, p=1.0):
        super().__init__(interpolation, p)
        self.height = check_positive_int(height, "Resize", "height")
        self.width = check_positive_int(width, "Resize", "width")

    def make_params(self, img):
        return (self.height, self.width)

    def _args_repr(self):
        return f"height={self.height}, width={self.width}, interpolation={self.interpolation.value!r}, p={self.p}"


def _scaled(h, w, scale):
    return max(1, int(round(h * scale))), max(1, int(round(w * scale)))


class SmallestMaxSize(_Resized):
    """Scales (keeping the aspect ratio) so that the shorter side is max_size (an int, or a
    list to pick from per call)."""

    def __init__(self, max_size=1024, interpolation=1, p=1.0):
        super().__init__(interpolation, p)
        self.max_size = _sizes(max_size, type(self).__name__, "max_size")

    def _target(self, h, w, size):
        return _scaled(h, w, size / min(h, w))

    def make_params(self, img):
        return self._target(*spatial_size(img), _choice(self.max_size))

    def _args_repr(self):
        size = self.max_size[0] if len(self.max_size) == 1 else list(self.max_size)
        return f"max_size={size}, interpolation={self.interpolation.value!r}, p={self.p}"


class LongestMaxSize(SmallestMaxSize):
    """Scales (keeping the aspect ratio) so that the longer side is max_size (an int, or a
    list to pick from per call)."""

    def _target(self, h, w, size):
        return _scaled(h, w, size / max(h, w))


class ResizeShortestEdge(_Resized):
    """Detection-style resize: the shorter side becomes min_size (an int, or a list to pick
    from per call), unless that makes the longer side exceed max_size, in which case the
    longer side becomes max_size (torchvision's GeneralizedRCNNTransform / detectron2's
    rule). Aspect ratio kept."""

    def __init__(self, min_size=800, max_size=1333, interpolation=1, p=1.0):
        super().__init__(interpolation, p)
        self.min_size = _sizes(min_size, "ResizeShortestEdge", "min_size")
        self.max_size = None if max_size is None else check_positive_int(max_size, "ResizeShortestEdge", "max_size")

    def make_params(self, img):
        h, w = spatial_size(img)
        scale = _choice(self.min_size) / min(h, w)
        if self.max_size is not None and max(h, w) * scale > self.max_size:
            scale = self.max_size / max(h, w)
        return _scaled(h, w, scale)

    def _args_repr(self):
        size = self.min_size[0] if len(self.min_size) == 1 else list(self.min_size)
        return f"min_size={size}, max_size={self.max_size}, interpolation={self.interpolation.value!r}, p={self.p}"


class RandomScale(_Resized):
    """Scales both sides by 1 + s, s uniform in scale_limit (v means (-v, v))."""

    def __init__(self, scale_limit=0.1, interpolation=1, p=0.5):
        super().__init__(interpolation, p)
        self.scale_limit = to_range(scale_limit, "RandomScale", "scale_limit", low=-1.0)

    def make_params(self, img):
        return _scaled(*spatial_size(img), 1.0 + uniform(*self.scale_limit))

    def _args_repr(self):
        return f"scale_limit={self.scale_limit}, interpolation={self.interpolation.value!r}, p={self.p}"


# ---- flips, transpose, quarter turns -------------------------------------------------------------
class _Exact(GeometricTransform):
    """Base of the pixel-exact transforms, params = (quarter turns k, then hflip?, vflip?,
    transpose?) applied in that order."""

    def _move(self, x, params):
        k, hflip, vflip, transpose = params
        if k:
            x = lucid.rot90(x, k, dims=(-2, -1))
        if hflip:
            x = x.flip(-1)
        if vflip:
            x = x.flip(-2)
        return x.transpose(-2, -1) if transpose else x

    def _apply_image(self, img, params):
        return self._move(img, params)

    def _apply_mask(self, mask, params):
        return self._move(mask, params)

    def _apply_boxes(self, boxes, params):
        k, hflip, vflip, transpose = params
        boxes = tg.rot90_boxes(boxes, k)
        boxes = tg.flip_boxes(boxes, True) if hflip else boxes
        boxes = tg.flip_boxes(boxes, False) if vflip else boxes
        return tg.transpose_boxes(boxes) if transpose else boxes

    def _apply_keypoints(self, kps, params):
        k, hflip, vflip, transpose = params
        kps = tg.rot90_keypoints(kps, k)
        kps = tg.flip_keypoints(kps, True) if hflip else kps
        kps = tg.flip_keypoints(kps, False) if vflip else kps
        return tg.transpose_keypoints(kps) if transpose else kps


class HorizontalFlip(_Exact):
    """Mirrors left-right with probability p."""

    def __init__(self, p=0.5):
        super().__init__(p=p)

    def make_params(self, img):
        return (0, True, False, False)


class VerticalFlip(_Exact):
    """Mirrors top-bottom with probability p."""

    def __init__(self, p=0.5):
        super().__init__(p=p)

    def make_params(self, img):
        return (0, False, True, False)


class Flip(_Exact):
    """Flips horizontally, vertically or both (one of the three, uniformly)."""

    def __init__(self, p=0.5):
        super().__init__(p=p)

    def make_params(self, img):
        code = randint(-1, 2)  # Albumentations' codes: 1 horizontal, 0 vertical, -1 both
        return (0, code != 0, code != 1, False)


class Transpose(_Exact):
    """Swaps rows and columns (H x W -> W x H)."""

    def __init__(self, p=0.5):
        super().__init__(p=p)

    def make_params(self, img):
        return (0, False, False, True)


class RandomRotate90(_Exact):
    """Turns by k quarter turns counter-clockwise (lucid.rot90), k uniform in 0..3."""

    def __init__(self, p=0.5):
        super().__init__(p=p)

    def make_params(self, img):
        return (randint(0, 4), False, False, False)


class D4(_Exact):
    """One of the 8 symmetries of the square, uniformly: k quarter turns, then optionally a
    horizontal flip."""

    def __init__(self, p=1.0):
        super().__init__(p=p)

    def make_params(self, img):
        g = randint(0, 8)
        return (g % 4, g >= 4, False, False)


# ---- crops ------------------------------------------------------------------------------------
class _Window(GeometricTransform):
    """Base of the crops: params = (top, left, height, width, out_size or None); the window
    must lie in the image, and is resized to out_size when given."""
    interpolation = Interpolation.BILINEAR

    def _cut(self, x, params, interpolation):
        top, left, h, w, size = params
        H, W = spatial_size(x)
        if top < 0 or left < 0 or top + h > H or left + w > W:
            raise ValueError(f"{type(self).__name__}: the crop window (top={top}, left={left}, height={h}, "
                             f"width={w}) does not fit the {H}x{W} image")
        x = x[..., top:top + h, left:left + w]
        return x if size is None else resize_to(x, size, interpolation)

    def _apply_image(self, img, params):
        return self._cut(img, params, self.interpolation)

    def _apply_mask(self, mask, params):
        return self._cut(mask, params, Interpolation.NEAREST)

    def _apply_boxes(self, boxes, params):
        top, left, h, w, size = params
        boxes = tg.crop_boxes(boxes, top, left, h, w)
        return boxes if size is None else tg.resize_boxes(boxes, *size)

    def _apply_keypoints(self, kps, params):
        top, left, h, w, size = params
        kps = tg.crop_keypoints(kps, top, left, h, w)
        return kps if size is None else tg.resize_keypoints(kps, *size)


def _check_fits(where, ch, cw, h, w):
    if ch > h or cw > w:
        raise ValueError(f"{where}: crop size ({ch}, {cw}) is larger than the image ({h}, {w})")


class CenterCrop(_Window):
    """The central height x width window (top-left at ((H - height) // 2, (W - width) // 2))."""

    def __init__(self, height, width, p=1.0):
        super().__init__(p=p)
        self.height = check_positive_int(height, "CenterCrop", "height")
        self.width = check_positive_int(width, "CenterCrop", "width")

    def make_params(self, img):
        h, w = spatial_size(img)
        _check_fits("CenterCrop", self.height, self.width, h, w)
        return ((h - self.height) // 2, (w - self.width) // 2, self.height, self.width, None)

    def _args_repr(self):
        return f"height={self.height}, width={self.width}, p={self.p}"


class RandomCrop(CenterCrop):
    """A height x width window at a uniformly random place."""

    def make_params(self, img):
        h, w = spatial_size(img)
        _check_fits("RandomCrop", self.height, self.width, h, w)
        return (randint(0, h - self.height + 1), randint(0, w - self.width + 1), self.height, self.width, None)


class Crop(_Window):
    """The fixed window x_min <= x < x_max, y_min <= y < y_max."""

    def __init__(self, x_min=0, y_min=0, x_max=1024, y_max=1024, p=1.0):
        super().__init__(p=p)
        for name, v in (("x_min", x_min), ("y_min", y_min), ("x_max", x_max), ("y_max", y_max)):
            if not isinstance(v, int) or isinstance(v, bool) or v < 0:
                raise ValueError(f"Crop: {name} should be a non-negative int, got {v!r}")
        if x_max <= x_min or y_max <= y_min:
            raise ValueError(f"Crop: expected x_min < x_max and y_min < y_max, got x=({x_min}, {x_max}), "
                             f"y=({y_min}, {y_max})")
        self.x_min, self.y_min, self.x_max, self.y_max = x_min, y_min, x_max, y_max

    def make_params(self, img):
        return (self.y_min, self.x_min, self.y_max - self.y_min, self.x_max - self.x_min, None)

    def _args_repr(self):
        return f"x_min={self.x_min}, y_min={self.y_min}, x_max={self.x_max}, y_max={self.y_max}, p={self.p}"


class RandomResizedCrop(_Window):
    """A window of random area (scale: share of the image) and aspect ratio (ratio, drawn
    log-uniformly), resized to height x width; after 10 misses, the central crop closest
    to ratio (torchvision's rule)."""

    def __init__(self, height, width, scale=(0.08, 1.0), ratio=(3 / 4, 4 / 3), interpolation=1, p=1.0):
        super().__init__(p=p)
        self.height = check_positive_int(height, "RandomResizedCrop", "height")
        self.width = check_positive_int(width, "RandomResizedCrop", "width")
        self.scale = to_range(scale, "RandomResizedCrop", "scale", low=0.0)
        self.ratio = to_range(ratio, "RandomResizedCrop", "ratio", low=1e-12)
        self.interpolation = as_interpolation(interpolation, "RandomResizedCrop")

    def make_params(self, img):
        h, w = spatial_size(img)
        area = h * w
        log_ratio = (math.log(self.ratio[0]), math.log(self.ratio[1]))
        for _ in range(10):
            target = area * uniform(*self.scale)
            aspect = math.exp(uniform(*log_ratio))
            cw, ch = int(round(math.sqrt(target * aspect))), int(round(math.sqrt(target / aspect)))
            if 0 < cw <= w and 0 < ch <= h:
                return (randint(0, h - ch + 1), randint(0, w - cw + 1), ch, cw, (self.height, self.width))
        if w / h < self.ratio[0]:
            cw, ch = w, int(round(w / self.ratio[0]))
        elif w / h > self.ratio[1]:
            ch, cw = h, int(round(h * self.ratio[1]))
        else:
            cw, ch = w, h
        return ((h - ch) // 2, (w - cw) // 2, ch, cw, (self.height, self.width))

    def _args_repr(self):
        return (f"height={self.height}, width={self.width}, scale={self.scale}, ratio={self.ratio}, "
                f"interpolation={self.interpolation.value!r}, p={self.p}")


class RandomSizedCrop(_Window):
    """A window of random height (uniform in min_max_height, inclusive) and width
    height * w2h_ratio at a random place, resized to height x width."""

    def __init__(self, min_max_height, height, width, w2h_ratio=1.0, interpolation=1, p=1.0):
        super().__init__(p=p)
        if (not isinstance(min_max_height, (tuple, list)) or len(min_max_height) != 2
                or not all(isinstance(v, int) and v > 0 for v in min_max_height)
                or min_max_height[0] > min_max_height[1]):
            raise ValueError(f"RandomSizedCrop: min_max_height should be (min, max) positive ints, got "
                             f"{min_max_height!r}")
        self.min_max_height = tuple(min_max_height)
        self.height = check_positive_int(height, "RandomSizedCrop", "height")
        self.width = check_positive_int(width, "RandomSizedCrop", "width")
        if not is_number(w2h_ratio) or w2h_ratio <= 0:
            raise ValueError(f"RandomSizedCrop: w2h_ratio should be a positive number, got {w2h_ratio!r}")
        self.w2h_ratio = float(w2h_ratio)
        self.interpolation = as_interpolation(interpolation, "RandomSizedCrop")

    def make_params(self, img):
        h, w = spatial_size(img)
        ch = randint(self.min_max_height[0], self.min_max_height[1] + 1)
        cw = max(1, int(round(ch * self.w2h_ratio)))
        _check_fits("RandomSizedCrop", ch, cw, h, w)
        return (randint(0, h - ch + 1), randint(0, w - cw + 1), ch, cw, (self.height, self.width))

    def _args_repr(self):
        return (f"min_max_height={self.min_max_height}, height={self.height}, width={self.width}, "
                f"w2h_ratio={self.w2h_ratio}, p={self.p}")


# ---- padding ----------------------------------------------------------------------------------
def _border_index(n, lo, hi, code):
    """Source indices of a size-n dim padded by lo / hi under OpenCV border code 1-4."""
    def source(i):
        if code == 1:
            return min(max(i, 0), n - 1)
        if code == 3:
            return i % n
        if code == 2:  # reflect, repeating the edge pixel: period 2n
            i %= 2 * n
            return i if i < n else 2 * n - 1 - i
        return None
    if code == 4:
        return reflect101_index(n, lo, hi)
    return [source(i) for i in range(-lo, n + hi)]


def pad_border(x, left, right, top, bottom, code, value):
    """x ([H, W] or [..., H, W]) padded on each side; code 0 fills value, 1-4 follow OpenCV's
    border rules."""
    if not (left or right or top or bottom):
        return x
    if code == 0:
        def run(y):
            return _F.pad(y, (left, right, top, bottom), mode="constant", value=float(value))
        return via_float(x, run) if not x.is_floating_point() else run(x)
    h, w = x.shape[-2], x.shape[-1]
    x = x.index_select(x.ndim - 1, lucid.tensor(_border_index(w, left, right, code), device=x.device))
    return x.index_select(x.ndim - 2, lucid.tensor(_border_index(h, top, bottom, code), device=x.device))


class _Padded(GeometricTransform):
    """Base of the pads: params = (left, right, top, bottom); negative amounts crop."""
    border_mode, value, mask_value = 0, 0.0, 0.0

    def _pad(self, x, params, value):
        left, right, top, bottom = params
        h, w = spatial_size(x)
        if -min(left, 0) - min(right, 0) >= w or -min(top, 0) - min(bottom, 0) >= h:
            raise ValueError(f"{type(self).__name__}: cropping {params} (left, right, top, bottom) leaves nothing "
                             f"of the {h}x{w} image")
        x = x[..., -min(top, 0):h + min(bottom, 0), -min(left, 0):w + min(right, 0)]
        return pad_border(x, max(left, 0), max(right, 0), max(top, 0), max(bottom, 0), self.border_mode, value)

    def _apply_image(self, img, params):
        return self._pad(img, params, self.value)

    def _apply_mask(self, mask, params):
        return self._pad(mask, params, self.mask_value)

    def _apply_boxes(self, boxes, params):
        left, right, top, bottom = params
        h, w = boxes.canvas_size
        out = (h + top + bottom, w + left + right)
        return tg.crop_boxes(boxes, -top, -left, *out)

    def _apply_keypoints(self, kps, params):
        left, right, top, bottom = params
        h, w = kps.canvas_size
        return tg.pad_keypoints(kps, left, top, h + top + bottom, w + left + right)


class PadIfNeeded(_Padded):
    """Pads (centred, the odd pixel going right / bottom) up to min_height x min_width;
    border_mode: OpenCV's rule for the new pixels (0: value, mask_value for masks;
    1 replicate, 2 reflect, 3 wrap, 4 reflect_101)."""

    def __init__(self, min_height=1024, min_width=1024, border_mode=4, value=0.0, mask_value=0.0, p=1.0):
        super().__init__(p=p)
        self.min_height = check_positive_int(min_height, "PadIfNeeded", "min_height")
        self.min_width = check_positive_int(min_width, "PadIfNeeded", "min_width")
        self.border_mode = border_code(border_mode, "PadIfNeeded")
        for name, v in (("value", value), ("mask_value", mask_value)):
            if not is_number(v):
                raise TypeError(f"PadIfNeeded: {name} should be a number, got {v!r}")
        self.value, self.mask_value = value, mask_value

    def make_params(self, img):
        h, w = spatial_size(img)
        dh, dw = max(self.min_height - h, 0), max(self.min_width - w, 0)
        return (dw // 2, dw - dw // 2, dh // 2, dh - dh // 2)

    def _args_repr(self):
        return (f"min_height={self.min_height}, min_width={self.min_width}, border_mode={self.border_mode}, "
                f"value={self.value}, mask_value={self.mask_value}, p={self.p}")


class CropAndPad(_Padded):
    """Pads (positive) or crops (negative) each side by px pixels: an int for all sides, or
    (top, right, bottom, left); new pixels take value (masks 0). The size changes (no resize
    back)."""

    def __init__(self, px=0, value=0.0, p=1.0):
        super().__init__(p=p)
        if isinstance(px, int) and not isinstance(px, bool):
            px = (px,) * 4
        if not isinstance(px, (tuple, list)) or len(px) != 4 or not all(
                isinstance(v, int) and not isinstance(v, bool) for v in px):
            raise TypeError(f"CropAndPad: px should be an int or (top, right, bottom, left) ints, got {px!r}")
        if not is_number(value):
            raise TypeError(f"CropAndPad: value should be a number, got {value!r}")
        self.px = tuple(px)
        self.value = value

    def make_params(self, img):
        top, right, bottom, left = self.px
        return (left, right, top, bottom)

    def _args_repr(self):
        return f"px={self.px}, value={self.value}, p={self.p}"


# ---- grid shuffle -------------------------------------------------------------------------------
class RandomGridShuffle(GeometricTransform):
    """Cuts the image into grid = (rows, cols) cells and shuffles them (cells swap only with
    cells of the same size, so nothing is resampled). Masks and keypoints move with their
    cells; boxes cannot follow (a box may span several cells) and raise NotImplementedError."""

    def __init__(self, grid=(3, 3), p=0.5):
        super().__init__(p=p)
        if (not isinstance(grid, (tuple, list)) or len(grid) != 2
                or not all(isinstance(g, int) and not isinstance(g, bool) and g > 0 for g in grid)):
            raise ValueError(f"RandomGridShuffle: grid should be (rows, cols) of positive ints, got {grid!r}")
        self.grid = tuple(grid)

    def make_params(self, img):
        h, w = spatial_size(img)
        if self.grid[0] > h or self.grid[1] > w:
            raise ValueError(f"RandomGridShuffle: grid {self.grid} has more cells than the {h}x{w} image has pixels")
        ys = [i * h // self.grid[0] for i in range(self.grid[0] + 1)]
        xs = [i * w // self.grid[1] for i in range(self.grid[1] + 1)]
        cells = [(ys[r], xs[c], ys[r + 1] - ys[r], xs[c + 1] - xs[c]) for r in range(self.grid[0])
                 for c in range(self.grid[1])]
        source = list(range(len(cells)))
        for shape in {cell[2:] for cell in cells}:
            same = [i for i, cell in enumerate(cells) if cell[2:] == shape]
            for i, j in zip(same, permutation(len(same))):
                source[i] = same[j]
        return cells, source  # destination cell i shows source cell source[i]

    def _shuffle(self, x, params):
        cells, source = params
        rows = []
        for r in range(self.grid[0]):
            row = [x[..., cells[source[i]][0]:cells[source[i]][0] + cells[i][2],
                     cells[source[i]][1]:cells[source[i]][1] + cells[i][3]]
                   for i in range(r * self.grid[1], (r + 1) * self.grid[1])]
            rows.append(lucid.cat(row, -1))
        return lucid.cat(rows, -2)

    def _apply_image(self, img, params):
        return self._shuffle(img, params)

    def _apply_mask(self, mask, params):
        return self._shuffle(mask, params)

    def _apply_boxes(self, boxes, params):
        raise NotImplementedError("RandomGridShuffle: bounding boxes cannot follow a grid shuffle (a box may span "
                                  "several cells); shuffle images, masks and keypoints only")

    def _apply_keypoints(self, kps, params):
        cells, source = params
        x, y = kps.data[:, 0], kps.data[:, 1]
        new_x, new_y = x, y
        for dst, src in enumerate(source):
            sy, sx, ch, cw = cells[src]
            dy, dx = cells[dst][0], cells[dst][1]
            inside = (x >= sx) & (x < sx + cw) & (y >= sy) & (y < sy + ch)
            new_x = lucid.where(inside, x - sx + dx, new_x)
            new_y = lucid.where(inside, y - sy + dy, new_y)
        return tg._with_xy(kps, new_x, new_y, kps.canvas_size)

    def _args_repr(self):
        return f"grid={self.grid}, p={self.p}"

