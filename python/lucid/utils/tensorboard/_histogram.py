"""Histogram statistics as torch.utils.tensorboard computes them with np.histogram,
reproduced with lucid ops (sort + searchsorted count the values per bin).
"""

import math

import lucid

from ._convert import to_tensor


def tensorflow_bins():
    """torch's SummaryWriter.default_bins: +-1e-12 growing by 1.1x up to 1e20, and 0
    (from TensorFlow's generate_testdata.py)."""
    v = 1e-12
    buckets = []
    neg_buckets = []
    while v < 1e20:
        buckets.append(v)
        neg_buckets.append(-v)
        v *= 1.1
    return neg_buckets[::-1] + [0] + buckets


# np.histogram's bin-width estimators that need only the count and the range; the
# others ("auto", "fd", "scott", "doane", "stone") need percentiles, moments or an
# optimisation whose rounding we cannot promise to match.
_WIDTH_ESTIMATORS = {
    "sqrt": lambda ptp, n: ptp / math.sqrt(n),
    "sturges": lambda ptp, n: ptp / (math.log2(n) + 1.0),
    "rice": lambda ptp, n: ptp / (2.0 * n ** (1.0 / 3)),
}
SUPPORTED_BINS = ("'tensorflow'", "an int", "a sequence of bin edges",
                  *(repr(name) for name in _WIDTH_ESTIMATORS))


def _linspace(start, stop, num):
    # np.linspace's arithmetic (i * step + start, last edge exactly `stop`).
    step = (stop - start) / (num - 1)
    edges = [i * step + start for i in range(num)]
    edges[-1] = stop
    return edges


def _check_finite(lo, hi):
    if not (math.isfinite(lo) and math.isfinite(hi)):
        raise ValueError(f"autodetected range of [{lo}, {hi}] is not finite")


def _bin_edges(bins, lo, hi, count):
    if isinstance(bins, str):
        if bins not in _WIDTH_ESTIMATORS:
            raise ValueError(
                f"bins={bins!r} is not supported; use one of {', '.join(SUPPORTED_BINS)}")
        _check_finite(lo, hi)
        width = _WIDTH_ESTIMATORS[bins](hi - lo, count)
        first, last = (lo - 0.5, hi + 0.5) if lo == hi else (lo, hi)
        return _linspace(first, last, int(math.ceil((last - first) / width)) + 1 if width else 2)
    if isinstance(bins, bool) or not isinstance(bins, int):
        edges = [float(e) for e in to_tensor(bins).reshape(-1).tolist()] \
            if isinstance(bins, lucid.Tensor) else [float(e) for e in bins]
        if any(b < a for a, b in zip(edges, edges[1:])):
            raise ValueError("`bins` must increase monotonically, when an array")
        return edges
    if bins < 1:
        raise ValueError("`bins` must be positive, when an integer")
    _check_finite(lo, hi)
    if lo == hi:
        lo, hi = lo - 0.5, hi + 0.5
    return _linspace(lo, hi, bins + 1)


def _subsample(counts, limits, max_bins):
    # torch merges neighbouring bins when there are more than max_bins.
    subsampling = len(counts) // max_bins
    remainder = len(counts) % subsampling
    if remainder:
        counts = counts + [0] * (subsampling - remainder)
    counts = [sum(counts[i:i + subsampling]) for i in range(0, len(counts), subsampling)]
    return counts, limits[:-1:subsampling] + [limits[-1]]


def histogram_stats(values, bins, max_bins=None):
    """(min, max, num, sum, sum_squares, bucket_limits, bucket_counts) as torch's
    make_histogram builds them; `bins` as np.histogram takes it."""
    flat = to_tensor(values).reshape(-1).to(lucid.float64)
    count = flat.numel()
    if count == 0:
        raise ValueError("The input has no element.")
    ordered = lucid.sort(flat).values
    lo, hi = ordered[0].item(), ordered[-1].item()
    limits = _bin_edges(bins, lo, hi, count)
    edges = lucid.tensor(limits, dtype=lucid.float64, device=flat.device)
    # np.histogram: bin i holds edges[i] <= v < edges[i+1], the last bin also v == edge.
    below = lucid.searchsorted(ordered, edges[:-1]).tolist()
    below.append(lucid.searchsorted(ordered, edges[-1:], right=True).item())
    counts = [float(b - a) for a, b in zip(below, below[1:])]
    if max_bins is not None and len(counts) > max_bins:
        counts, limits = _subsample(counts, limits, max_bins)

    # Keep only the support, plus one empty bin on the left: TensorBoard stores right
    # edges only, so that bin carries the leftmost edge.
    nonzero = [i for i, c in enumerate(counts) if c > 0]
    start = nonzero[0] if nonzero else len(counts)
    end = (nonzero[-1] if nonzero else 0) + 1
    counts = counts[start - 1:end] if start > 0 else [0.0] + counts[:end]
    limits = limits[start:end + 1]
    if not counts or not limits:
        raise ValueError("The histogram is empty, please file a bug report.")
    return (lo, hi, float(count), flat.sum().item(), (flat * flat).sum().item(),
            limits, counts)
