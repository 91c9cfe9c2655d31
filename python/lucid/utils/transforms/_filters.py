"""Upstream Lucid's filtering transforms (image only): blurs (Blur, MedianBlur, MotionBlur,
GaussianBlur, Defocus, ZoomBlur, Downscale) and sharpening / edge filters (Sharpen, Emboss,
UnsharpMask, RingingOvershoot). Kernels are correlated with reflect_101 borders (as
cv2.filter2D); images are float [C, H, W] / [B, C, H, W] in [0, 1].

Kernel sizes: blur_limit is an odd int k (giving the range (3, k)) or a (min, max) range;
sizes are drawn among the odd values of the range.
"""

import math

import lucid
from ._base import Interpolation, PhotometricTransform, is_number, randint, to_range, uniform
from ._functional_warp import depthwise_conv2d, gaussian_blur
from ._geometric import pad_border, resize_to


def _odd_range(value, where, minimum=3):
    lo, hi = (minimum, value) if isinstance(value, int) and not isinstance(value, bool) else tuple(value) \
        if isinstance(value, (tuple, list)) and len(value) == 2 else (None, None)
    if not all(isinstance(v, int) and not isinstance(v, bool) for v in (lo, hi)) or not 1 <= lo <= hi:
        raise ValueError(f"{where}: blur_limit should be an int >= {minimum} or a (min, max) pair of positive ints, "
                         f"got {value!r}")
    lo += 1 - lo % 2
    hi -= 1 - hi % 2
    if lo > hi:
        raise ValueError(f"{where}: blur_limit {value!r} holds no odd kernel size")
    return lo, hi


