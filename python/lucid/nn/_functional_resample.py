"""Resampling: interpolate / upsample, grid_sample, affine_grid, pixel and channel shuffles.

Everything here is a composition of differentiable engine ops, so backward (and double
backward) come from the engine:

* interpolate is separable in every mode torch has for it (nearest, nearest-exact,
  linear/bilinear/trilinear, bicubic, area = adaptive average pooling, and the
  antialiased bilinear/bicubic): each spatial dim is resampled in turn by a short list
  of "taps", out = sum_k w_k * x.index_select(d, idx_k), whose indices and weights are
  computed here in Python with the formulas of ATen's CPU kernels (UpSample.h,
  UpSampleKernel.cpp), including their float32 arithmetic where the index rounding
  depends on it. For float32/float64 (CPU and GPU) the engine applies all taps of a dim in
  one threaded pass (_C._resample_taps, csrc/ops/resample.h, whose VJP is its adjoint);
  other dtypes use index_select + products, whose backward is index_add.
* grid_sample and affine_grid live in _functional_grid.py (exported from here).
"""

import builtins as _b
import math
import struct
import warnings

from .. import _C, _limits

__all__ = ["interpolate", "upsample", "upsample_nearest", "upsample_bilinear", "grid_sample", "affine_grid",
           "pixel_shuffle", "pixel_unshuffle", "channel_shuffle", "native_channel_shuffle"]


def _f32(x):
    """x rounded to float32, as the C++ kernels compute their float indices."""
    return struct.unpack("f", struct.pack("f", x))[0]


def _index(values, device):
    from .._creation import tensor
    from .._dtype import int64
    return tensor(values, dtype=int64, device=device)


# ---- tap lists: (indices, weights or None) for one spatial dim -------------------------------------------
def _scale_value(scale, isz, osz, f32):
    """compute_scales_value: 1/scale when a positive scale_factor was given, else in/out."""
    if scale is not None and scale > 0:
        v = 1.0 / scale
    else:
        v = _f32(float(isz)) / osz if f32 else isz / osz
    return _f32(v) if f32 else v


def _nearest_taps(isz, osz, scale, exact, f32, separable):
    """Nearest source indices, as torch's CPU kernels compute them (they differ by path):
    * separable (1 spatial dim: ATen's generic separable kernel), in the input's opmath
      type: nearest floorf(scale * i); nearest-exact floorf(max(scale * (i + 0.5) - 0.5,
      0) + 0.5) with the multiply-add fused;
    * otherwise nearest_idx / nearest_exact_idx (UpSample.h), with a float scale:
      nearest copies when out == in and halves when out == 2 * in, else
      floorf(i * scale); nearest-exact floorf((i + 0.5) * scale)."""
    if separable:
        r = _f32 if f32 else (lambda v: v)
        s = _scale_value(scale, isz, osz, f32)
        if exact:
            idx = [math.floor(_f32(r(_source_index(s, i, False, False, f32, fused=True) + 0.5))) for i in range(osz)]
        else:
            idx = [math.floor(_f32(r(s * i))) for i in range(osz)]
    else:
        s = _scale_value(scale, isz, osz, True)
        if exact:
            idx = [math.floor(_f32((i + 0.5) * s)) for i in range(osz)]
        elif osz == isz:
            idx = list(range(osz))
        elif osz == 2 * isz:
            idx = [i >> 1 for i in range(osz)]
        else:
            idx = [math.floor(_f32(_f32(float(i)) * s)) for i in range(osz)]
    return [([_b.min(j, isz - 1) for j in idx], None)]


def _fma(a, b, c):
    """a * b + c with one rounding (to double): ATen's per-ISA kernels are compiled with
    fused multiply-adds, which decide some floor() ties. Dekker's exact product + fsum."""
    p = a * b
    if not math.isfinite(p):
        return p + c
    split = 134217729.0  # 2^27 + 1
    ta, tb = a * split, b * split
    ah, bh = ta - (ta - a), tb - (tb - b)
    al, bl = a - ah, b - bh
    err = ((ah * bh - p) + ah * bl + al * bh) + al * bl
    return math.fsum((p, err, c))


def _pixel_scale(isz, osz, align_corners, scale, f32):
    """area_pixel_compute_scale."""
    if align_corners:
        if osz <= 1:
            return 0.0
        return _f32(_f32(float(isz - 1)) / (osz - 1)) if f32 else (isz - 1) / (osz - 1)
    return _scale_value(scale, isz, osz, f32)


