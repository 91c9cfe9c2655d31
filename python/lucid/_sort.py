"""Sorting and the order statistics built on it, as torch's: sort, argsort, msort, topk,
kthvalue, median and nanmedian. One engine op, `_C._argsort` (a stable sort's
positions along a dim, NaN the largest value: csrc/ops/sort.h), and `_C._sort`, the
same sort's values with them; for an input that needs a gradient the values are
`input.gather(dim, positions)`, so their gradient is gather's (the scatter torch's
SortBackward0 is), on either device."""

from . import _C
from . import _dtype as D
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


def _sorted(input, dim, descending=False):
    """(values, positions) of the stable sort along `dim`: one engine pass that carries
    the values, or for an input that needs a gradient its positions and a gather (whose
    gradient is the sort's)."""
    from .autograd.grad_mode import is_grad_enabled
    if input.requires_grad and is_grad_enabled():
        positions = argsort(input, dim, descending)
        return _values(input, dim, positions), positions
    return _C._sort(input, dim, bool(descending))


def argsort(input, dim=-1, descending=False, stable=False):
    """Positions that sort `input` along `dim` (always a stable sort: equal values keep
    their order, which stable=False allows too)."""
    return _C._argsort(input, dim, bool(descending))


def sort(input, dim=-1, descending=False, stable=False):
    """(values, indices) of `input` sorted along `dim`; NaN sorts as the largest value.
    (out= for this and the others: _out.py.)"""
    return _rt.sort(_sorted(input, dim, descending))


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
    positions = _C._topk_positions(input, k, dim, bool(largest))
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


def _median_of(input, dim, keepdim, ignore_nan, name):
    if dim is None:  # of every entry: a 0-d tensor
        flat = input.reshape(-1)
        if flat.numel() == 0:
            return input.new_full([], float("nan"))
        return _median(flat, 0, False, ignore_nan, name)[0]
    return getattr(_rt, name)(_median(input, dim, keepdim, ignore_nan, name))


def median(input, dim=None, keepdim=False):
    """The lower median of all entries (a 0-d tensor; NaN when there are none or any is
    NaN), or (values, indices) along `dim`."""
    return _median_of(input, dim, keepdim, False, "median")


def nanmedian(input, dim=None, keepdim=False):
    """median ignoring NaN (NaN only where every entry is NaN)."""
    return _median_of(input, dim, keepdim, True, "nanmedian")


# ---- searching ---------------------------------------------------------------------------

def searchsorted(sorted_sequence, input, *, out_int32=False, right=False, side=None, sorter=None):
    """Where each value of `input` goes in `sorted_sequence` (sorted along its last dim;
    1-d, or with input's leading dims): the count of entries below it (right / side=
    "right": at most it). `sorter` gives the positions that sort an unsorted sequence."""
    from ._tensor import Tensor
    if side is not None:
        if side not in ("left", "right"):
            raise RuntimeError(f"torch.searchsorted(): side can only be 'left' or 'right' but got {side}")
        if right and side == "left":
            raise RuntimeError("torch.searchsorted(): side and right can't be set to opposites, got side of left "
                               "while right was True")
        right = side == "right"
    if not isinstance(input, Tensor):
        from ._creation import tensor
        input = tensor(input, device=sorted_sequence.device)
    if sorter is not None:
        sorted_sequence = sorted_sequence.gather(-1, sorter)
    result = _C._searchsorted(sorted_sequence, input, bool(right))
    if out_int32:
        from ._dtype import int32
        result = result.to(int32)
    return result


def bucketize(input, boundaries, *, out_int32=False, right=False):
    """The bucket of each value among the 1-d sorted `boundaries` (searchsorted's count)."""
    if boundaries.ndim != 1:
        raise RuntimeError(f"boundaries tensor must be 1 dimension, but got dim({boundaries.ndim})")
    return searchsorted(boundaries, input, out_int32=out_int32, right=right)


