"""Order and moment statistics built on sort (python/lucid/_sort.py) and the reductions,
as torch's: quantile, nanquantile, mode, cov, corrcoef. They run on either device;
quantile's and the moments' gradients are those of the ops they are made of."""

import warnings

from . import _dtype as D
from . import return_types as _rt
from ._sort import argsort, searchsorted, sort
from ._tensor import Tensor

_INTERPOLATIONS = ("linear", "lower", "higher", "midpoint", "nearest")


def _lucid():
    import lucid
    return lucid


def _quantile(input, q, dim, keepdim, interpolation, ignore_nan, name):
    L = _lucid()
    if input.dtype not in (D.float32, D.float64):
        raise RuntimeError(f"{name}() input tensor must be either float or double dtype")
    if interpolation not in _INTERPOLATIONS:
        raise ValueError(f"{name}() interpolation must be one of linear, lower, higher, midpoint or nearest. "
                         f"Got {interpolation}")
    scalar_q = not isinstance(q, Tensor)
    if not scalar_q and q.ndim > 1:
        raise RuntimeError(f"{name}() q must be a scalar or 1D tensor")
    out_of_range = RuntimeError(f"{name}() q values must be in the range [0, 1]")
    if scalar_q:
        if not 0 <= float(q) <= 1:
            raise out_of_range
        qs = L.tensor([float(q)], dtype=input.dtype, device=input.device)
    else:
        qs = q.reshape(-1).to(input.dtype)
        if qs.numel() and bool(((qs < 0) | (qs > 1)).any()):  # (one host read, as torch's check)
            raise out_of_range
    if dim is None:
        work, dim_ = input.reshape(-1), 0
    else:
        if input.ndim and not -input.ndim <= dim < input.ndim:
            raise IndexError(f"Dimension out of range (expected to be in range of [{-input.ndim}, "
                             f"{input.ndim - 1}], but got {dim})")
        work, dim_ = (input.movedim(dim, -1) if input.ndim else input.reshape(1)), -1
    if work.shape[dim_] == 0:
        raise RuntimeError(f"{name}() input tensor must be non-empty")
    ordered = sort(work, dim_).values  # NaN last
    n = ordered.shape[-1]
    nan = ordered.isnan()
    count = (~nan).sum(-1, keepdim=True) if ignore_nan else nan.new_full(ordered.shape[:-1] + (1,), n,
                                                                         dtype=D.int64)
    # rank of each q in each row: q * (count - 1), as torch computes it (in the input dtype)
    rank = qs.reshape(-1, *([1] * ordered.ndim)) * (count - 1).clamp(min=0).to(input.dtype)
    if interpolation == "nearest":
        rank = rank.round()  # (half to even, as torch)
    below, above = rank.floor().long(), rank.ceil().long()
    rows = ordered.expand(qs.shape[0], *ordered.shape)
    lo, hi = rows.gather(-1, below.clamp(0, n - 1)), rows.gather(-1, above.clamp(0, n - 1))
    if interpolation in ("lower", "nearest"):
        result = lo
    elif interpolation == "higher":
        result = hi
    elif interpolation == "midpoint":
        result = L.lerp(lo, hi, 0.5)
    else:
        result = L.lerp(lo, hi, rank - below.to(input.dtype))
    # quantile of a row holding NaN, nanquantile of a row holding nothing else: NaN
    undefined = (count == 0) if ignore_nan else nan.any(-1, keepdim=True)
    result = result.masked_fill(undefined.expand(qs.shape[0], *undefined.shape), float("nan")).squeeze(-1)
    if keepdim:
        if dim is None:
            result = result.reshape(qs.shape[0], *([1] * input.ndim))
        else:
            result = result.unsqueeze(dim % input.ndim + 1 if input.ndim else 1)
    return result[0] if scalar_q else result


def quantile(input, q, dim=None, keepdim=False, *, interpolation="linear"):
    """The q-th quantiles of input (all of it, or along dim); NaN where a NaN is counted."""
    return _quantile(input, q, dim, keepdim, interpolation, False, "quantile")