def _source_index(s, i, align_corners, cubic, f32, fused=False):
    """area_pixel_compute_source_index: scale * (i + 0.5) - 0.5 (align_corners: scale * i).
    fused: with one rounding, as torch's nearest-exact indices come out (an FMA); its
    linear and cubic weights match the two-rounding form best."""
    r = (lambda v: _f32(v)) if f32 else (lambda v: v)
    if align_corners:
        return r(s * i)
    src = r(_fma(s, r(i + 0.5), -0.5)) if fused else r(r(s * r(i + 0.5)) - 0.5)
    return 0.0 if (not cubic and src < 0) else src


def _guard(real, isz, f32):
    """guard_index_and_lambda: floor index (at most the last one) and its fractional part in [0, 1]."""
    idx = _b.min(math.floor(real), isz - 1)
    lam = real - idx
    if f32:
        lam = _f32(lam)
    return idx, _b.min(_b.max(lam, 0.0), 1.0)


def _linear_taps(isz, osz, scale, align_corners, f32):
    s = _pixel_scale(isz, osz, align_corners, scale, f32)
    i0, i1, w0, w1 = [], [], [], []
    for i in range(osz):
        if osz == isz:
            a, b, l0, l1 = i, i, 1.0, 0.0
        else:
            a, l1 = _guard(_source_index(s, i, align_corners, False, f32), isz, f32)
            b = a + (1 if a < isz - 1 else 0)
            l0 = 1.0 - l1
        i0.append(a)
        i1.append(b)
        w0.append(l0)
        w1.append(l1)
    return [(i0, w0), (i1, w1)]


_CUBIC_A = -0.75


def _cubic_coeffs(t):
    """get_cubic_upsample_coefficients (Keys' kernel with A = -0.75), as plain floats."""
    a = _CUBIC_A

    def c1(x):
        return ((a + 2) * x - (a + 3)) * x * x + 1

    def c2(x):
        return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a
    return [c2(t + 1.0), c1(t), c1(1.0 - t), c2(2.0 - t)]


def _cubic_taps(isz, osz, scale, align_corners, f32):
    s = _pixel_scale(isz, osz, align_corners, scale, f32)
    taps = [([], []) for _ in range(4)]
    for i in range(osz):
        base, t = _guard(_source_index(s, i, align_corners, True, f32), isz, f32)
        for j, w in enumerate(_cubic_coeffs(t)):
            taps[j][0].append(_b.min(_b.max(base - 1 + j, 0), isz - 1))
            taps[j][1].append(w)
    return taps


def _aa_filter(mode):
    if mode == "bilinear":
        return lambda x: 1.0 - abs(x) if abs(x) < 1.0 else 0.0
    a = -0.5  # the antialiased bicubic filter uses Keys' a = -0.5 (as PIL), not -0.75

    def cubic(x):
        x = abs(x)
        if x < 1.0:
            return ((a + 2) * x - (a + 3)) * x * x + 1
        if x < 2.0:
            return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a
        return 0.0
    return cubic


def _aa_taps(isz, osz, scale, align_corners, mode, f32):
    """Antialiased taps (ATen's _compute_weights_aa): when downsampling, the filter is
    stretched by the scale, so every input pixel under it contributes; weights sum to 1."""
    r = (lambda v: _f32(v)) if f32 else (lambda v: v)
    s = _pixel_scale(isz, osz, align_corners, scale, f32)
    interp = 2 if mode == "bilinear" else 4
    support = r((interp * 0.5) * s) if s >= 1.0 else interp * 0.5
    kmax = int(math.ceil(support)) * 2 + 1
    invscale = r(1.0 / s) if s >= 1.0 else 1.0
    filt = _aa_filter(mode)
    taps = [([], []) for _ in range(kmax)]
    for i in range(osz):
        center = r(s * (i + 0.5))
        xmin = _b.max(int(center - support + 0.5), 0)
        xsize = _b.min(int(center + support + 0.5), isz) - xmin
        xsize = _b.min(_b.max(xsize, 0), kmax)
        ws = [r(filt(r((j + xmin - center + 0.5) * invscale))) for j in range(xsize)]
        total = sum(ws)
        if total != 0.0:
            ws = [r(w / total) for w in ws]
        for j in range(kmax):
            taps[j][0].append(_b.min(xmin + j, isz - 1) if j < xsize else xmin)
            taps[j][1].append(ws[j] if j < xsize else 0.0)
    return taps


