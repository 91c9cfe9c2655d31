"""Counting and the reductions that skip NaN, as torch's: bincount, histc, nansum,
nanmean. Built from the engine's ops (index_add, where, sum), so they run on either
device; bincount and histc read their range from the data (one host read) when they
must size their output by it, as torch does."""

import math

from . import _dtype as D


def bincount(input, weights=None, minlength=0):
    """How often each value 0..max(input) occurs in the 1-d non-negative integer input
    (weighted: the sum of the weights of its occurrences); at least minlength bins."""
    from ._creation import zeros
    if input.ndim != 1 or not _is_integral(input.dtype):
        if input.ndim == 1:  # (floating, complex, bool)
            raise NotImplementedError(f"\"bincount\" not implemented for '{_torch_name(input.dtype)}'")
        raise RuntimeError("bincount only supports 1-d non-negative integral inputs.")
    if minlength < 0:
        raise RuntimeError("minlength should be >= 0")
    if weights is not None and (weights.ndim != 1 or weights.shape[0] != input.shape[0]):
        raise RuntimeError("weights should be 1-d and have the same length as input")
    if input.numel() and int(input.min().item()) < 0:
        raise RuntimeError("bincount only supports 1-d non-negative integral inputs.")
    bins = max(int(minlength), int(input.max().item()) + 1 if input.numel() else 0)
    if weights is None:
        dtype, counted = D.int64, None
    else:  # as torch: float32 weights sum in float32, any others in float64
        dtype = D.float32 if weights.dtype == D.float32 else D.float64
        counted = weights.to(dtype)
    out = zeros(bins, dtype=dtype, device=input.device)
    if counted is None:
        counted = out.new_ones(input.shape[0])
    return out.index_add_(0, input.long(), counted)


def histc(input, bins=100, min=0, max=0):
    """A histogram of input's values in `bins` equal bins over [min, max] (over the
    data's range when both are 0); values outside, and NaN, are not counted."""
    if not input.dtype.is_floating_point:
        raise NotImplementedError(f"\"histc\" not implemented for '{_torch_name(input.dtype)}'")
    if bins <= 0:
        raise RuntimeError(f"torch.histogram(): bins must be > 0, but got {bins} for dimension 0")
    lo, hi = float(min), float(max)
    x = input.reshape(-1)
    if lo == hi and x.numel():
        lo, hi = float(x.min().item()), float(x.max().item())
    if not (math.isfinite(lo) and math.isfinite(hi)):
        raise RuntimeError(f"torch.histc: range of [{lo}, {hi}] is not finite")
    if lo == hi:
        lo, hi = lo - 1, hi + 1
    if lo > hi:
        raise RuntimeError("torch.histc: max must be larger than min")
    x = x[(x >= lo) & (x <= hi)]
    position = ((x.double() - lo) * bins / (hi - lo)).floor().long().clamp(0, bins - 1)
    return bincount(position, minlength=bins).to(input.dtype)


def nansum(input, dim=None, keepdim=False, *, dtype=None):
    """sum with NaN counted as zero."""
    kept = input.nan_to_num(nan=0.0, posinf=float("inf"), neginf=float("-inf")) \
        if input.dtype.is_floating_point else input
    return kept.sum(dim=dim, keepdim=keepdim, dtype=dtype) if dim is not None else kept.sum(dtype=dtype)


def nanmean(input, dim=None, keepdim=False, *, dtype=None):
    """mean over the values that are not NaN (NaN where there are none)."""
    if not input.dtype.is_floating_point:
        raise RuntimeError(f"nanmean(): expected input to have floating point or complex dtype but got "
                           f"{_torch_name(input.dtype)}")
    counted = (~input.isnan())
    total = nansum(input, dim, keepdim, dtype=dtype)
    count = counted.sum(dim=dim, keepdim=keepdim) if dim is not None else counted.sum()
    return total / count


def _is_integral(dtype):
    return not (dtype.is_floating_point or dtype.is_complex) and dtype != D.bool


def _torch_name(dtype):
    return {"float32": "Float", "float64": "Double", "float16": "Half", "bfloat16": "BFloat16",
            "int64": "Long", "int32": "Int", "int16": "Short", "int8": "Char", "uint8": "Byte",
            "bool": "Bool", "complex64": "ComplexFloat"}[str(dtype).split(".")[-1]]
