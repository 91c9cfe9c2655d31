"""lucid.sparse: torch.sparse's functions on sparse tensors (python/lucid/_sparse.py holds
the tensors themselves: lucid.sparse_coo_tensor, lucid.sparse_csr_tensor, Tensor.to_sparse).

Products take a sparse matrix on the left and a dense matrix (or vector) on the right,
through the CSR product primitive (cuSPARSE on the GPU), differentiable w.r.t. the dense
operand and the sparse one's values; sum, softmax and log_softmax work on the stored
entries only (torch's semantics: an absent entry is not a zero for softmax, it is left out).
"""

from __future__ import annotations

from ._sparse import SparseTensor, _linear_index, _wrap, sparse_coo, sparse_csr

__all__ = ["mm", "addmm", "spmm", "sum", "softmax", "log_softmax", "sampled_addmm", "spdiags",
           "check_sparse_tensor_invariants", "FloatTensor", "DoubleTensor", "HalfTensor", "BFloat16Tensor",
           "ByteTensor", "CharTensor", "ShortTensor", "IntTensor", "LongTensor"]


def _lucid():
    import lucid
    return lucid


def mm(mat1, mat2, reduce="sum"):
    """mat1 @ mat2 for a sparse mat1: a dense result for a dense mat2; a sparse one for a
    sparse mat2 (CSR when both are, else COO), with no dense intermediate."""
    if reduce != "sum":
        raise NotImplementedError(f"sparse.mm: reduce='{reduce}' (lucid has reduce='sum')")
    if not isinstance(mat1, SparseTensor):
        if isinstance(mat2, SparseTensor):
            return mat1 @ mat2
        return _lucid().mm(mat1, mat2)
    return mat1._mm(mat2, "sparse.mm")


spmm = mm


def addmm(mat, mat1, mat2, *, beta=1.0, alpha=1.0):
    """beta * mat + alpha * (mat1 @ mat2), mat dense, mat1 sparse, mat2 dense."""
    if not isinstance(mat1, SparseTensor):
        return _lucid().addmm(mat, mat1, mat2, beta=beta, alpha=alpha)
    if isinstance(mat, SparseTensor):
        mat = mat.to_dense()
    product = mat1._mm(mat2, "sparse.addmm")
    if alpha != 1:
        product = product * alpha
    if beta == 0:  # (torch: mat is not read, so its NaN does not spread)
        return product
    return product + (mat if beta == 1 else mat * beta)


def sampled_addmm(input, mat1, mat2, *, beta=1.0, alpha=1.0, out=None):
    """beta * input + alpha * (mat1 @ mat2) at input's entries only (input a sparse CSR
    matrix; mat1, mat2 dense): torch.sparse.sampled_addmm."""
    if not isinstance(input, SparseTensor) or input.layout is not sparse_csr:
        raise RuntimeError("sampled_addmm: Expected input to be a sparse CSR tensor")
    if mat1.dim() != 2 or mat2.dim() != 2 or mat1.shape[1] != mat2.shape[0] or \
            (mat1.shape[0], mat2.shape[1]) != tuple(input.shape):
        raise RuntimeError(f"sampled_addmm: mat1 {tuple(mat1.shape)} @ mat2 {tuple(mat2.shape)} does not give "
                           f"input's shape {tuple(input.shape)}")
    if out is not None and not isinstance(out, SparseTensor):
        raise TypeError(f"sampled_addmm(): argument 'out' must be a sparse tensor, not {type(out).__name__}")
    structure, values = input._structure()
    sampled = (mat1.index_select(0, structure.row) * mat2.mT.index_select(0, structure.col)).sum(-1)
    result = input._with_values(values * beta + sampled * alpha)
    if out is None:
        return result
    out.__dict__.update(result.__dict__)  # (out takes the result's members, as torch's out= resizes)
    return out


def sum(input, dim=None, dtype=None):
    """The sum of the stored entries: over all dims (a dense 0-d tensor), or over `dim`
    (a dense tensor when every sparse dim is reduced, else a coalesced sparse one)."""
    if not isinstance(input, SparseTensor):
        return input.sum(dtype=dtype) if dim is None else input.sum(dim, dtype=dtype)
    coo = input._sound()._coo()
    values = coo._val if dtype is None else coo._val.to(dtype)
    if dim is None:
        return values.sum()
    n, sd = input.dim(), coo.sparse_dim()
    dims = sorted({_wrap(d, n) for d in (dim if isinstance(dim, (list, tuple)) else [dim])})
    sparse_dims = [d for d in dims if d < sd]
    dense_dims = [d - sd + 1 for d in dims if d >= sd]
    if dense_dims:
        values = values.sum(dense_dims)
    if len(sparse_dims) == sd:
        return values.sum(0)
    keep = [d for d in range(sd) if d not in sparse_dims]
    L = _lucid()
    indices = coo._ind.index_select(0, L.tensor(keep, device=coo.device))
    size = [input.shape[d] for d in keep] + [input.shape[d] for d in range(sd, n) if d not in dims]
    out = SparseTensor(sparse_coo, size, values, indices, checked=True)
    return out.coalesce() if sparse_dims else out