def _area_taps(isz, osz):
    """Adaptive average pooling along one dim: window [floor(i*in/out), ceil((i+1)*in/out)),
    as K taps (K = the longest window) whose weight is 1/len inside the window and 0 past it."""
    starts = [(i * isz) // osz for i in range(osz)]
    ends = [-((-(i + 1) * isz) // osz) for i in range(osz)]
    k = _b.max(e - s for s, e in zip(starts, ends))
    taps = []
    for j in range(k):
        idx = [_b.min(s + j, e - 1) for s, e in zip(starts, ends)]
        w = [1.0 / (e - s) if j < e - s else 0.0 for s, e in zip(starts, ends)]
        taps.append((idx, w))
    return taps


def _apply_taps(x, d, taps):
    from .._creation import tensor
    from .._shape import index_select
    from .._dtype import float32, float64
    if x.dtype in (float32, float64):
        # the engine's fused kernel (csrc/ops/resample.h): one pass for all taps
        osz = len(taps[0][0])
        idx = _index([i for ids, _ in taps for i in ids], x.device).reshape(len(taps), osz)
        w = [v for _, ws in taps for v in (ws if ws is not None else [1.0] * osz)]
        return _C._resample_taps(x, d, idx, tensor(w, dtype=x.dtype, device=x.device).reshape(len(taps), osz))
    out = None
    for idx, w in taps:
        v = index_select(x, d, _index(idx, x.device))
        if w is not None:
            shape = [1] * x.ndim
            shape[d] = len(w)
            v = v * tensor(w, dtype=x.dtype, device=x.device).reshape(shape)
        out = v if out is None else out + v
    return out


def _resample(input, osizes, scales, mode, align_corners, antialias=False):
    nsp = len(osizes)
    # (the per-position taps are Python lists)
    _limits.check_fits(list(input.shape[:input.ndim - nsp]) + list(osizes), f"interpolate(mode='{mode}') output",
                       _b.max(_limits.PY_LIST_BYTES, input.element_size()))
    shape = list(input.shape[:input.ndim - nsp]) + list(osizes)
    if math.prod(shape) == 0:  # nothing to compute (and no taps: an empty batch may ask for 2^32 positions)
        out = input.new_zeros(shape)
        return out + input.sum() * 0 if input.requires_grad else out
    f32 = input.dtype.itemsize < 8  # float32/half/bfloat16 kernels compute in float
    low = input.dtype.is_floating_point and input.dtype.itemsize == 2 and mode not in ("nearest", "nearest-exact")
    out = input.float() if low else input  # half/bfloat16: accumulate in float, as ATen, round once
    # last spatial dim first: the order ATen's separable kernels accumulate in
    for k in reversed(range(nsp)):
        d = input.ndim - nsp + k
        isz, osz, sc = input.shape[d], osizes[k], scales[k]
        if mode in ("nearest", "nearest-exact"):
            taps = _nearest_taps(isz, osz, sc, mode == "nearest-exact", f32, nsp == 1)
        elif mode == "area":
            taps = _area_taps(isz, osz)
        elif antialias:
            if osz == isz:  # ATen's antialiased kernel leaves a dim of unchanged size alone
                continue
            taps = _aa_taps(isz, osz, sc, align_corners, mode, f32)
        elif mode == "bicubic":
            taps = _cubic_taps(isz, osz, sc, align_corners, f32)
        else:
            taps = _linear_taps(isz, osz, sc, align_corners, f32)
        out = _apply_taps(out, d, taps)
    return out.to(input.dtype) if low else out


_LINEAR_FOR_DIM = {3: "linear", 4: "bilinear", 5: "trilinear"}


def interpolate(input, size=None, scale_factor=None, mode="nearest", align_corners=None,
                recompute_scale_factor=None, antialias=False):
    """torch.nn.functional.interpolate for 3-D, 4-D and 5-D inputs (N, C, *spatial)."""
    from .._tensor import Tensor
    if not isinstance(input, Tensor):
        raise TypeError(f"interpolate(): argument 'input' must be Tensor, not {type(input).__name__}")
    if mode in ("nearest", "area", "nearest-exact"):
        if align_corners is not None:
            raise ValueError("align_corners option can only be set with the interpolating modes: "
                             "linear | bilinear | bicubic | trilinear")
    elif align_corners is None:
        align_corners = False
    dim = input.dim() - 2
    if size is not None and scale_factor is not None:
        raise ValueError("only one of size or scale_factor should be defined")
    if size is not None:
        scale_factors = None
        if isinstance(size, (list, tuple)):
            if len(size) != dim:
                raise ValueError("Input and output must have the same number of spatial dimensions, but got input "
                                 f"with spatial dimensions of {list(input.shape[2:])} and output size of {size}. "
                                 "Please provide input tensor in (N, C, d1, d2, ...,dK) format and output size in "
                                 "(o1, o2, ...,oK) format.")
            if not all(isinstance(s, int) and not isinstance(s, bool) for s in size):
                raise TypeError("expected size to be one of int or Tuple[int] or Tuple[int, int] or "
                                f"Tuple[int, int, int], but got size with types {[type(s) for s in size]}")
            output_size = list(size)
        else:
            output_size = [size] * dim
    elif scale_factor is not None:
        output_size = None
        if isinstance(scale_factor, (list, tuple)):
            if len(scale_factor) != dim:
                raise ValueError("Input and scale_factor must have the same number of spatial dimensions, but got "
                                 f"input with spatial dimensions of {list(input.shape[2:])} and scale_factor of "
                                 f"shape {scale_factor}. Please provide input tensor in (N, C, d1, d2, ...,dK) "
                                 "format and scale_factor in (s1, s2, ...,sK) format.")
            scale_factors = [float(s) for s in scale_factor]
        else:
            scale_factors = [float(scale_factor)] * dim
    else:
        raise ValueError("either size or scale_factor should be defined")
    if recompute_scale_factor and size is not None:
        raise ValueError("recompute_scale_factor is not meaningful with an explicit size.")
    if mode == "area" and output_size is None:
        recompute_scale_factor = True
    if recompute_scale_factor:
        output_size = [math.floor(float(input.shape[i + 2]) * scale_factors[i]) for i in range(dim)]
        scale_factors = None
    if antialias:
        if not (mode in ("bilinear", "bicubic") and input.ndim == 4):
            raise ValueError("Anti-alias option is restricted to bilinear, bicubic, and lanczos modes and requires "
                             "a 4-D tensor as input")

    modes = ("nearest", "linear", "bilinear", "bicubic", "trilinear", "area", "nearest-exact")
    if mode not in modes or input.dim() not in (3, 4, 5):
        raise NotImplementedError(f"Input Error: Only 3D, 4D and 5D input Tensors supported (got {input.dim()}D) "
                                  "for the modes: nearest | linear | bilinear | bicubic | trilinear | area | "
                                  f"nearest-exact (got {mode})")
    if mode in ("linear", "bilinear", "trilinear") and mode != _LINEAR_FOR_DIM[input.dim()]:
        need = {"linear": 3, "bilinear": 4, "trilinear": 5}[mode]
        raise NotImplementedError(f"Got {input.dim()}D input, but {mode} mode needs {need}D input")
    if mode == "bicubic" and input.dim() != 4:
        raise NotImplementedError(f"Got {input.dim()}D input, but bicubic mode needs 4D input")

    # upsample_compute_output_size: floor(in * scale) when a scale factor is used directly
    if output_size is None:
        output_size = [math.floor(float(input.shape[i + 2]) * scale_factors[i]) for i in range(dim)]
    scales = scale_factors if scale_factors is not None else [None] * dim
    if mode == "area" and all(s >= 0 for s in output_size) and any(s == 0 for s in output_size):
        # adaptive average pooling to an empty size: an empty result (still in the graph)
        out = input
        for k, s in enumerate(output_size):
            out = out.narrow(2 + k, 0, _b.min(s, out.shape[2 + k]))
        return out * 1
    if any(s <= 0 for s in output_size):
        raise RuntimeError(f"Input and output sizes should be greater than 0, but got input "
                           f"({', '.join(map(str, input.shape[2:]))}) and output "
                           f"({', '.join(map(str, output_size))})")
    if any(s == 0 for s in input.shape[1:]):
        raise RuntimeError(f"Non-empty {dim + 2}D data tensor expected but got a tensor with sizes "
                           f"{list(input.shape)}")
    if mode not in ("nearest", "nearest-exact") and not input.dtype.is_floating_point:
        raise RuntimeError(f"{mode} interpolation is not implemented for {input.dtype}: the input must be a "
                           "floating-point tensor")
    return _resample(input, output_size, scales, mode, align_corners, antialias)


def upsample(input, size=None, scale_factor=None, mode="nearest", align_corners=None):
    """Deprecated alias of interpolate (torch.nn.functional.upsample)."""
    warnings.warn("`nn.functional.upsample` is deprecated. Use `nn.functional.interpolate` instead.", stacklevel=2)
    return interpolate(input, size, scale_factor, mode, align_corners)


def upsample_nearest(input, size=None, scale_factor=None):
    warnings.warn("`nn.functional.upsample_nearest` is deprecated. Use `nn.functional.interpolate` instead.",
                  stacklevel=2)
    return interpolate(input, size, scale_factor, mode="nearest")


def upsample_bilinear(input, size=None, scale_factor=None):
    warnings.warn("`nn.functional.upsample_bilinear` is deprecated. Use `nn.functional.interpolate` instead.",
                  stacklevel=2)
    return interpolate(input, size, scale_factor, mode="bilinear", align_corners=True)


# ---- pixel and channel shuffles ------------------------------------------------------------------------
def pixel_shuffle(input, upscale_factor):
    r = int(upscale_factor)
    if input.dim() < 3:
        raise RuntimeError(f"pixel_shuffle expects input to have at least 3 dimensions, but got input with "
                           f"{input.dim()} dimension(s)")
    if r <= 0:
        raise RuntimeError(f"pixel_shuffle expects a positive upscale_factor, but got {r}")
    c, h, w = input.shape[-3:]
    if c % (r * r):
        raise RuntimeError(f"pixel_shuffle expects its input's 'channel' dimension to be divisible by the square "
                           f"of upscale_factor, but input.size(-3)={c} is not divisible by {r * r}")
    lead = list(input.shape[:-3])
    nb = len(lead)
    x = input.reshape(lead + [c // (r * r), r, r, h, w])
    x = x.permute(list(range(nb)) + [nb, nb + 3, nb + 1, nb + 4, nb + 2])
    return x.reshape(lead + [c // (r * r), h * r, w * r])


def pixel_unshuffle(input, downscale_factor):
    r = int(downscale_factor)
    if input.dim() < 3:
        raise RuntimeError(f"pixel_unshuffle expects input to have at least 3 dimensions, but got input with "
                           f"{input.dim()} dimension(s)")
    if r <= 0:
        raise RuntimeError(f"pixel_unshuffle expects a positive downscale_factor, but got {r}")
    c, h, w = input.shape[-3:]
    if h % r:
        raise RuntimeError(f"pixel_unshuffle expects height to be divisible by downscale_factor, but input.size(-2)"
                           f"={h} is not divisible by {r}")
    if w % r:
        raise RuntimeError(f"pixel_unshuffle expects width to be divisible by downscale_factor, but input.size(-1)"
                           f"={w} is not divisible by {r}")
    lead = list(input.shape[:-3])
    nb = len(lead)
    x = input.reshape(lead + [c, h // r, r, w // r, r])
    x = x.permute(list(range(nb)) + [nb, nb + 2, nb + 4, nb + 1, nb + 3])
    return x.reshape(lead + [c * r * r, h // r, w // r])


def channel_shuffle(input, groups):
    g = int(groups)
    if input.dim() < 3:
        raise RuntimeError(f"channel_shuffle expects input to have at least 3 dimensions, but got input with "
                           f"{input.dim()} dimension(s)")
    if g <= 0:
        raise RuntimeError(f"Number of groups to divide channels in must be positive. Value of groups:{g}")
    c = input.shape[1]
    if c % g:
        raise RuntimeError(f"Number of channels must be divisible by groups. Got {c} channels and {g} groups.")
    n, rest = input.shape[0], list(input.shape[2:])
    return input.reshape([n, g, c // g] + rest).transpose(1, 2).reshape([n, c] + rest)


native_channel_shuffle = channel_shuffle


from ._functional_grid import affine_grid, grid_sample  # noqa: E402,F401
