"""Upstream Lucid's resampling warps: matrix warps (Rotate, SafeRotate, ShiftScaleRotate,
Affine, Perspective) and displacement-field distortions (ElasticTransform, GridDistortion,
OpticalDistortion, GridElasticDeform). Images are sampled with interpolation (nearest or
bilinear; bicubic also for warps), masks with nearest; boxes become the axis-aligned box
around their mapped outline (clipped, visibility updated), keypoints are mapped exactly (for
the matrix warps) or by inverting the displacement field numerically.

border_mode / value: what lies outside the image, OpenCV's codes (0 constant = value,
1 replicate, 2 reflect, 3 wrap, 4 reflect_101); masks use the same rule with 0 as constant.
"""

import math

import lucid
from ...nn import functional as _F
from . import _targets as tg
from ._base import (GeometricTransform, Interpolation, as_interpolation, check_positive_int, is_number, to_range,
                    uniform)
from ._functional_warp import (affine_matrix, affine_points, border_code, gaussian_blur, perspective_matrix, remap,
                               rotation_matrix, sample_field_at_points, warp_affine)
from ._geometric import via_float


def _rows(matrix):
    return matrix.tolist()


def _mul(p, q):
    return [[sum(p[i][k] * q[k][j] for k in range(3)) for j in range(3)] for i in range(3)]


class _MatrixWarp(GeometricTransform):
    """Base of the matrix warps: params = (3x3 forward matrix as lists, output (h, w))."""

    def _init_warp(self, interpolation, border_mode, value):
        self.interpolation = as_interpolation(interpolation, type(self).__name__)
        self.border_mode = border_code(border_mode, type(self).__name__)
        if not is_number(value):
            raise TypeError(f"{type(self).__name__}: value should be a number, got {value!r}")
        self.value = float(value)

    def _apply_image(self, img, params):
        matrix, out_hw = params
        return via_float(img, lambda x: warp_affine(x, matrix, out_hw, mode=self.interpolation, fill=self.value,
                                                    border_mode=self.border_mode))

    def _apply_mask(self, mask, params):
        matrix, out_hw = params
        return via_float(mask, lambda x: warp_affine(x, matrix, out_hw, mode=Interpolation.NEAREST,
                                                     border_mode=self.border_mode))

    def _apply_boxes(self, boxes, params):
        matrix, out_hw = params
        return tg.map_boxes(boxes, lambda pts: affine_points(pts, matrix), out_hw)

    def _apply_keypoints(self, kps, params):
        matrix, out_hw = params
        return tg.map_keypoints(kps, lambda pts: affine_points(pts, matrix), out_hw)

    def _warp_repr(self):
        return f"interpolation={self.interpolation.value!r}, border_mode={self.border_mode}, value={self.value}"


def _center(h, w):
    return (w - 1) / 2, (h - 1) / 2


class Rotate(_MatrixWarp):
    """Rotates about the centre by an angle uniform in limit (degrees, counter-clockwise as
    OpenCV; v means (-v, v)), keeping the size."""

    def __init__(self, limit=90, interpolation=1, border_mode=4, value=0.0, p=0.5):
        super().__init__(p=p)
        self.limit = to_range(limit, type(self).__name__, "limit")
        self._init_warp(interpolation, border_mode, value)

    def make_params(self, img):
        h, w = img.shape[-2], img.shape[-1]
        return _rows(rotation_matrix(uniform(*self.limit), *_center(h, w))), (h, w)

    def _args_repr(self):
        return f"limit={self.limit}, {self._warp_repr()}, p={self.p}"


class SafeRotate(Rotate):
    """Rotate, with the canvas grown to hold the whole rotated image (as upstream Lucid: the
    output size changes with the angle)."""

    def make_params(self, img):
        h, w = img.shape[-2], img.shape[-1]
        angle = uniform(*self.limit)
        cos, sin = abs(math.cos(math.radians(angle))), abs(math.sin(math.radians(angle)))
        new_w, new_h = int(round(w * cos + h * sin)), int(round(w * sin + h * cos))
        shift = [[1.0, 0.0, (new_w - w) / 2], [0.0, 1.0, (new_h - h) / 2], [0.0, 0.0, 1.0]]
        return _mul(shift, _rows(rotation_matrix(angle, *_center(h, w)))), (new_h, new_w)


