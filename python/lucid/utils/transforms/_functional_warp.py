"""Upstream Lucid's functional geometry: affine / rotation / perspective matrices, point
mapping, warps (warp_affine, remap), resize_target, and the convolution helpers
(depthwise_conv2d, gaussian_blur). Part of lucid.utils.transforms.functional.

Matrices follow OpenCV: a forward 3x3 matrix maps an input pixel (x, y, 1) to an output
pixel, pixel i sitting at coordinate i. Warps sample the input at the inverse-mapped output
pixels with grid_sample; border_mode picks what lies outside the image (OpenCV's codes or
names: 0 / "constant" (fill), 1 / "replicate", 2 / "reflect" (edge pixel repeated), 3 /
"wrap", 4 / "reflect_101" (edge pixel not repeated)). Images are [..., C, H, W] float
tensors; the helpers run on the image's device.
"""

import math

import lucid
from ...nn import functional as _F
from ._base import Interpolation, as_interpolation, check_positive_int, is_number

_BORDER_NAMES = {"constant": 0, "replicate": 1, "edge": 1, "reflect": 2, "wrap": 3, "reflect_101": 4,
                 "reflect101": 4}


def border_code(border_mode, where):
    """border_mode (OpenCV code 0-4 or its name) as the code."""
    if isinstance(border_mode, str) and border_mode.lower() in _BORDER_NAMES:
        return _BORDER_NAMES[border_mode.lower()]
    if isinstance(border_mode, int) and not isinstance(border_mode, bool) and 0 <= border_mode <= 4:
        return border_mode
    raise ValueError(f"{where}: unknown border_mode {border_mode!r}, expected an OpenCV code 0-4 or one of "
                     f"{sorted(_BORDER_NAMES)}")


def _check_float_tensor(img, where, min_dims=3):
    if not isinstance(img, lucid.Tensor):
        raise TypeError(f"{where}: expected an image tensor [..., C, H, W], got {type(img).__name__}")
    if img.ndim < min_dims:
        raise ValueError(f"{where}: expected an image tensor [..., C, H, W], got shape {list(img.shape)}")
    if not img.is_floating_point():
        raise TypeError(f"{where}: expected a float image, got dtype {img.dtype}")


def as_nchw(img):
    """img [..., C, H, W] as [N, C, H, W] and a function giving a result [N, C, h, w] back
    img's leading dims."""
    lead = list(img.shape[:-2])
    x = img.reshape(-1, lead[-1], img.shape[-2], img.shape[-1])
    return x, lambda out: out.reshape(lead + [out.shape[-2], out.shape[-1]])


def resize_target(h, w, size):
    """The (height, width) resize(size) gives an h x w image: an int size is the shorter
    side (the other scaled, rounded), a pair is exact."""
    if isinstance(size, int) and not isinstance(size, bool):
        check_positive_int(size, "resize_target", "size")
        return (size, max(1, int(round(w * size / h)))) if h <= w else (max(1, int(round(h * size / w))), size)
    if isinstance(size, (tuple, list)) and len(size) == 2:
        return (check_positive_int(size[0], "resize_target", "size[0]"),
                check_positive_int(size[1], "resize_target", "size[1]"))
    raise TypeError(f"resize_target: size should be an int or (height, width), got {size!r}")


# ---- matrices ----------------------------------------------------------------------------------
def _matrix(rows, device):
    return lucid.tensor(rows, dtype=lucid.float32, device=device)


def rotation_matrix(angle_deg, cx, cy, scale=1.0, device=None):
    """OpenCV's getRotationMatrix2D as a 3x3 matrix: angle_deg counter-clockwise (as seen on
    the image) about (cx, cy), then scale."""
    a = scale * math.cos(math.radians(angle_deg))
    b = scale * math.sin(math.radians(angle_deg))
    return _matrix([[a, b, (1 - a) * cx - b * cy], [-b, a, b * cx + (1 - a) * cy], [0.0, 0.0, 1.0]], device)


def affine_matrix(*, cx, cy, scale=1.0, angle_deg=0.0, shear_x_deg=0.0, shear_y_deg=0.0, translate_x=0.0,
                  translate_y=0.0, device=None):
    """3x3 matrix of rotate(angle_deg) . shear(shear_x_deg, shear_y_deg) . scale about
    (cx, cy), then a shift (translate_x, translate_y) in pixels. The rotation is
    [[cos, -sin], [sin, cos]] in (x, y) with y pointing down, so a positive angle turns the
    image clockwise on screen; the shear is [[1, tan(shear_x)], [tan(shear_y), 1]]."""
    cos, sin = math.cos(math.radians(angle_deg)), math.sin(math.radians(angle_deg))
    shx, shy = math.tan(math.radians(shear_x_deg)), math.tan(math.radians(shear_y_deg))
    a, b = scale * (cos - sin * shy), scale * (cos * shx - sin)
    c, d = scale * (sin + cos * shy), scale * (sin * shx + cos)
    e = cx - a * cx - b * cy + translate_x
    f = cy - c * cx - d * cy + translate_y
    return _matrix([[a, b, e], [c, d, f], [0.0, 0.0, 1.0]], device)


