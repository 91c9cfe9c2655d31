"""Sorting and the order statistics built on it, as torch's: sort, argsort, msort, topk,
kthvalue, median and nanmedian. One engine op, `_C._argsort` (a stable sort's
positions along a dim, NaN the largest value: csrc/ops/sort.h); the values are
`input.gather(dim, positions)`, so their gradient is gather's (the scatter torch's
SortBackward0 is), on either device."""

from . import _C
from . import return_types as _rt


def _dim_size(input, dim):
    """The size of `dim` (1 for a 0-d tensor, whose dim is 0 or -1), IndexError past it."""
    if input.ndim == 0:
        if dim not in (0, -1):
            raise IndexError(f"Dimension out of range (expected to be in range of [-1, 0], but got {dim})")
        return 1
    if not -input.ndim <= dim < input.ndim:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-input.ndim}, {input.ndim - 1}], "
                         f"but got {dim})")
    return input.shape[dim]


def _values(input, dim, positions):
    return input.clone() if input.ndim == 0 else input.gather(dim, positions)


def argsort(input, dim=-1, descending=False, stable=False):
    """Positions that sort `input` along `dim` (always a stable sort: equal values keep
    their order, which stable=False allows too)."""
    return _C._argsort(input, dim, bool(descending))


def sort(input, dim=-1, descending=False, stable=False, *, out=None):
    """(values, indices) of `input` sorted along `dim`; NaN sorts as the largest value."""
    positions = argsort(input, dim, descending)
    result = _rt.sort((_values(input, dim, positions), positions))
    if out is not None:
        out[0].resize_(result[0].shape).copy_(result[0])
        out[1].resize_(result[1].shape).copy_(result[1])
        return _rt.sort(out)
    return result


def msort(input):
    """input sorted along its first dim."""
    return sort(input, 0).values


def _narrow(positions, dim, start, length):
    return positions if positions.ndim == 0 else positions.narrow(dim, start, length)


def topk(input, k, dim=-1, largest=True, sorted=True):
    """(values, indices) of the k largest (or smallest) entries along `dim`, in order."""
    n = _dim_size(input, dim)
    if not 0 <= k <= n:
        raise RuntimeError("selected index k out of range")
    positions = _narrow(argsort(input, dim, largest), dim, 0, k)
    return _rt.topk((_values(input, dim, positions), positions))


def kthvalue(input, k, dim=-1, keepdim=False):
    """(values, indices) of the k-th smallest entry along `dim` (k from 1)."""
    n = _dim_size(input, dim)
    if not 1 <= k <= n:
        shown = dim % input.ndim if input.ndim else 0
        raise RuntimeError(f"kthvalue(): selected number k out of range for dimension {shown}")
    positions = _narrow(argsort(input, dim), dim, k - 1, 1)
    values = _values(input, dim, positions)
    if not keepdim and input.ndim:
        values, positions = values.squeeze(dim), positions.squeeze(dim)
    return _rt.kthvalue((values, positions))


def _median(input, dim, keepdim, ignore_nan, name):
    """The lower median along `dim`: the entry at sorted position (m - 1) // 2 of the m
    values counted (NaN last in the order). median counts every value, and a row with a
    NaN gives its first NaN; nanmedian counts the others (all NaN: the first NaN)."""
    n = _dim_size(input, dim)
    if n == 0:
        shown = dim % input.ndim if input.ndim else 0
        raise IndexError(f"{name}(): Expected reduction dim {shown} to have non-zero size.")
    if input.ndim == 0:
        return input.clone(), _C._argsort(input, 0, False)
    order = argsort(input, dim)
    if input.dtype.is_floating_point:
        nan = input.isnan()
        counted = (~nan).sum(dim, keepdim=True)
        if ignore_nan:
            position = ((counted - 1) // 2).clamp(min=0)
        else:  # the first NaN sorts right after the m counted values
            position = ((counted - 1) // 2).where(counted == n, counted)
    else:
        position = input.new_full([1 if d == dim % input.ndim else s for d, s in enumerate(input.shape)],
                                  (n - 1) // 2, dtype=order.dtype)
    positions = order.gather(dim, position)
    values = input.gather(dim, positions)
    if not keepdim:
        values, positions = values.squeeze(dim), positions.squeeze(dim)
    return values, positions


def median(input, dim=None, keepdim=False):
    """The lower median of all entries (a 0-d tensor; NaN when there are none or any is
    NaN), or (values, indices) along `dim`."""
    if dim is None:
        flat = input.reshape(-1)
        if flat.numel() == 0:
            return input.new_full([], float("nan"))
        return _median(flat, 0, False, False, "median")[0]
    return _rt.median(_median(input, dim, keepdim, False, "median"))


def nanmedian(input, dim=None, keepdim=False):
    """median ignoring NaN (NaN only where every entry is NaN)."""
    if dim is None:
        flat = input.reshape(-1)
        if flat.numel() == 0:
            return input.new_full([], float("nan"))
        return _median(flat, 0, False, True, "nanmedian")[0]
    return _rt.nanmedian(_median(input, dim, keepdim, True, "nanmedian"))