class ShiftScaleRotate(_MatrixWarp):
    """Random shift (shift_limit: fraction of the size, per axis), scale (1 + s, s in
    scale_limit) and rotation (rotate_limit degrees, counter-clockwise) about the centre."""

    def __init__(self, shift_limit=0.0625, scale_limit=0.1, rotate_limit=45, interpolation=1, border_mode=4,
                 value=0.0, p=0.5):
        super().__init__(p=p)
        self.shift_limit = to_range(shift_limit, "ShiftScaleRotate", "shift_limit")
        self.scale_limit = to_range(scale_limit, "ShiftScaleRotate", "scale_limit", low=-1.0)
        self.rotate_limit = to_range(rotate_limit, "ShiftScaleRotate", "rotate_limit")
        self._init_warp(interpolation, border_mode, value)

    def make_params(self, img):
        h, w = img.shape[-2], img.shape[-1]
        angle = uniform(*self.rotate_limit)
        scale = 1.0 + uniform(*self.scale_limit)
        dx, dy = uniform(*self.shift_limit) * w, uniform(*self.shift_limit) * h
        cx, cy = _center(h, w)
        # affine_matrix turns clockwise for positive angles; upstream negates so positive
        # angles turn counter-clockwise, as Rotate does.
        m = affine_matrix(cx=cx, cy=cy, scale=scale, angle_deg=-angle, translate_x=dx, translate_y=dy)
        return _rows(m), (h, w)

    def _args_repr(self):
        return (f"shift_limit={self.shift_limit}, scale_limit={self.scale_limit}, "
                f"rotate_limit={self.rotate_limit}, {self._warp_repr()}, p={self.p}")


class Affine(_MatrixWarp):
    """Random scale (a number, or a (min, max) range), translation (translate_percent:
    fraction of the size per axis, v meaning (-v, v)), rotation (rotate degrees,
    counter-clockwise) and horizontal shear (shear degrees) about the centre."""

    def __init__(self, scale=1.0, translate_percent=0.0, rotate=0.0, shear=0.0, interpolation=1, border_mode=4,
                 value=0.0, p=0.5):
        super().__init__(p=p)
        self.scale = (float(scale),) * 2 if is_number(scale) else to_range(scale, "Affine", "scale")
        if self.scale[0] <= 0:
            raise ValueError(f"Affine: scale should be positive, got {scale!r}")
        self.translate_percent = to_range(translate_percent, "Affine", "translate_percent")
        self.rotate = to_range(rotate, "Affine", "rotate")
        self.shear = to_range(shear, "Affine", "shear")
        self._init_warp(interpolation, border_mode, value)

    def make_params(self, img):
        h, w = img.shape[-2], img.shape[-1]
        scale, angle, shear = uniform(*self.scale), uniform(*self.rotate), uniform(*self.shear)
        dx, dy = uniform(*self.translate_percent) * w, uniform(*self.translate_percent) * h
        cx, cy = _center(h, w)
        m = affine_matrix(cx=cx, cy=cy, scale=scale, angle_deg=-angle, shear_x_deg=shear, translate_x=dx,
                          translate_y=dy)
        return _rows(m), (h, w)

    def _args_repr(self):
        return (f"scale={self.scale}, translate_percent={self.translate_percent}, rotate={self.rotate}, "
                f"shear={self.shear}, {self._warp_repr()}, p={self.p}")


