"""Counting and the reductions that skip NaN, as torch's: bincount, histc, histogram, histogramdd,
nansum, nanmean. Built from the engine's ops (index_add, where, sum), so they run on either
device; bincount and histc read their range from the data (one host read) when they
must size their output by it, as torch does."""

import math
from builtins import range as _builtin_range  # (the functions' range= shadows it)

from . import _dtype as D


def bincount(input, weights=None, minlength=0):
    """How often each value 0..max(input) occurs in the 1-d non-negative integer input
    (weighted: the sum of the weights of its occurrences); at least minlength bins."""
    from ._creation import zeros
    if input.ndim != 1 or not _is_integral(input.dtype):
        if input.ndim == 1:  # (floating, complex, bool)
            raise NotImplementedError(f"\"bincount\" not implemented for '{D._torch_name(input.dtype)}'")
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
        raise NotImplementedError(f"\"histc\" not implemented for '{D._torch_name(input.dtype)}'")
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


def _bin_edges(name, x, bins, range, d, dtype):
    """The bin edges of dimension d: `bins` equal bins over range (the data's range by
    default, widened by 0.5 each side when it is one value), or the increasing edges
    given as a 1-d tensor."""
    from ._creation import linspace
    if isinstance(bins, int):
        if bins <= 0:
            raise RuntimeError(f"torch.{name}(): bins must be > 0, but got {bins} for dimension {d}")
        if range is not None:
            lo, hi = float(range[0]), float(range[1])
        elif x.numel():
            lo, hi = float(x.min().item()), float(x.max().item())
        else:
            lo, hi = 0.0, 0.0
        if lo > hi:
            raise RuntimeError(f"torch.{name}(): min should not exceed max, but got min {lo} max {hi} for "
                               f"dimension {d}")
        if not (math.isfinite(lo) and math.isfinite(hi)):
            raise RuntimeError(f"torch.{name}(): range of [{lo}, {hi}] is not finite")
        if lo == hi:
            lo, hi = lo - 0.5, hi + 0.5
        return linspace(lo, hi, bins + 1, dtype=dtype, device=x.device)
    if bins.ndim != 1 or bins.numel() < 2:
        raise RuntimeError(f"torch.{name}(): bins tensor should have one dimension and at least 2 elements")
    return bins.to(dtype)


def _histogramdd(name, input, bins, range, weight, density):
    """(hist, [edges per dimension]) of the points input[..., :] (dims coordinates each)."""
    from ._creation import zeros
    from ._sort import searchsorted
    if not input.dtype.is_floating_point:
        raise NotImplementedError(f"\"histogramdd\" not implemented for '{D._torch_name(input.dtype)}'")
    dims = input.shape[-1] if input.ndim else 1
    x = input.reshape(-1, dims)
    per_dim = [bins] * dims if isinstance(bins, int) else list(bins)
    if len(per_dim) != dims:
        raise RuntimeError(f"torch.{name}(): expected {dims} sequences of bin edges for each dimension, but got "
                           f"{len(per_dim)}")
    if range is not None and len(range) != 2 * dims:
        raise RuntimeError(f"torch.{name}(): expected {2 * dims} values for range, but got {len(range)}")
    edges = [_bin_edges(name, x[:, d], per_dim[d], None if range is None else range[2 * d:2 * d + 2], d,
                        input.dtype) for d in _builtin_range(dims)]
    sizes = [e.numel() - 1 for e in edges]
    inside, flat = None, None
    for d, e in enumerate(edges):
        xd = x[:, d].contiguous()
        ok = (xd >= e[0]) & (xd <= e[-1])  # (NaN is neither)
        pos = (searchsorted(e, xd, right=True) - 1).clamp(min=0, max=sizes[d] - 1)
        inside = ok if inside is None else inside & ok
        flat = pos if flat is None else flat * sizes[d] + pos
    counted = inside.to(input.dtype) if weight is None else weight.reshape(-1).to(input.dtype) * inside
    total = 1
    for n in sizes:
        total *= n
    hist = zeros(total, dtype=input.dtype, device=input.device).index_add_(0, flat, counted).reshape(sizes)
    if density:
        volume = None
        for d, e in enumerate(edges):
            width = (e[1:] - e[:-1]).reshape([-1 if k == d else 1 for k in _builtin_range(dims)])
            volume = width if volume is None else volume * width
        hist = hist / (hist.sum() * volume)
    return hist, edges


def histogram(input, bins, *, range=None, weight=None, density=False):
    """(hist, bin_edges): input's values counted (or their weights summed) in bins, given
    as a count of equal bins over range (the data's range by default, widened by 0.5 each
    side when it is one value) or as a 1-d tensor of increasing edges. The last bin
    includes its right edge; values outside, and NaN, are not counted. density divides
    by the total and the bin widths."""
    from . import return_types
    hist, edges = _histogramdd("histogram", input.reshape(-1, 1), bins if isinstance(bins, int) else [bins],
                               range, weight, density)
    return return_types.histogram((hist, edges[0]))


def histogramdd(input, bins, *, range=None, weight=None, density=False):
    """(hist, bin_edges): the points input[..., D] counted in a D-dimensional grid of bins
    (bins: one count for every dimension, a count per dimension, or a list of edge tensors;
    range: [min_0, max_0, min_1, max_1, ...]), as histogram does per dimension."""
    from . import return_types
    if input.ndim < 2:
        raise RuntimeError(f"torch.histogramdd(): input tensor should have at least 2 dimensions, but got "
                           f"{input.ndim}")
    hist, edges = _histogramdd("histogramdd", input, bins, range, weight, density)
    return return_types.histogramdd((hist, edges))


def nansum(input, dim=None, keepdim=False, *, dtype=None):
    """sum with NaN counted as zero."""
    kept = input.nan_to_num(nan=0.0, posinf=float("inf"), neginf=float("-inf")) \
        if input.dtype.is_floating_point else input
    return kept.sum(dim=dim, keepdim=keepdim, dtype=dtype) if dim is not None else kept.sum(dtype=dtype)


def nanmean(input, dim=None, keepdim=False, *, dtype=None):
    """mean over the values that are not NaN (NaN where there are none)."""
    if not input.dtype.is_floating_point:
        raise RuntimeError(f"nanmean(): expected input to have floating point or complex dtype but got "
                           f"{D._torch_name(input.dtype)}")
    counted = (~input.isnan())
    total = nansum(input, dim, keepdim, dtype=dtype)
    count = counted.sum(dim=dim, keepdim=keepdim) if dim is not None else counted.sum()
    return total / count


def _is_integral(dtype):
    return not (dtype.is_floating_point or dtype.is_complex) and dtype != D.bool