def isin(elements, test_elements, *, assume_unique=False, invert=False):
    """A bool tensor of elements' shape: whether each is among test_elements (NaN never is)."""
    from ._creation import tensor
    from ._tensor import Tensor
    if not isinstance(elements, Tensor) and not isinstance(test_elements, Tensor):
        raise TypeError("isin() expects at least one of elements and test_elements to be a Tensor")
    device = elements.device if isinstance(elements, Tensor) else test_elements.device
    elements = elements if isinstance(elements, Tensor) else tensor(elements, device=device)
    test_elements = test_elements if isinstance(test_elements, Tensor) else tensor(test_elements, device=device)
    pool = sort(test_elements.reshape(-1)).values
    if pool.numel() == 0:
        found = elements.new_zeros(elements.shape, dtype=D.bool)
    else:
        at = searchsorted(pool, elements).clamp(max=pool.numel() - 1)
        found = pool[at.reshape(-1)].reshape(elements.shape) == elements
    return ~found if invert else found


# ---- unique ------------------------------------------------------------------------------

def _runs(flat_sorted):
    """Whether each entry starts a run of equal values (NaNs never equal: each its own)."""
    from ._shape import cat
    first = flat_sorted.new_ones(min(flat_sorted.shape[0], 1), dtype=D.bool)
    if flat_sorted.ndim == 1:
        differs = flat_sorted[1:] != flat_sorted[:-1]
    else:  # rows of a dim-wise unique: a run ends where any entry of the row differs
        differs = (flat_sorted[1:] != flat_sorted[:-1]).any(1)
    return cat([first, differs])


def _unique_from(ordered, order, starts, return_inverse, return_counts, inverse_shape):
    """unique's results from the rows/values `ordered` (= original[order]) and where their
    runs start."""
    from ._shape import cat
    values = ordered[starts]
    result = [values]
    if return_inverse:
        group = starts.long().cumsum(0) - 1
        inverse = group.new_empty(group.shape) if order is not None else group
        if order is not None:
            inverse = inverse.scatter(0, order, group)
        result.append(inverse.reshape(inverse_shape))
    if return_counts:
        begins = starts.nonzero().reshape(-1)
        ends = cat([begins[1:], begins.new_full([min(begins.shape[0], 1)], starts.shape[0])])
        result.append(ends - begins)
    return result[0] if len(result) == 1 else tuple(result)


def unique(input, sorted=True, return_inverse=False, return_counts=False, dim=None):
    """The distinct values of input (sorted; or the distinct slices along `dim`), and
    optionally where each entry went (inverse) and how often each occurs (counts)."""
    if dim is None:
        flat = input.reshape(-1)
        ordered, order = _sorted(flat, 0)
        return _unique_from(ordered, order, _runs(ordered), return_inverse, return_counts, input.shape)
    d = dim % input.ndim if input.ndim else 0
    rows = input.movedim(d, 0)
    rows = rows.reshape(rows.shape[0], -1)
    order = _lexicographic_order(rows)
    ordered = rows[order]
    starts = _runs(ordered) if rows.shape[0] else ordered.new_zeros(0, dtype=D.bool)
    out = _unique_from(ordered, order, starts, return_inverse, return_counts, (input.shape[d],))
    values = out[0] if isinstance(out, tuple) else out
    values = values.reshape(values.shape[0], *[s for i, s in enumerate(input.shape) if i != d]).movedim(0, d)
    return (values, *out[1:]) if isinstance(out, tuple) else values


def _lexicographic_order(rows):
    """Positions that sort the rows of a 2-d tensor lexicographically: stable sorts by
    each column from the last to the first."""
    from ._creation import arange
    order = arange(rows.shape[0], device=rows.device)
    for c in range(rows.shape[1] - 1, -1, -1):
        order = order[argsort(rows[order, c])]
    return order


def unique_consecutive(input, return_inverse=False, return_counts=False, dim=None):
    """unique of each run of equal consecutive values (or slices along `dim`), in order."""
    if dim is None:
        flat = input.reshape(-1)
        return _unique_from(flat, None, _runs(flat), return_inverse, return_counts, input.shape)
    d = dim % input.ndim if input.ndim else 0
    rows = input.movedim(d, 0)
    rows = rows.reshape(rows.shape[0], -1)
    starts = _runs(rows) if rows.shape[0] else rows.new_zeros(0, dtype=D.bool)
    out = _unique_from(rows, None, starts, return_inverse, return_counts, (input.shape[d],))
    values = out[0] if isinstance(out, tuple) else out
    values = values.reshape(values.shape[0], *[s for i, s in enumerate(input.shape) if i != d]).movedim(0, d)
    return (values, *out[1:]) if isinstance(out, tuple) else values