class Perspective(_MatrixWarp):
    """Moves each corner of the image by up to s of the size (s uniform in scale; each
    coordinate uniform in [-s, s]) and stretches that quadrilateral back onto the canvas."""

    def __init__(self, scale=(0.05, 0.1), interpolation=1, border_mode=4, value=0.0, p=0.5):
        super().__init__(p=p)
        self.scale = to_range(scale, "Perspective", "scale", symmetric=False, low=0.0)
        self._init_warp(interpolation, border_mode, value)

    def make_params(self, img):
        h, w = img.shape[-2], img.shape[-1]
        s = uniform(*self.scale)
        corners = [(0.0, 0.0), (w - 1.0, 0.0), (w - 1.0, h - 1.0), (0.0, h - 1.0)]
        moved = [(x + uniform(-s, s) * w, y + uniform(-s, s) * h) for x, y in corners]
        return _rows(perspective_matrix(moved, corners)), (h, w)

    def _args_repr(self):
        return f"scale={self.scale}, {self._warp_repr()}, p={self.p}"


# ---- displacement fields ---------------------------------------------------------------------------
class _FieldWarp(GeometricTransform):
    """Base of the distortions: params = backward displacement (dx, dy), [H, W] tensors in
    pixels: output pixel (x, y) shows input (x + dx, y + dy), reflect_101 outside."""

    def _apply_image(self, img, params):
        dx, dy = params
        return via_float(img, lambda x: remap(x, dx.to(x.dtype), dy.to(x.dtype), mode=self.interpolation))

    def _apply_mask(self, mask, params):
        dx, dy = params
        return via_float(mask, lambda x: remap(x, dx.to(x.dtype), dy.to(x.dtype), mode=Interpolation.NEAREST))

    def _forward(self, params):
        """The forward point map: q with q + d(q) = p, by fixed-point iteration from p."""
        dx, dy = params
        hw = tuple(dx.shape)

        def run(pts):
            pts = pts.to(dx.dtype).to(dx.device)
            q = pts
            for _ in range(8):
                q = pts - lucid.cat([sample_field_at_points(dx, q, hw), sample_field_at_points(dy, q, hw)], 1)
            return q
        return run

    def _apply_boxes(self, boxes, params):
        return tg.map_boxes(boxes, self._forward(params), tuple(params[0].shape), samples=9)

    def _apply_keypoints(self, kps, params):
        return tg.map_keypoints(kps, self._forward(params), tuple(params[0].shape))


def _upsampled(values, h, w, like):
    """A coarse grid (nested lists) bilinearly stretched (corners aligned) to [h, w]."""
    coarse = lucid.tensor(values, dtype=like.dtype, device=like.device)
    gy, gx = coarse.shape
    return _F.interpolate(coarse.reshape(1, 1, gy, gx), size=(h, w), mode="bilinear", align_corners=True)[0, 0]


class ElasticTransform(_FieldWarp):
    """Elastic deformation (Simard et al. 2003): per-pixel displacements uniform in [-1, 1],
    smoothed by a Gaussian of std sigma and scaled by alpha (pixels)."""

    def __init__(self, alpha=1.0, sigma=50.0, interpolation=1, p=0.5):
        super().__init__(p=p)
        if not is_number(alpha) or alpha < 0:
            raise ValueError(f"ElasticTransform: alpha should be a non-negative number, got {alpha!r}")
        if not is_number(sigma) or sigma <= 0:
            raise ValueError(f"ElasticTransform: sigma should be a positive number, got {sigma!r}")
        self.alpha, self.sigma = float(alpha), float(sigma)
        self.interpolation = as_interpolation(interpolation, "ElasticTransform")

    def make_params(self, img):
        h, w = img.shape[-2], img.shape[-1]
        dtype = img.dtype if img.is_floating_point() else lucid.float32
        noise = lucid.rand(2, 1, h, w, dtype=dtype, device=img.device) * 2 - 1
        field = gaussian_blur(noise, self.sigma) * self.alpha
        return field[0, 0], field[1, 0]

    def _args_repr(self):
        return f"alpha={self.alpha}, sigma={self.sigma}, interpolation={self.interpolation.value!r}, p={self.p}"


