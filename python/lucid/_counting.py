"""Counting and the reductions that skip NaN, as torch's: bincount, histc, histogram,
nansum, nanmean. Built from the engine's ops (index_add, where, sum), so they run on either
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


def histogram(input, bins, *, range=None, weight=None, density=False):
    """(hist, bin_edges): input's values counted (or their weights summed) in bins, given
    as a count of equal bins over range (the data's range by default, widened by 0.5 each
    side when it is one value) or as a 1-d tensor of increasing edges. The last bin
    includes its right edge; values outside, and NaN, are not counted. density divides
    by the total and the bin widths."""
    from . import return_types
    from ._creation import linspace, zeros
    from ._sort import searchsorted
    if not input.dtype.is_floating_point:
        raise NotImplementedError(f"\"histogramdd\" not implemented for '{_torch_name(input.dtype)}'")
    x = input.reshape(-1)
    if isinstance(bins, int):
        if bins <= 0:
            raise RuntimeError(f"torch.histogram(): bins must be > 0, but got {bins} for dimension 0")
        if range is not None:
            lo, hi = float(range[0]), float(range[1])
        elif x.numel():
            lo, hi = float(x.min().item()), float(x.max().item())
        else:
            lo, hi = 0.0, 0.0
        if lo > hi:
            raise RuntimeError(f"torch.histogram(): min should not exceed max, but got min {lo} max {hi} for "
                               "dimension 0")
        if not (math.isfinite(lo) and math.isfinite(hi)):
            raise RuntimeError(f"torch.histogram(): range of [{lo}, {hi}] is not finite")
        if lo == hi:
            lo, hi = lo - 0.5, hi + 0.5
        edges = linspace(lo, hi, bins + 1, dtype=input.dtype, device=input.device)
    else:
        if bins.ndim != 1 or bins.numel() < 2:
            raise RuntimeError("torch.histogram(): bins tensor should have one dimension and at least 2 elements")
        edges = bins.to(input.dtype)
    n = edges.numel() - 1
    inside = (x >= edges[0]) & (x <= edges[-1])
    kept = x[inside]
    position = (searchsorted(edges, kept, right=True) - 1).clamp(max=n - 1)
    w = None if weight is None else weight.reshape(-1)[inside].to(input.dtype)
    hist = zeros(n, dtype=input.dtype, device=input.device).index_add_(
        0, position, w if w is not None else kept.new_ones(kept.shape[0]))
    if density:
        hist = hist / (hist.sum() * (edges[1:] - edges[:-1]))
    return return_types.histogram((hist, edges))


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
