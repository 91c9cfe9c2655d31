"""The rest of torch's shape and arrangement functions, composed from lucid's views,
cat, gather and index ops (so they run on either device, with those ops' gradients):
ravel, diff, rot90, meshgrid, repeat_interleave, kron, cartesian_prod, block_diag,
column_stack, row_stack, dstack, atleast_3d, hsplit, vsplit, dsplit, tril_indices,
triu_indices, take, combinations."""

import itertools
import warnings

from . import _dtype as D
from ._tensor import Tensor


def _lucid():
    import lucid
    return lucid


def broadcast_shapes(*shapes):
    """The shape the given shapes broadcast to (each a sequence of sizes or one int)."""
    from ._size import Size
    result = []  # innermost first
    for index, shape in enumerate(shapes):
        shape = (shape,) if isinstance(shape, int) else tuple(shape)
        for i, size in enumerate(reversed(shape)):
            if size < 0:
                raise RuntimeError(f"Trying to create tensor with negative dimension {size}: {list(shape)}")
            if i == len(result):
                result.append(size)
            elif result[i] == 1:
                result[i] = size
            elif size != 1 and size != result[i]:
                raise RuntimeError(f"Attempting to broadcast a dimension of length {size} at {-(i + 1)}! Mismatching "
                                   f"argument at index {index} had {shape}; but expected shape should be broadcastable "
                                   f"to {list(reversed(result))}")
    return Size(list(reversed(result)))


def broadcast_tensors(*tensors):
    """The tensors expanded to their common shape (views)."""
    shape = broadcast_shapes(*[t.shape for t in tensors])
    return tuple(t.expand(*shape) for t in tensors)


def ravel(input):
    """input as one dimension (a view when the memory allows)."""
    return input.reshape(-1)


def diff(input, n=1, dim=-1, prepend=None, append=None):
    """The n-th forward difference along dim (xor for bool), after prepend/append."""
    L = _lucid()
    if input.ndim == 0:
        raise RuntimeError("diff expects input to be at least one-dimensional")
    if prepend is not None or append is not None:
        input = L.cat([t for t in (prepend, input, append) if t is not None], dim)
    for _ in range(n):
        size = input.shape[dim]
        if size == 0:
            break
        later, earlier = input.narrow(dim, 1, size - 1), input.narrow(dim, 0, size - 1)
        input = L.logical_xor(later, earlier) if input.dtype == D.bool else later - earlier
    return input


def rot90(input, k=1, dims=(0, 1)):
    """input rotated by k quarter turns in the plane of dims, from the first towards the
    second."""
    dims = list(dims)
    if len(dims) != 2:
        raise RuntimeError(f"expected total rotation dims == 2, but got dims = {len(dims)}")
    if input.ndim < 2:
        raise RuntimeError(f"expected total dims >= 2, but got total dims = {input.ndim}")
    d0, d1 = dims[0] % input.ndim, dims[1] % input.ndim
    if d0 == d1:
        raise RuntimeError(f"expected rotation dims to be different, but got dim0 = {d0} and dim1 = {d1}")
    k %= 4
    if k == 1:
        return input.flip([d1]).transpose(d0, d1)
    if k == 2:
        return input.flip([d0, d1])
    if k == 3:
        return input.flip([d0]).transpose(d0, d1)
    return input.clone()


def meshgrid(*tensors, indexing=None):
    """Coordinate grids of 1-d tensors: ij (the default) gives shape (len(t0), len(t1),
    ...), xy swaps the first two."""
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    if indexing is None:
        warnings.warn("torch.meshgrid: in an upcoming release, it will be required to pass the indexing argument.",
                      UserWarning, stacklevel=2)
        indexing = "ij"
    if indexing not in ("ij", "xy"):
        raise RuntimeError(f"torch.meshgrid: indexing must be one of \"xy\" or \"ij\", but received: {indexing}")
    for t in tensors:
        if t.ndim > 1:
            raise RuntimeError(f"torch.meshgrid: Expected 0D or 1D tensor in the tensor list but got: {t.ndim}D")
    swap = indexing == "xy" and len(tensors) >= 2
    order = list(tensors)
    if swap:
        order[0], order[1] = order[1], order[0]
    sizes = [t.numel() for t in order]
    grids = []
    for i, t in enumerate(order):
        shape = [1] * len(order)
        shape[i] = sizes[i]
        grids.append(t.reshape(shape).expand(*sizes))
    if swap:
        grids[0], grids[1] = grids[1], grids[0]
    return tuple(grids)