def _solve(a, b):
    """Solves a x = b (lists, Gaussian elimination with partial pivoting) in float64."""
    n = len(a)
    m = [list(map(float, row)) + [float(v)] for row, v in zip(a, b)]
    for col in range(n):
        pivot = max(range(col, n), key=lambda r: abs(m[r][col]))
        if abs(m[pivot][col]) < 1e-12:
            raise ValueError("perspective_matrix: the points are degenerate (three of them on a line), no "
                             "homography maps them")
        m[col], m[pivot] = m[pivot], m[col]
        for r in range(n):
            if r != col:
                f = m[r][col] / m[col][col]
                m[r] = [x - f * y for x, y in zip(m[r], m[col])]
    return [m[i][n] / m[i][i] for i in range(n)]


def _points_list(pts, where, name):
    if isinstance(pts, lucid.Tensor):
        pts = pts.tolist()
    if len(pts) != 4 or not all(len(p) == 2 and all(is_number(v) for v in p) for p in pts):
        raise ValueError(f"{where}: {name} should be four (x, y) points, got {pts!r}")
    return [(float(x), float(y)) for x, y in pts]


def perspective_matrix(src, dst, device=None):
    """The 3x3 homography mapping the four points src onto dst ((x, y) each, in order)."""
    src, dst = _points_list(src, "perspective_matrix", "src"), _points_list(dst, "perspective_matrix", "dst")
    rows, rhs = [], []
    for (sx, sy), (dx, dy) in zip(src, dst):
        rows.append([sx, sy, 1, 0, 0, 0, -dx * sx, -dx * sy])
        rows.append([0, 0, 0, sx, sy, 1, -dy * sx, -dy * sy])
        rhs += [dx, dy]
    h = _solve(rows, rhs)
    return _matrix([h[0:3], h[3:6], [h[6], h[7], 1.0]], device)


def _matrix_rows(matrix, where):
    """matrix (3x3, or 2x3 affine) as three lists of floats."""
    rows = matrix.tolist() if isinstance(matrix, lucid.Tensor) else [list(r) for r in matrix]
    if len(rows) == 2:
        rows = rows + [[0.0, 0.0, 1.0]]
    if len(rows) != 3 or any(len(r) != 3 for r in rows):
        raise ValueError(f"{where}: matrix should be 3x3 (or a 2x3 affine matrix), got {rows!r}")
    return [[float(v) for v in r] for r in rows]


def _inverse(rows, where):
    (a, b, c), (d, e, f), (g, h, i) = rows
    det = a * (e * i - f * h) - b * (d * i - f * g) + c * (d * h - e * g)
    if abs(det) < 1e-12:
        raise ValueError(f"{where}: the matrix is singular, it cannot be inverted to sample the input")
    return [[(e * i - f * h) / det, (c * h - b * i) / det, (b * f - c * e) / det],
            [(f * g - d * i) / det, (a * i - c * g) / det, (c * d - a * f) / det],
            [(d * h - e * g) / det, (b * g - a * h) / det, (a * e - b * d) / det]]


def affine_points(pts, matrix):
    """Points [N, 2] (x, y) mapped by a 3x3 matrix (with the perspective divide) or a 2x3
    affine one."""
    if not isinstance(pts, lucid.Tensor) or pts.ndim != 2 or pts.shape[1] != 2:
        raise ValueError(f"affine_points: pts should be a tensor [N, 2], got "
                         f"{list(pts.shape) if isinstance(pts, lucid.Tensor) else type(pts).__name__}")
    m = _matrix_rows(matrix, "affine_points")
    x, y = pts[:, 0], pts[:, 1]
    w = x * m[2][0] + y * m[2][1] + m[2][2]
    return lucid.stack([(x * m[0][0] + y * m[0][1] + m[0][2]) / w, (x * m[1][0] + y * m[1][1] + m[1][2]) / w], 1)