def _softmax(input, dim, dtype, log):
    L = _lucid()
    name = "log_softmax" if log else "softmax"
    if not isinstance(input, SparseTensor):
        return getattr(L, name)(input, dim, dtype=dtype)
    csr = input.layout is sparse_csr
    coo = input._sound()._coo().coalesce()
    values = coo._val if dtype is None else coo._val.to(dtype)
    if not values.is_floating_point():
        raise RuntimeError(f"sparse.{name}: expected a floating point tensor, got {values.dtype}")
    n, sd = input.dim(), coo.sparse_dim()
    d = _wrap(dim, n)
    if d >= sd:  # along a dense dim: each entry's own dense slice
        values = getattr(L, name)(values, d - sd + 1)
    elif coo._nnz():
        others = [k for k in range(sd) if k != d]
        if others:
            rest = coo._ind.index_select(0, L.tensor(others, device=coo.device))
            keys, group = L.unique(_linear_index(rest, [input.shape[k] for k in others]), return_inverse=True)
            groups = keys.shape[0]
        else:
            group, groups = L.zeros(coo._nnz(), dtype=L.int64, device=coo.device), 1
        flat = values.reshape(values.shape[0], -1)
        index = group.unsqueeze(1).expand(*flat.shape)
        peak = L.full((groups, flat.shape[1]), float("-inf"), dtype=flat.dtype, device=flat.device)
        peak = peak.scatter_reduce(0, index, flat.detach(), "amax")
        shifted = flat - peak.index_select(0, group)
        e = shifted.exp()
        total = L.zeros(groups, flat.shape[1], dtype=flat.dtype, device=flat.device).index_add(0, group, e)
        out = shifted - total.log().index_select(0, group) if log else e / total.index_select(0, group)
        values = out.reshape(values.shape)
    result = SparseTensor(sparse_coo, coo.shape, values, coo._ind, coalesced=True, checked=True)
    return result.to_sparse_csr() if csr else result


def softmax(input, dim, *, dtype=None):
    """Softmax along `dim` over each slice's stored entries (absent entries take no share)."""
    return _softmax(input, dim, dtype, log=False)


def log_softmax(input, dim, *, dtype=None):
    """log of softmax, computed as entries minus the log of their slice's sum of exps."""
    return _softmax(input, dim, dtype, log=True)


def _legacy(name, dtype_name):
    def constructor(indices, values, size=None):
        """torch.sparse.<Type>Tensor(indices, values, size): a COO tensor of that dtype
        (the legacy spelling of sparse_coo_tensor that older GCN code uses)."""
        from ._sparse import sparse_coo_tensor
        return sparse_coo_tensor(indices, values, size, dtype=getattr(_lucid(), dtype_name))
    constructor.__name__ = constructor.__qualname__ = name
    return constructor


FloatTensor = _legacy("FloatTensor", "float32")
DoubleTensor = _legacy("DoubleTensor", "float64")
HalfTensor = _legacy("HalfTensor", "float16")
BFloat16Tensor = _legacy("BFloat16Tensor", "bfloat16")
ByteTensor = _legacy("ByteTensor", "uint8")
CharTensor = _legacy("CharTensor", "int8")
ShortTensor = _legacy("ShortTensor", "int16")
IntTensor = _legacy("IntTensor", "int32")
LongTensor = _legacy("LongTensor", "int64")


def spdiags(diagonals, offsets, shape, layout=None):
    """A sparse [m, n] matrix with row i of `diagonals` along diagonal offsets[i] (0 the
    main one, > 0 above it): entry (j - offsets[i], j) is diagonals[i, j], as scipy's and
    torch's spdiags (values past the matrix's edge are dropped). COO, or `layout`."""
    L = _lucid()
    if diagonals.dim() != 2:
        raise RuntimeError(f"Diagonals must be 2 dimensional, got {diagonals.dim()}")
    if offsets.dim() != 1:
        raise RuntimeError(f"Offsets must be 1 dimensional, got {offsets.dim()}")
    if offsets.shape[0] != diagonals.shape[0]:
        raise RuntimeError(f"Number of diagonals ({diagonals.shape[0]}) does not match the number of offsets "
                           f"({offsets.shape[0]})")
    if len(shape) != 2:
        raise RuntimeError(f"Output shape must be 2d, got {len(shape)} dims")
    offsets = offsets.to(device=diagonals.device, dtype=L.int64)
    if L.unique(offsets).numel() != offsets.numel():
        raise RuntimeError("Offset tensor contains duplicate values")
    m, n = int(shape[0]), int(shape[1])
    cols = L.arange(min(n, diagonals.shape[1]), device=diagonals.device)
    rows = cols.unsqueeze(0) - offsets.unsqueeze(1)  # [diagonals, columns]
    keep = (rows >= 0) & (rows < m)
    which, col = keep.nonzero().unbind(1)
    indices = L.stack([rows[which, col], col])
    from ._sparse import sparse_coo_tensor
    out = sparse_coo_tensor(indices, diagonals[which, col], (m, n)).coalesce()
    if layout is None or layout is sparse_coo:
        return out
    if layout is sparse_csr:
        return out.to_sparse_csr()
    raise RuntimeError(f"spdiags: layout {layout} is not supported (sparse_coo or sparse_csr)")


class check_sparse_tensor_invariants:
    """torch.sparse.check_sparse_tensor_invariants: lucid checks a sparse tensor's
    invariants (indices in range, CSR rows rising, columns sorted within a row) wherever
    one is made, always, so this context manager / decorator and enable() change nothing;
    disable() is accepted but the checks stay on (is_enabled() says True)."""

    def __init__(self, enable=True):
        self.state = enable

    @staticmethod
    def is_enabled():
        return True

    @staticmethod
    def enable():
        pass

    @staticmethod
    def disable():
        pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def __call__(self, fn):
        import functools

        @functools.wraps(fn)
        def wrapped(*args, **kwargs):
            with self:
                return fn(*args, **kwargs)
        return wrapped