def repeat_interleave(input, repeats=None, dim=None, *, output_size=None):
    """Each entry (or slice along dim) repeated repeats times, in place; repeats is a
    number or one count per entry. With only a tensor of counts: the positions repeated."""
    L = _lucid()
    if repeats is None:  # repeat_interleave(counts): arange(len(counts)) repeated
        counts = input
        return repeat_interleave(L.arange(counts.shape[0], device=counts.device), counts, 0,
                                 output_size=output_size)
    if dim is None:
        input, dim = input.reshape(-1), 0
    dim %= max(input.ndim, 1)
    n = input.shape[dim]
    if isinstance(repeats, Tensor) and repeats.numel() != 1:
        if repeats.ndim != 1 or repeats.shape[0] != n:
            raise RuntimeError("repeats must have the same size as input along dim, but got repeats.size(0) = "
                               f"{repeats.shape[0] if repeats.ndim else 1} and input.size({dim}) = {n}")
        if repeats.numel() and int(repeats.min().item()) < 0:
            raise RuntimeError("repeats can not be negative")
        ends = repeats.cumsum(0)
        total = int(output_size) if output_size is not None else (int(ends[-1].item()) if n else 0)
        positions = L.searchsorted(ends, L.arange(total, device=input.device), right=True)
        return input.index_select(dim, positions)
    r = int(repeats.item() if isinstance(repeats, Tensor) else repeats)
    if r < 0:
        raise RuntimeError("repeats can not be negative")
    shape = list(input.shape)
    expanded = input.unsqueeze(dim + 1).expand(*shape[:dim + 1], r, *shape[dim + 1:])
    return expanded.reshape(*shape[:dim], n * r, *shape[dim + 1:])


def kron(input, other):
    """The Kronecker product: every entry of input times the whole of other, in blocks."""
    nd = max(input.ndim, other.ndim)
    a = input.reshape([1] * (nd - input.ndim) + list(input.shape))
    b = other.reshape([1] * (nd - other.ndim) + list(other.shape))
    inter_a, inter_b = [], []
    for sa, sb in zip(a.shape, b.shape):
        inter_a += [sa, 1]
        inter_b += [1, sb]
    product = a.reshape(inter_a) * b.reshape(inter_b)
    return product.reshape([sa * sb for sa, sb in zip(a.shape, b.shape)])


def cartesian_prod(*tensors):
    """Every combination of one entry from each 1-d tensor, as rows (lexicographic)."""
    L = _lucid()
    if len(tensors) == 1:
        return tensors[0]
    grids = meshgrid(*tensors, indexing="ij")
    return L.stack([g.reshape(-1) for g in grids], dim=1)


def block_diag(*tensors):
    """The tensors (0-d, 1-d as one row, or 2-d) along the diagonal of one matrix."""
    L = _lucid()
    blocks = []
    for t in tensors:
        if t.ndim > 2:
            raise RuntimeError(f"torch.block_diag: Input tensors must have 2 or fewer dimensions. Input has {t.ndim} "
                               "dimensions")
        blocks.append(t.reshape(1, 1) if t.ndim == 0 else t.reshape(1, -1) if t.ndim == 1 else t)
    if not blocks:
        return L.zeros(1, 0)
    dtype = blocks[0].dtype
    for b in blocks[1:]:
        dtype = D.promote_types(dtype, b.dtype)
    device = blocks[0].device
    width = sum(b.shape[1] for b in blocks)
    rows, left = [], 0
    for b in blocks:
        r, c = b.shape
        rows.append(L.cat([L.zeros(r, left, dtype=dtype, device=device), b.to(dtype),
                           L.zeros(r, width - left - c, dtype=dtype, device=device)], 1))
        left += c
    return L.cat(rows, 0)