def affine_theta(matrix, in_hw, out_hw):
    """affine_grid's theta [1, 2, 3] (align_corners=True) for the forward affine pixel
    matrix taking an in_hw image to an out_hw one."""
    m = _matrix_rows(matrix, "affine_theta")
    if abs(m[2][0]) > 1e-12 or abs(m[2][1]) > 1e-12:
        raise ValueError("affine_theta: matrix has a perspective row, affine_grid can only take affine maps; "
                         "use warp_affine, which takes homographies")
    (ih, iw), (oh, ow) = in_hw, out_hw

    def to_pixels(h, w):  # normalised (align_corners=True) -> pixel index
        return [[(w - 1) / 2, 0, (w - 1) / 2], [0, (h - 1) / 2, (h - 1) / 2], [0, 0, 1]]

    def mul(p, q):
        return [[sum(p[i][k] * q[k][j] for k in range(3)) for j in range(3)] for i in range(3)]
    theta = mul(mul(_inverse(to_pixels(ih, iw), "affine_theta"), _inverse(m, "affine_theta")), to_pixels(oh, ow))
    device = matrix.device if isinstance(matrix, lucid.Tensor) else None
    return _matrix(theta[:2], device).reshape(1, 2, 3)


# ---- sampling ----------------------------------------------------------------------------------
def _grid_mode(mode, where):
    mode = as_interpolation(mode, where)
    return "nearest" if mode == Interpolation.NEAREST else "bicubic" if mode == Interpolation.BICUBIC else "bilinear"


def sample_at(img, sx, sy, mode="bilinear", border_mode=0, fill=0.0, where="warp"):
    """img [..., C, H, W] sampled at pixel coordinates sx, sy ([oh, ow] tensors, or
    [N, oh, ow] for one map per image of the batch)."""
    _check_float_tensor(img, where)
    gmode, code = _grid_mode(mode, where), border_code(border_mode, where)
    x, restore = as_nchw(img)
    n, _, h, w = x.shape
    sx, sy = sx.to(x.dtype), sy.to(x.dtype)
    if code == 3:  # wrap: coordinates modulo the size, on a copy with the first row / column appended
        x = _F.pad(x, (0, 1, 0, 1), mode="circular")
        sx, sy = sx - w * lucid.floor(sx / w), sy - h * lucid.floor(sy / h)
        gw, gh, padding, corners = w + 1, h + 1, "border", True
    elif code == 4 and h > 1 and w > 1:  # reflect about the edge pixels' centres
        gw, gh, padding, corners = w, h, "reflection", True
    else:  # reflect about the image edges, replicate, or constant
        gw, gh, corners = w, h, False
        padding = {0: "zeros", 1: "border", 2: "reflection"}.get(code, "border")
    if corners:
        gx, gy = 2 * sx / (gw - 1) - 1, 2 * sy / (gh - 1) - 1
    else:
        gx, gy = (2 * sx + 1) / gw - 1, (2 * sy + 1) / gh - 1
    grid = lucid.stack([gx, gy], -1)
    grid = grid.expand(n, *grid.shape[-3:]) if grid.ndim == 3 else grid
    out = _F.grid_sample(x, grid, mode=gmode, padding_mode=padding, align_corners=corners)
    if code == 0 and fill != 0:
        # How much of each output pixel came from inside the image; the rest is fill.
        inside = _F.grid_sample(lucid.ones(n, 1, h, w, dtype=x.dtype, device=x.device), grid, mode=gmode,
                                padding_mode="zeros", align_corners=False)
        out = out + float(fill) * (1 - inside)
    return restore(out)


def _pixel_grid(oh, ow, dtype, device):
    ys = lucid.arange(oh, dtype=dtype, device=device).reshape(oh, 1).expand(oh, ow)
    xs = lucid.arange(ow, dtype=dtype, device=device).reshape(1, ow).expand(oh, ow)
    return xs, ys


def warp_affine(img, matrix, out_hw, *, mode="bilinear", fill=0.0, border_mode=0):
    """img [..., C, H, W] warped by the forward pixel matrix (3x3 affine or homography, or
    2x3) onto an out_hw canvas: output pixel p takes the input at matrix^-1 p. Outside the
    input: fill (border_mode 0) or border_mode's rule."""
    _check_float_tensor(img, "warp_affine")
    oh, ow = (check_positive_int(int(v), "warp_affine", "out_hw") for v in out_hw)
    inv = _inverse(_matrix_rows(matrix, "warp_affine"), "warp_affine")
    xs, ys = _pixel_grid(oh, ow, img.dtype, img.device)
    den = xs * inv[2][0] + ys * inv[2][1] + inv[2][2]
    sx = (xs * inv[0][0] + ys * inv[0][1] + inv[0][2]) / den
    sy = (xs * inv[1][0] + ys * inv[1][1] + inv[1][2]) / den
    return sample_at(img, sx, sy, mode, border_mode, fill, "warp_affine")