def nanquantile(input, q, dim=None, keepdim=False, *, interpolation="linear"):
    """quantile over the values that are not NaN."""
    return _quantile(input, q, dim, keepdim, interpolation, True, "nanquantile")


def mode(input, dim=-1, keepdim=False):
    """(values, indices): the most frequent value along dim (the smallest of equally
    frequent ones) and the position of its last occurrence."""
    if input.ndim == 0:
        return _rt.mode((input.clone(), argsort(input, 0)))
    d = dim % input.ndim
    rows = input.movedim(d, -1)
    order = argsort(rows, -1)
    ordered = rows.gather(-1, order)
    if ordered.shape[-1] == 0:
        raise IndexError(f"mode(): Expected reduction dim {d} to have non-zero size.")
    flat = ordered.reshape(-1, ordered.shape[-1])
    # each entry's count: how many entries of its row equal it (one search each side)
    count = (searchsorted(flat, flat, right=True) - searchsorted(flat, flat)).reshape(ordered.shape)
    most = count.amax(-1, keepdim=True)
    start = (count == most).int().argmax(-1, keepdim=True)  # the run of the smallest most frequent value
    last = start + most - 1
    values, indices = ordered.gather(-1, start), order.gather(-1, last)
    values, indices = values.movedim(-1, d), indices.movedim(-1, d)
    if not keepdim:
        values, indices = values.squeeze(d), indices.squeeze(d)
    return _rt.mode((values, indices))


def cov(input, *, correction=1, fweights=None, aweights=None):
    """The covariance matrix of input's rows (variables) over its columns (observations),
    with frequency and analytic weights as torch.cov."""
    if input.ndim > 2:
        raise ValueError(f"cov(): expected input to have two or fewer dimensions but got an input with "
                         f"{input.ndim} dimensions")
    if input.dtype.is_complex:  # (its product needs the conjugate transpose, which lucid lacks yet)
        raise NotImplementedError("cov(): complex inputs are not supported yet")
    x = input.reshape(1, -1) if input.ndim < 2 else input
    if not x.dtype.is_floating_point:
        x = x.to(_lucid().get_default_dtype())
    n = x.shape[1]
    w = None
    if fweights is not None:
        if fweights.ndim > 1 or fweights.numel() != n:
            raise ValueError(f"cov(): expected fweights to have one dimension and {n} elements but got "
                             f"{fweights.ndim} dimensions and {fweights.numel()} elements")
        if fweights.dtype.is_floating_point:
            raise RuntimeError("cov(): expected fweights to have integral dtype")
        w = fweights
    if aweights is not None:
        if aweights.ndim > 1 or aweights.numel() != n:
            raise ValueError(f"cov(): expected aweights to have one dimension and {n} elements but got "
                             f"{aweights.ndim} dimensions and {aweights.numel()} elements")
        w = aweights if w is None else w * aweights
    if w is None:
        w_sum = x.new_full([], n)
        avg = x.mean(1)
    else:
        w = w.to(x.dtype)
        w_sum = w.sum()
        avg = (x * w).sum(1) / w_sum
    if w is None or aweights is None:
        norm = w_sum - correction
    else:
        norm = w_sum - correction * (w * aweights.to(x.dtype)).sum() / w_sum
    if float(norm.item()) <= 0:
        warnings.warn("cov(): degrees of freedom is <= 0. Correction should be strictly less than the number of "
                      "observations.", RuntimeWarning, stacklevel=2)
        norm = norm.clamp(min=0)
    centred = x - avg.unsqueeze(1)
    weighted = centred if w is None else centred * w
    result = (weighted @ centred.t()) / norm
    return result.squeeze() if input.ndim < 2 else result


def corrcoef(input):
    """The Pearson correlation coefficients of input's rows, clipped to [-1, 1]."""
    c = cov(input)
    if c.ndim == 0:
        return c / c
    std = c.diagonal().sqrt()
    return (c / std.unsqueeze(1) / std.unsqueeze(0)).clamp(-1, 1)