def atleast_3d(*tensors):
    """Each tensor with at least 3 dims: [] -> [1, 1, 1], [n] -> [1, n, 1], [m, n] -> [m, n, 1]."""
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        return tuple(atleast_3d(t) for t in tensors[0])
    if len(tensors) != 1:
        return tuple(atleast_3d(t) for t in tensors)
    t = tensors[0]
    if t.ndim == 0:
        return t.reshape(1, 1, 1)
    if t.ndim == 1:
        return t.reshape(1, -1, 1)
    if t.ndim == 2:
        return t.unsqueeze(-1)
    return t


def column_stack(tensors):
    """0-d and 1-d tensors as columns, beside the 2-d ones."""
    L = _lucid()
    return L.hstack([t.reshape(-1, 1) if t.ndim <= 1 else t for t in tensors])


def row_stack(tensors):
    return _lucid().vstack(tensors)


def dstack(tensors):
    """The tensors stacked along their third dim (atleast_3d first)."""
    return _lucid().cat([atleast_3d(t) for t in tensors], 2)


def _split_along(name, dim, least):
    def split(input, indices_or_sections):
        if input.ndim < least:
            raise RuntimeError(f"torch.{name} requires a tensor with at least {least} dimension, but got a tensor "
                               f"with {input.ndim} dimensions!")
        d = 0 if name == "hsplit" and input.ndim == 1 else dim
        if isinstance(indices_or_sections, int):
            size = input.shape[d]
            if indices_or_sections == 0 or size % indices_or_sections:
                raise RuntimeError(f"torch.{name} attempted to split along dimension {d}, but the size of the "
                                   f"dimension {size} is not divisible by the split_size {indices_or_sections}!")
        return _lucid().tensor_split(input, indices_or_sections, d)
    split.__name__ = name
    split.__doc__ = f"tensor_split along dim {dim} (sections must divide it evenly)."
    return split


hsplit = _split_along("hsplit", 1, 1)
vsplit = _split_along("vsplit", 0, 2)
dsplit = _split_along("dsplit", 2, 3)


def _triangle_indices(row, col, offset, dtype, device, lower):
    L = _lucid()
    r = L.arange(row, device=device).unsqueeze(1)
    c = L.arange(col, device=device).unsqueeze(0)
    keep = (c <= r + offset) if lower else (c >= r + offset)
    return keep.nonzero().t().to(dtype)


def tril_indices(row, col, offset=0, *, dtype=D.int64, device="cpu", layout=None):
    """The [2, N] coordinates of the lower triangle of a row x col matrix, row by row."""
    return _triangle_indices(row, col, offset, dtype, device, True)


def triu_indices(row, col, offset=0, *, dtype=D.int64, device="cpu", layout=None):
    """The [2, N] coordinates of the upper triangle of a row x col matrix, row by row."""
    return _triangle_indices(row, col, offset, dtype, device, False)


def take(input, index):
    """input read as one dimension at `index` (any shape)."""
    return input.reshape(-1)[index]


def combinations(input, r=2, with_replacement=False):
    """The r-element combinations of the 1-d input's entries, as rows (itertools' order)."""
    L = _lucid()
    if input.ndim != 1:
        raise RuntimeError(f"Expect a 1D vector, but got shape {list(input.shape)}")
    if r < 0:
        raise RuntimeError(f"Expect a non-negative number, but got {r}")
    pick = itertools.combinations_with_replacement if with_replacement else itertools.combinations
    rows = list(pick(range(input.shape[0]), r))
    if r == 0 or not rows:
        return input.new_empty(0) if r == 0 else input.new_empty(0, r)
    return input[L.tensor(rows, device=input.device)]