class GridDistortion(_FieldWarp):
    """Moves the (num_steps + 1)^2 nodes of a regular grid by up to distort_limit cells
    (uniform, per axis) and interpolates the displacement bilinearly in between."""

    def __init__(self, num_steps=5, distort_limit=0.3, interpolation=1, p=0.5):
        super().__init__(p=p)
        self.num_steps = check_positive_int(num_steps, "GridDistortion", "num_steps")
        self.distort_limit = to_range(distort_limit, "GridDistortion", "distort_limit")
        self.interpolation = as_interpolation(interpolation, "GridDistortion")

    def make_params(self, img):
        h, w = img.shape[-2], img.shape[-1]
        n = self.num_steps + 1
        cells = (w / self.num_steps, h / self.num_steps)
        fields = []
        for cell in cells:
            fields.append(_upsampled([[uniform(*self.distort_limit) * cell for _ in range(n)] for _ in range(n)],
                                     h, w, img if img.is_floating_point() else img.float()))
        return tuple(fields)

    def _args_repr(self):
        return (f"num_steps={self.num_steps}, distort_limit={self.distort_limit}, "
                f"interpolation={self.interpolation.value!r}, p={self.p}")


class OpticalDistortion(_FieldWarp):
    """Radial (barrel k < 0 / pincushion k > 0) lens distortion: input sampled at
    c + (p - c)(1 + k r^2), r the distance to c in half-sizes; k uniform in distort_limit,
    the centre c shifted by up to shift_limit of the size."""

    def __init__(self, distort_limit=0.05, shift_limit=0.05, interpolation=1, p=0.5):
        super().__init__(p=p)
        self.distort_limit = to_range(distort_limit, "OpticalDistortion", "distort_limit")
        self.shift_limit = to_range(shift_limit, "OpticalDistortion", "shift_limit")
        self.interpolation = as_interpolation(interpolation, "OpticalDistortion")

    def make_params(self, img):
        h, w = img.shape[-2], img.shape[-1]
        k = uniform(*self.distort_limit)
        cx = w / 2 + uniform(*self.shift_limit) * w
        cy = h / 2 + uniform(*self.shift_limit) * h
        dtype = img.dtype if img.is_floating_point() else lucid.float32
        ys = lucid.arange(h, dtype=dtype, device=img.device).reshape(h, 1).expand(h, w)
        xs = lucid.arange(w, dtype=dtype, device=img.device).reshape(1, w).expand(h, w)
        factor = k * (((xs - cx) / (w / 2)) ** 2 + ((ys - cy) / (h / 2)) ** 2)
        return (xs - cx) * factor, (ys - cy) * factor

    def _args_repr(self):
        return (f"distort_limit={self.distort_limit}, shift_limit={self.shift_limit}, "
                f"interpolation={self.interpolation.value!r}, p={self.p}")


class GridElasticDeform(_FieldWarp):
    """Moves the nodes of a (num_grid_xy[1] + 1) x (num_grid_xy[0] + 1) control grid by up to
    magnitude pixels (uniform, per axis) and interpolates bilinearly in between."""

    def __init__(self, num_grid_xy=(4, 4), magnitude=10, interpolation=1, p=0.5):
        super().__init__(p=p)
        if (not isinstance(num_grid_xy, (tuple, list)) or len(num_grid_xy) != 2
                or not all(isinstance(v, int) and not isinstance(v, bool) and v > 0 for v in num_grid_xy)):
            raise ValueError(f"GridElasticDeform: num_grid_xy should be (x, y) positive ints, got {num_grid_xy!r}")
        if not is_number(magnitude) or magnitude < 0:
            raise ValueError(f"GridElasticDeform: magnitude should be a non-negative number, got {magnitude!r}")
        self.num_grid_xy, self.magnitude = tuple(num_grid_xy), float(magnitude)
        self.interpolation = as_interpolation(interpolation, "GridElasticDeform")

    def make_params(self, img):
        h, w = img.shape[-2], img.shape[-1]
        gx, gy = self.num_grid_xy[0] + 1, self.num_grid_xy[1] + 1
        like = img if img.is_floating_point() else img.float()
        return tuple(_upsampled([[uniform(-self.magnitude, self.magnitude) for _ in range(gx)] for _ in range(gy)],
                                h, w, like) for _ in range(2))

    def _args_repr(self):
        return (f"num_grid_xy={self.num_grid_xy}, magnitude={self.magnitude}, "
                f"interpolation={self.interpolation.value!r}, p={self.p}")