def remap(img, dx, dy, *, mode="bilinear", border_mode=4):
    """Backward warp by a displacement field: out(y, x) = img(x + dx(y, x), y + dy(y, x)),
    dx and dy [H, W] in pixels (as cv2.remap); outside the image reflect_101 by default."""
    _check_float_tensor(img, "remap")
    h, w = int(img.shape[-2]), int(img.shape[-1])
    for name, d in (("dx", dx), ("dy", dy)):
        if not isinstance(d, lucid.Tensor) or list(d.shape) != [h, w]:
            raise ValueError(f"remap: {name} should be a tensor [H, W] = {[h, w]}, got "
                             f"{list(d.shape) if isinstance(d, lucid.Tensor) else type(d).__name__}")
    xs, ys = _pixel_grid(h, w, img.dtype, img.device)
    return sample_at(img, xs + dx.to(img.device), ys + dy.to(img.device), mode, border_mode, 0.0, "remap")


def sample_field_at_points(field, pts, canvas_hw):
    """A field [H, W] bilinearly sampled at points [N, 2] (x, y in pixel-index
    coordinates), as [N, 1]; points outside take the nearest border value."""
    h, w = canvas_hw
    if not isinstance(field, lucid.Tensor) or list(field.shape) != [h, w]:
        raise ValueError(f"sample_field_at_points: field should be a tensor [H, W] = {[h, w]}")
    if pts.shape[0] == 0:
        return lucid.zeros(0, 1, dtype=field.dtype, device=field.device)
    out = sample_at(field.reshape(1, 1, h, w).to(pts.dtype), pts[:, 0].reshape(1, -1), pts[:, 1].reshape(1, -1),
                    "bilinear", 1, 0.0, "sample_field_at_points")
    return out.reshape(-1, 1)


# ---- convolution ------------------------------------------------------------------------------
def reflect101_index(n, lo, hi):
    """Indices of a size-n dim padded by lo / hi with OpenCV's reflect_101 rule (repeating
    as often as needed)."""
    period = max(2 * (n - 1), 1)

    def source(i):
        i = i % period
        return i if i < n else period - i
    return [source(i) for i in range(-lo, n + hi)]


def pad_reflect101(x, left, right, top, bottom):
    h, w = x.shape[-2], x.shape[-1]
    if left or right:
        x = x.index_select(x.ndim - 1, lucid.tensor(reflect101_index(w, left, right), device=x.device))
    if top or bottom:
        x = x.index_select(x.ndim - 2, lucid.tensor(reflect101_index(h, top, bottom), device=x.device))
    return x


def _kernel_tensor(kernel2d, where):
    k = kernel2d if isinstance(kernel2d, lucid.Tensor) else lucid.tensor(kernel2d, dtype=lucid.float32)
    if k.ndim != 2 or k.shape[0] < 1 or k.shape[1] < 1:
        raise ValueError(f"{where}: kernel should be 2-D [kh, kw], got shape {list(k.shape)}")
    return k


def depthwise_conv2d(img, kernel2d):
    """Every channel of img [..., C, H, W] filtered by kernel2d (a [kh, kw] tensor or nested
    list; correlation, as cv2.filter2D, anchored at the centre), same size out, borders
    reflect_101."""
    _check_float_tensor(img, "depthwise_conv2d")
    k = _kernel_tensor(kernel2d, "depthwise_conv2d").to(img.dtype).to(img.device)
    kh, kw = k.shape
    x, restore = as_nchw(img)
    c = x.shape[1]
    x = pad_reflect101(x, kw // 2, kw - 1 - kw // 2, kh // 2, kh - 1 - kh // 2)
    weight = k.reshape(1, 1, kh, kw).expand(c, 1, kh, kw)
    return restore(_F.conv2d(x, weight, groups=c))


def gaussian_kernel1d(sigma, ksize):
    half = ksize // 2
    values = [math.exp(-((i - half) ** 2) / (2 * sigma * sigma)) for i in range(ksize)]
    total = sum(values)
    return [v / total for v in values]


def gaussian_blur(img, sigma, ksize=None):
    """Separable Gaussian blur of img [..., C, H, W] with standard deviation sigma (pixels)
    over a ksize-wide kernel (default 2 * round(3 sigma) + 1; an even size is made odd),
    borders reflect_101."""
    if not is_number(sigma) or sigma <= 0:
        raise ValueError(f"gaussian_blur: sigma should be a positive number, got {sigma!r}")
    if ksize is None:
        ksize = int(2 * round(3 * sigma) + 1)
    check_positive_int(ksize, "gaussian_blur", "ksize")
    ksize += 1 - ksize % 2
    row = gaussian_kernel1d(sigma, ksize)
    out = depthwise_conv2d(img, [row])
    return depthwise_conv2d(out, [[v] for v in row])