def _draw_odd(limits):
    lo, hi = limits
    return lo + 2 * randint(0, (hi - lo) // 2 + 1)


class _Kernel(PhotometricTransform):
    """Base of the single-kernel filters: params = the kernel (nested lists)."""

    def _apply_image(self, img, kernel):
        return depthwise_conv2d(img, kernel)


class Blur(_Kernel):
    """Box (mean) filter of a random odd size in blur_limit."""

    def __init__(self, blur_limit=7, p=0.5):
        super().__init__(p=p)
        self.blur_limit = _odd_range(blur_limit, "Blur")

    def make_params(self, img):
        k = _draw_odd(self.blur_limit)
        return [[1.0 / (k * k)] * k for _ in range(k)]

    def _args_repr(self):
        return f"blur_limit={self.blur_limit}, p={self.p}"


class MedianBlur(PhotometricTransform):
    """Median of each k x k neighbourhood (k a random odd size in blur_limit; borders
    replicated, as cv2.medianBlur)."""

    def __init__(self, blur_limit=7, p=0.5):
        super().__init__(p=p)
        self.blur_limit = _odd_range(blur_limit, "MedianBlur")

    def make_params(self, img):
        return _draw_odd(self.blur_limit)

    def _apply_image(self, img, k):
        r = k // 2
        h, w = img.shape[-2], img.shape[-1]
        padded = pad_border(img, r, r, r, r, 1, 0.0)
        windows = lucid.stack([padded[..., dy:dy + h, dx:dx + w] for dy in range(k) for dx in range(k)], 0)
        # Sorting along a contiguous last dim is the fast path (a strided median is ~3x slower).
        return lucid.sort(windows.movedim(0, -1).contiguous(), -1)[0][..., k * k // 2]

    def _args_repr(self):
        return f"blur_limit={self.blur_limit}, p={self.p}"


class MotionBlur(_Kernel):
    """A streak: the normalised kernel of a 1-pixel line through the centre of a k x k
    window (k a random odd size in blur_limit) at an angle uniform in [0, 180)."""

    def __init__(self, blur_limit=7, p=0.5):
        super().__init__(p=p)
        self.blur_limit = _odd_range(blur_limit, "MotionBlur")

    def make_params(self, img):
        k, angle = _draw_odd(self.blur_limit), math.radians(uniform(0.0, 180.0))
        kernel = [[0.0] * k for _ in range(k)]
        half = k // 2
        for t in range(-half, half + 1):
            kernel[int(round(half + t * math.sin(angle)))][int(round(half + t * math.cos(angle)))] = 1.0
        total = sum(map(sum, kernel))
        return [[v / total for v in row] for row in kernel]

    def _args_repr(self):
        return f"blur_limit={self.blur_limit}, p={self.p}"


def _default_sigma(k):
    """OpenCV's sigma for a kernel size k when sigma is 0."""
    return 0.3 * ((k - 1) * 0.5 - 1) + 0.8


class GaussianBlur(PhotometricTransform):
    """Gaussian blur with a random odd kernel size in blur_limit and sigma uniform in
    sigma_limit (v means (0, v)); sigma 0 uses OpenCV's 0.3 ((k - 1) / 2 - 1) + 0.8."""

    def __init__(self, blur_limit=(3, 7), sigma_limit=0.0, p=0.5):
        super().__init__(p=p)
        self.blur_limit = _odd_range(blur_limit, "GaussianBlur")
        self.sigma_limit = to_range(sigma_limit, "GaussianBlur", "sigma_limit", symmetric=False, low=0.0)

    def make_params(self, img):
        k = _draw_odd(self.blur_limit)
        sigma = uniform(*self.sigma_limit)
        return k, sigma if sigma > 0 else _default_sigma(k)

    def _apply_image(self, img, params):
        k, sigma = params
        return gaussian_blur(img, sigma, k)

    def _args_repr(self):
        return f"blur_limit={self.blur_limit}, sigma_limit={self.sigma_limit}, p={self.p}"


class Defocus(_Kernel):
    """Out-of-focus blur: the mean over a disc of radius r (an int uniform in radius; v
    means (1, v))."""

    def __init__(self, radius=(3, 10), p=0.5):
        super().__init__(p=p)
        lo, hi = (1, radius) if isinstance(radius, int) else tuple(radius)
        if not all(isinstance(v, int) and not isinstance(v, bool) for v in (lo, hi)) or not 1 <= lo <= hi:
            raise ValueError(f"Defocus: radius should be a positive int or a (min, max) pair of them, got {radius!r}")
        self.radius = (lo, hi)

    def make_params(self, img):
        r = randint(self.radius[0], self.radius[1] + 1)
        disc = [[1.0 if (i - r) ** 2 + (j - r) ** 2 <= r * r else 0.0 for j in range(2 * r + 1)]
                for i in range(2 * r + 1)]
        total = sum(map(sum, disc))
        return [[v / total for v in row] for row in disc]

    def _args_repr(self):
        return f"radius={self.radius}, p={self.p}"


class ZoomBlur(PhotometricTransform):
    """Radial blur of a zoom during the exposure (Albumentations' ZoomBlur): the average of
    the image and its centre zooms by 1, 1 + s, 1 + 2s, ... below a factor m, with m
    uniform in max_factor (v means (1, v)) and the step s in step_factor."""

    def __init__(self, max_factor=1.31, step_factor=(0.01, 0.03), p=0.5):
        super().__init__(p=p)
        self.max_factor = to_range(max_factor, "ZoomBlur", "max_factor", symmetric=False, offset=1.0, low=1.0)
        self.step_factor = to_range(step_factor, "ZoomBlur", "step_factor", symmetric=False, low=1e-6) \
            if not is_number(step_factor) else (float(step_factor),) * 2
        if self.step_factor[0] <= 0:
            raise ValueError(f"ZoomBlur: step_factor should be positive, got {step_factor!r}")

    def make_params(self, img):
        top, step = uniform(*self.max_factor), uniform(*self.step_factor)
        return [1.0 + i * step for i in range(int(math.ceil((top - 1.0) / step)))]

    def _apply_image(self, img, factors):
        h, w = img.shape[-2], img.shape[-1]
        total = lucid.zeros_like(img)
        for f in factors:
            zh, zw = max(h, int(math.ceil(h * f))), max(w, int(math.ceil(w * f)))
            top, left = (zh - h) // 2, (zw - w) // 2
            total = total + resize_to(img, (zh, zw), Interpolation.BILINEAR)[..., top:top + h, left:left + w]
        return ((img + total) / (len(factors) + 1)).clamp(0.0, 1.0)

    def _args_repr(self):
        return f"max_factor={self.max_factor}, step_factor={self.step_factor}, p={self.p}"


class Downscale(PhotometricTransform):
    """Shrinks by a factor uniform in [scale_min, scale_max] and enlarges back (nearest both
    ways), losing detail."""

    def __init__(self, scale_min=0.25, scale_max=0.25, p=0.5):
        super().__init__(p=p)
        if not (is_number(scale_min) and is_number(scale_max) and 0 < scale_min <= scale_max < 1):
            raise ValueError(f"Downscale: expected 0 < scale_min <= scale_max < 1, got {scale_min!r}, {scale_max!r}")
        self.scale_min, self.scale_max = float(scale_min), float(scale_max)

    def make_params(self, img):
        return uniform(self.scale_min, self.scale_max)

    def _apply_image(self, img, scale):
        h, w = img.shape[-2], img.shape[-1]
        small = resize_to(img, (max(1, int(round(h * scale))), max(1, int(round(w * scale)))), Interpolation.NEAREST)
        return resize_to(small, (h, w), Interpolation.NEAREST)

    def _args_repr(self):
        return f"scale_min={self.scale_min}, scale_max={self.scale_max}, p={self.p}"


_IDENTITY = [[0.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 0.0]]


def _mix(alpha, effect):
    return [[(1 - alpha) * a + alpha * e for a, e in zip(ra, re)] for ra, re in zip(_IDENTITY, effect)]


class Sharpen(_Kernel):
    """Blends the image with a sharpened one: kernel (1 - alpha) identity + alpha
    [[-1, -1, -1], [-1, 8 + lightness, -1], [-1, -1, -1]], clamped to [0, 1]."""

    def __init__(self, alpha=(0.2, 0.5), lightness=(0.5, 1.0), p=0.5):
        super().__init__(p=p)
        self.alpha = to_range(alpha, "Sharpen", "alpha", symmetric=False, low=0.0)
        self.lightness = to_range(lightness, "Sharpen", "lightness", symmetric=False, low=0.0)

    def make_params(self, img):
        a, light = uniform(*self.alpha), uniform(*self.lightness)
        return _mix(a, [[-1.0, -1.0, -1.0], [-1.0, 8.0 + light, -1.0], [-1.0, -1.0, -1.0]])

    def _apply_image(self, img, kernel):
        return super()._apply_image(img, kernel).clamp(0.0, 1.0)

    def _args_repr(self):
        return f"alpha={self.alpha}, lightness={self.lightness}, p={self.p}"


class Emboss(Sharpen):
    """Blends the image with an embossed one: kernel (1 - alpha) identity + alpha
    [[-1 - s, -s, 0], [-s, 1, s], [0, s, 1 + s]], s the strength; clamped to [0, 1]."""

    def __init__(self, alpha=(0.2, 0.5), strength=(0.2, 0.7), p=0.5):
        PhotometricTransform.__init__(self, p=p)
        self.alpha = to_range(alpha, "Emboss", "alpha", symmetric=False, low=0.0)
        self.strength = to_range(strength, "Emboss", "strength", symmetric=False, low=0.0)

    def make_params(self, img):
        a, s = uniform(*self.alpha), uniform(*self.strength)
        return _mix(a, [[-1.0 - s, -s, 0.0], [-s, 1.0, s], [0.0, s, 1.0 + s]])

    def _args_repr(self):
        return f"alpha={self.alpha}, strength={self.strength}, p={self.p}"


class UnsharpMask(PhotometricTransform):
    """Unsharp masking (Albumentations'): sharp = img + alpha (img - blur), blur Gaussian
    (odd size in blur_limit, sigma in sigma_limit, 0 meaning OpenCV's default); applied where
    |img - blur| exceeds threshold (0-255 scale), through a blurred mask so the edges of the
    effect are soft."""

    def __init__(self, blur_limit=(3, 7), sigma_limit=0.0, alpha=(0.2, 0.5), threshold=10, p=0.5):
        super().__init__(p=p)
        self.blur_limit = _odd_range(blur_limit, "UnsharpMask")
        self.sigma_limit = to_range(sigma_limit, "UnsharpMask", "sigma_limit", symmetric=False, low=0.0)
        self.alpha = to_range(alpha, "UnsharpMask", "alpha", symmetric=False, low=0.0)
        if not is_number(threshold) or not 0 <= threshold <= 255:
            raise ValueError(f"UnsharpMask: threshold should be in [0, 255], got {threshold!r}")
        self.threshold = float(threshold)

    def make_params(self, img):
        k = _draw_odd(self.blur_limit)
        sigma = uniform(*self.sigma_limit)
        return k, sigma if sigma > 0 else _default_sigma(k), uniform(*self.alpha)

    def _apply_image(self, img, params):
        k, sigma, alpha = params
        residual = img - gaussian_blur(img, sigma, k)
        mask = gaussian_blur((residual.abs() * 255 > self.threshold).to(img.dtype), sigma, k)
        return (img + alpha * residual * mask).clamp(0.0, 1.0)

    def _args_repr(self):
        return (f"blur_limit={self.blur_limit}, sigma_limit={self.sigma_limit}, alpha={self.alpha}, "
                f"threshold={self.threshold}, p={self.p}")


def _bessel_j1(x):
    """J1(x) = (1 / pi) integral_0^pi cos(t - x sin t) dt (Simpson's rule, 400 intervals)."""
    n = 400
    h = math.pi / n
    total = sum((1 if i in (0, n) else 4 if i % 2 else 2) * math.cos(i * h - x * math.sin(i * h)) for i in range(n + 1))
    return total * h / 3 / math.pi


def sinc_kernel(cutoff, k):
    """The k x k circular low-pass (2-D sinc) kernel with cutoff frequency cutoff (radians
    per pixel), normalised to sum 1 (the ringing filter of Real-ESRGAN / Albumentations)."""
    half = k // 2
    rows = []
    for i in range(k):
        row = []
        for j in range(k):
            r = math.hypot(i - half, j - half)
            row.append(cutoff * cutoff / (4 * math.pi) if r == 0 else cutoff * _bessel_j1(cutoff * r) / (2 * math.pi * r))
        rows.append(row)
    total = sum(map(sum, rows))
    return [[v / total for v in row] for row in rows]


class RingingOvershoot(_Kernel):
    """Ringing / overshoot artifacts: filtering with a 2-D sinc kernel of a random odd size in
    blur_limit and a cutoff uniform in [pi / 4, pi / 2]; clamped to [0, 1]."""

    def __init__(self, blur_limit=(7, 15), p=0.5):
        super().__init__(p=p)
        self.blur_limit = _odd_range(blur_limit, "RingingOvershoot")

    def make_params(self, img):
        return sinc_kernel(uniform(math.pi / 4, math.pi / 2), _draw_odd(self.blur_limit))

    def _apply_image(self, img, kernel):
        return super()._apply_image(img, kernel).clamp(0.0, 1.0)

    def _args_repr(self):
        return f"blur_limit={self.blur_limit}, p={self.p}"

