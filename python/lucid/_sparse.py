"""Sparse tensors in torch's COO and CSR layouts (torch.sparse_coo, torch.sparse_csr).

A sparse tensor is a Python object over dense lucid tensors, as torch's is over its
members: COO holds `indices` (int64 [sparse_dim, nnz]) and `values` ([nnz, *dense
dims]); CSR a matrix's `crow_indices` (int64 [rows + 1]), `col_indices` (int64 [nnz])
and `values` ([nnz]). Its arithmetic is dense ops on those members, so gradients reach
the values through the ops' own autograd; the one engine primitive is the product of a
CSR matrix with a dense one (_C._csr_matmul: lucid's loop on the CPU, cuSPARSE on the
GPU), which every sparse @ dense form goes through (Note [Sparse products]).

Index soundness: a kernel trusts its indices, so they are checked where a sparse tensor
is made (in range, CSR rows rising from 0 to nnz: a few reductions and one wait for the
device) and checked again before a product if an index tensor was written in place
since (the tensors' version counters say so), never read out of bounds.

Note [Sparse products]
A @ B for sparse A runs on A's CSR form: for COO, its coalesced entries (sorted by row,
then column) are CSR's in the same order, so the CSR arrays are the row counts' prefix
sum and the column indices, and the values are COO's own. The gradient w.r.t. B is
A^T @ G: the transposed matrix's CSR form (a stable sort of the entries by column) is
made once per sparse tensor and kept with it, with the permutation that orders the
values (torch transposes and sorts again on every backward). The gradient w.r.t. the
values is G's and B's rows dotted entry by entry (sampled dense-dense product).
"""

from __future__ import annotations

import builtins

from . import _C
from ._size import Size
from ._tensor import Tensor, _parse_to_args
from .autograd import Function

__all__ = ["layout", "strided", "sparse_coo", "sparse_csr", "SparseTensor", "sparse_coo_tensor",
           "sparse_csr_tensor"]


class layout:
    """A tensor's memory layout (torch.layout): lucid.strided, sparse_coo or sparse_csr."""

    def __init__(self, name):
        self._name = name

    def __repr__(self):
        return f"lucid.{self._name}"

    def __reduce__(self):  # (pickled by name: unpickling gives the same object)
        return self._name


strided = layout("strided")
sparse_coo = layout("sparse_coo")
sparse_csr = layout("sparse_csr")


def _lucid():
    import lucid
    return lucid


def _as_index(data, device, what):
    L = _lucid()
    t = data if isinstance(data, Tensor) else L.as_tensor(data, dtype=L.int64)
    if t.dtype not in (L.int64, L.int32):
        raise RuntimeError(f"{what} must be an int64 tensor, but got {t.dtype}")
    return t.to(device=device, dtype=L.int64) if device is not None else t.to(dtype=L.int64)


def _as_values(data, dtype, device):
    L = _lucid()
    t = data if isinstance(data, Tensor) else L.as_tensor(data, dtype=dtype)
    if dtype is not None or device is not None:
        t = t.to(dtype=dtype, device=device)
    return t


class _Structure:
    """What the kernels read of a sparse matrix [rows, cols]: its CSR arrays, each
    entry's row, and (made at first need) the transposed matrix's structure with the
    permutation taking this matrix's values to its order (Note [Sparse products])."""

    def __init__(self, crow, col, row, rows, cols):
        self.crow, self.col, self.row, self.rows, self.cols = crow, col, row, rows, cols
        self._transposed = None

    def transposed(self):
        if self._transposed is None:
            L = _lucid()
            perm = L.argsort(self.col, stable=True)  # (rows stay in order within a column)
            row_t = self.col.index_select(0, perm)  # (A^T's rows are A's columns)
            t = _Structure(_crow_from_rows(row_t, self.cols), self.row.index_select(0, perm), row_t, self.cols,
                           self.rows)
            self._transposed = (t, perm)
        return self._transposed


def _crow_from_rows(row, rows):
    """CSR row offsets of entries sorted by row."""
    L = _lucid()
    counts = L.bincount(row, minlength=rows) if row.numel() else L.zeros(rows, dtype=L.int64, device=row.device)
    return L.cat([L.zeros(1, dtype=L.int64, device=row.device), counts.cumsum(0)])


class _CsrMatmul(Function):
    """values and B -> A @ B, A the sparse matrix of `structure` (Note [Sparse products])."""

    @staticmethod
    def forward(ctx, values, dense, structure):
        ctx.structure = structure
        ctx.save_for_backward(values, dense)
        return _C._csr_matmul(structure.crow, structure.col, values, dense, structure.rows)

    @staticmethod
    def backward(ctx, g):
        values, dense = ctx.saved_tensors
        s = ctx.structure
        g_values = g_dense = None
        if ctx.needs_input_grad[0]:
            g_values = (g.index_select(0, s.row) * dense.index_select(0, s.col)).sum(-1)
        if ctx.needs_input_grad[1]:
            t, perm = s.transposed()
            g_dense = _CsrMatmul.apply(values.index_select(0, perm), g, t)
        return g_values, g_dense, None


class SparseTensor:
    """A sparse tensor: torch's sparse COO or CSR tensor (made by lucid.sparse_coo_tensor,
    lucid.sparse_csr_tensor or Tensor.to_sparse*). Not a lucid.Tensor: the dense ops
    refuse it, except the products, which take it as torch's do."""

    def __init__(self, lay, size, values, indices=None, crow=None, col=None, coalesced=False, checked=False):
        self._layout, self._size, self._val = lay, Size(size), values
        self._ind, self._crow, self._col = indices, crow, col
        self._coalesced = coalesced
        self._checked = None
        self._cache = {}
        if checked:
            self._checked = self._stamp()
        else:
            self._check()

    # ---- soundness ------------------------------------------------------------------
    def _index_tensors(self):
        return (self._ind,) if self._layout is sparse_coo else (self._crow, self._col)

    def _stamp(self):
        return tuple((id(t), t._version) for t in self._index_tensors())

    def _check(self):
        """Raise unless the indices are sound for the size (see the module's doc)."""
        self._cache.clear()
        if self._layout is sparse_coo:
            _check_coo(self._ind, self._val, self._size, self._coalesced)
        else:
            self._cache["rows"] = _check_csr(self._crow, self._col, self._val, self._size)
        self._checked = self._stamp()

    def _csr_rows(self):
        """Each CSR entry's row (kept: the check makes it, a product and _coo need it)."""
        if "rows" not in self._cache:
            self._cache["rows"] = _rows_of(self._crow)
        return self._cache["rows"]

    def _sound(self):
        if self._stamp() != self._checked:  # an index tensor was written in place since
            self._check()
        return self

    # ---- metadata -------------------------------------------------------------------
    @property
    def layout(self):
        return self._layout

    @property
    def is_sparse(self):
        return self._layout is sparse_coo

    @property
    def is_sparse_csr(self):
        return self._layout is sparse_csr

    @property
    def shape(self):
        return self._size

    def size(self, dim=None):
        return self._size if dim is None else self._size[_wrap(dim, len(self._size))]

    def dim(self):
        return len(self._size)

    ndimension = dim

    @property
    def ndim(self):
        return len(self._size)

    def numel(self):
        n = 1
        for s in self._size:
            n *= s
        return n

    def __len__(self):
        if not self._size:
            raise TypeError("len() of a 0-d tensor")
        return self._size[0]

    @property
    def dtype(self):
        return self._val.dtype

    @property
    def device(self):
        return self._val.device

    @property
    def is_cuda(self):
        return self._val.is_cuda

    @property
    def is_cpu(self):
        return self._val.is_cpu

    def sparse_dim(self):
        return self._ind.shape[0] if self._layout is sparse_coo else 2

    def dense_dim(self):
        return self._val.dim() - 1

    def _nnz(self):
        return self._val.shape[0]

    def is_coalesced(self):
        if self._layout is not sparse_coo:
            raise RuntimeError("is_coalesced expected sparse coordinate tensor layout but got Sparse"
                               + ("Csr" if self._layout is sparse_csr else ""))
        return self._coalesced

    def is_floating_point(self):
        return self._val.is_floating_point()

    def is_complex(self):
        return self._val.is_complex()

    # ---- members --------------------------------------------------------------------
    def _require(self, lay, what):
        if self._layout is not lay:
            name = "Sparse" if lay is sparse_coo else "SparseCsr"
            have = "Sparse" if self._layout is sparse_coo else "SparseCsr"
            raise RuntimeError(f"{what} expected layout {name} but got {have}")

    def _indices(self):
        self._require(sparse_coo, "_indices")
        return self._ind

    def indices(self):
        self._require(sparse_coo, "indices")
        if not self._coalesced:
            raise RuntimeError("Cannot get indices on an uncoalesced tensor, please call .coalesce() first")
        return self._ind

    def _values(self):
        return self._val

    def values(self):
        if self._layout is sparse_coo and not self._coalesced:
            raise RuntimeError("Cannot get values on an uncoalesced tensor, please call .coalesce() first")
        return self._val

    def crow_indices(self):
        self._require(sparse_csr, "crow_indices")
        return self._crow

    def col_indices(self):
        self._require(sparse_csr, "col_indices")
        return self._col

    # ---- autograd (through the values) ----------------------------------------------
    @property
    def requires_grad(self):
        return self._val.requires_grad

    @requires_grad.setter
    def requires_grad(self, flag):
        self.requires_grad_(flag)

    def requires_grad_(self, requires_grad=True):
        if requires_grad and not self._val.is_leaf:
            self._val = self._val.detach()
        self._val.requires_grad_(requires_grad)
        return self

    @property
    def is_leaf(self):
        return self._val.is_leaf

    @property
    def grad_fn(self):
        return self._val.grad_fn

    @property
    def grad(self):
        """The gradient w.r.t. this tensor, on its entries (torch's: coalesced, each
        position's gradient once, however often the position is stored)."""
        g = self._val.grad
        if g is None:
            return None
        if self._layout is sparse_csr or self._coalesced:
            return self._with_values(g)
        unique, inverse = self._sound()._coalescing()
        L = _lucid()
        once = L.zeros((unique.shape[1],) + tuple(g.shape[1:]), dtype=g.dtype, device=g.device)
        once[inverse] = g  # (a repeated position's entries all have its gradient)
        return SparseTensor(sparse_coo, self._size, once, unique, coalesced=True, checked=True)

    def detach(self):
        return self._with_values(self._val.detach())

    def clone(self):
        s = self._with_values(self._val.clone())
        s._ind = None if self._ind is None else self._ind.clone()
        s._crow = None if self._crow is None else self._crow.clone()
        s._col = None if self._col is None else self._col.clone()
        s._checked, s._cache = s._stamp(), {}
        return s

    def _with_values(self, values):
        """This tensor's indices (shared, with what is kept of them) and other values."""
        self._sound()
        s = SparseTensor(self._layout, self._size, values, self._ind, self._crow, self._col, self._coalesced,
                         checked=True)
        s._cache = self._cache
        return s

    # ---- conversions ----------------------------------------------------------------
    def coalesce(self):
        """The same tensor with each index once (duplicates summed), sorted (torch's coalesce)."""
        self._require(sparse_coo, "coalesce")
        if self._coalesced:
            return self
        self._sound()
        unique, inverse = self._coalescing()
        L = _lucid()
        values = L.zeros((unique.shape[1],) + tuple(self._val.shape[1:]), dtype=self.dtype, device=self.device)
        values = values.index_add(0, inverse, self._val)
        return SparseTensor(sparse_coo, self._size, values, unique, coalesced=True, checked=True)

    def _coalescing(self):
        """(the sorted distinct indices, each entry's slot among them), kept for the indices."""
        if "coalescing" not in self._cache:
            L = _lucid()
            linear = _linear_index(self._ind, self._size[:self.sparse_dim()])
            keys, inverse = L.unique(linear, sorted=True, return_inverse=True)
            self._cache["coalescing"] = (_unravel(keys, self._size[:self.sparse_dim()]), inverse)
        return self._cache["coalescing"]

    def to_dense(self, dtype=None, *, masked_grad=None):
        """The dense tensor (entries absent from the sparse one are zero)."""
        L = _lucid()
        self._sound()
        coo = self._coo()
        out = L.zeros(tuple(self._size), dtype=self.dtype, device=self.device)
        if coo._nnz():
            out = out.index_put(tuple(coo._ind.unbind(0)), coo._val, accumulate=True)
        return out if dtype is None else out.to(dtype)

    def _coo(self):
        """This tensor in COO (CSR: its entries in row order, coalesced when it is)."""
        if self._layout is sparse_coo:
            return self
        L = _lucid()
        row = self._csr_rows()  # (CSR's columns rise within a row: coalesced)
        return SparseTensor(sparse_coo, self._size, self._val, L.stack([row, self._col]), coalesced=True,
                            checked=True)

    def to_sparse(self, sparse_dim=None, *, layout=None, blocksize=None, dense_dim=None):
        if layout is None or layout is sparse_coo:
            if sparse_dim is not None and sparse_dim != self.sparse_dim():
                raise RuntimeError(f"to_sparse: conversion from sparse with sparse_dim {self.sparse_dim()} to "
                                   f"sparse_dim {sparse_dim} is not supported")
            return self.to_sparse_coo()
        if layout is sparse_csr:
            return self.to_sparse_csr(dense_dim)
        raise RuntimeError(f"to_sparse: layout {layout} is not supported (lucid has sparse_coo and sparse_csr)")

    def to_sparse_coo(self):
        return self._coo() if self._layout is sparse_csr else self

    def to_sparse_csr(self, dense_dim=None):
        if self._layout is sparse_csr:
            return self
        if self.sparse_dim() != 2 or self.dense_dim() != 0 or dense_dim:
            raise RuntimeError("to_sparse_csr: lucid's CSR tensors are matrices (2 sparse dims, no dense dims); "
                               f"got sparse_dim {self.sparse_dim()}, dense_dim {self.dense_dim()}")
        s = self.coalesce()._sound()
        row, col = s._ind.unbind(0)
        return SparseTensor(sparse_csr, self._size, s._val, crow=_crow_from_rows(row, self._size[0]), col=col,
                            checked=True)

    def to(self, *args, **kwargs):
        dtype, device, copy = _parse_to_args(self._val, args, kwargs)
        values = self._val._to(dtype, device, copy)
        if values.device == self.device and not copy:
            return self if values is self._val else self._with_values(values)
        move = lambda t: None if t is None else t.to(device=values.device)  # noqa: E731
        return SparseTensor(self._layout, self._size, values, move(self._ind), move(self._crow),
                            move(self._col), self._coalesced, checked=True)

    def cpu(self):
        return self.to("cpu")

    def cuda(self, device=None, non_blocking=False):
        return self.to("gpu" if device is None else (f"gpu:{device}" if isinstance(device, int) else device))

    gpu = cuda

    def float(self):
        return self.to(_lucid().float32)

    def double(self):
        return self.to(_lucid().float64)

    def half(self):
        return self.to(_lucid().float16)

    def type(self, dtype=None):
        return str(self.dtype) if dtype is None else self.to(dtype)

    # ---- arithmetic -----------------------------------------------------------------
    def _map_values(self, fn, linear=False):
        """fn of each entry (fn(0) = 0). A nonlinear fn takes each position's sum: an
        uncoalesced tensor is coalesced first."""
        s = self if linear or self._layout is sparse_csr else self.coalesce()
        return s._with_values(fn(s._val))

    def __neg__(self):
        return self._map_values(lambda v: -v, linear=True)

    def __mul__(self, other):
        if isinstance(other, (builtins.int, builtins.float, builtins.bool)) or (
                isinstance(other, Tensor) and other.dim() == 0):
            return self._map_values(lambda v: v * other, linear=True)
        if isinstance(other, SparseTensor):
            return _mul_sparse(self, other)
        return NotImplemented

    __rmul__ = __mul__

    def __truediv__(self, other):
        if isinstance(other, (builtins.int, builtins.float)) or (isinstance(other, Tensor) and other.dim() == 0):
            return self._map_values(lambda v: v / other, linear=True)
        return NotImplemented

    def __add__(self, other):
        if isinstance(other, SparseTensor):
            return _add_sparse(self, other)
        if isinstance(other, Tensor):
            return self.to_dense() + other
        return NotImplemented

    __radd__ = __add__

    def __sub__(self, other):
        if isinstance(other, SparseTensor):
            return _add_sparse(self, -other)
        if isinstance(other, Tensor):
            return self.to_dense() - other
        return NotImplemented

    def __rsub__(self, other):
        if isinstance(other, Tensor):
            return other - self.to_dense()
        return NotImplemented

    def add(self, other, *, alpha=1):
        return self + (other * alpha if alpha != 1 else other)

    def sub(self, other, *, alpha=1):
        return self - (other * alpha if alpha != 1 else other)

    def mul(self, other):
        return self * other

    def div(self, other):
        return self / other

    def neg(self):
        return -self

    def abs(self):
        return self._map_values(lambda v: v.abs())

    def sqrt(self):
        return self._map_values(lambda v: v.sqrt())

    def square(self):
        return self._map_values(lambda v: v.square())

    def pow(self, exponent):
        if not isinstance(exponent, (builtins.int, builtins.float)) or exponent <= 0:
            raise RuntimeError("pow of a sparse tensor takes a positive number as the exponent (zero must stay zero)")
        return self._map_values(lambda v: v.pow(exponent))

    def sin(self):
        return self._map_values(lambda v: v.sin())

    def tanh(self):
        return self._map_values(lambda v: v.tanh())

    def relu(self):
        return self._map_values(lambda v: v.relu())

    def sign(self):
        return self._map_values(lambda v: v.sign())

    def t(self):
        if self.dim() != 2:
            raise RuntimeError(f"t() expects a tensor with <= 2 sparse and 0 dense dimensions, but got {self.dim()}"
                               " dimensions")
        return self.transpose(0, 1)

    def transpose(self, dim0, dim1):
        n = self.dim()
        d0, d1 = _wrap(dim0, n), _wrap(dim1, n)
        coo = self._coo()
        sd = coo.sparse_dim()
        if (d0 < sd) != (d1 < sd):
            raise RuntimeError("transpose(): a sparse dim can be swapped only with a sparse dim, a dense one with a "
                               "dense one")
        size = list(self._size)
        size[d0], size[d1] = size[d1], size[d0]
        if d0 < sd:
            order = list(range(sd))
            order[d0], order[d1] = order[d1], order[d0]
            L = _lucid()
            idx = coo._ind.index_select(0, L.tensor(order, device=self.device))
            out = SparseTensor(sparse_coo, size, coo._val, idx, coalesced=d0 == d1 and coo._coalesced,
                               checked=True)
        else:
            out = SparseTensor(sparse_coo, size, coo._val.transpose(d0 - sd + 1, d1 - sd + 1), coo._ind,
                               coalesced=coo._coalesced, checked=True)
        return out.to_sparse_csr() if self._layout is sparse_csr else out

    # ---- products ---------------------------------------------------------------------
    def _structure(self):
        """This matrix's _Structure, kept until its indices change; and its values in that
        structure's order (differentiable: an uncoalesced COO's are summed per index)."""
        self._sound()
        if self.dim() != 2 or self.dense_dim() != 0:
            raise RuntimeError(f"sparse products take a sparse matrix (2 sparse dims, no dense dims); got sparse_dim "
                               f"{self.sparse_dim()}, dense_dim {self.dense_dim()}")
        if self._layout is sparse_csr:
            if "structure" not in self._cache:
                self._cache["structure"] = _Structure(self._crow, self._col, self._csr_rows(), *self._size)
            return self._cache["structure"], self._val
        if self._coalesced:
            indices, values = self._ind, self._val
        else:
            indices, inverse = self._coalescing()
            L = _lucid()
            values = L.zeros(indices.shape[1], dtype=self.dtype, device=self.device).index_add(0, inverse, self._val)
        if "structure" not in self._cache:
            row, col = indices.unbind(0)
            self._cache["structure"] = _Structure(_crow_from_rows(row, self._size[0]), col, row, *self._size)
        return self._cache["structure"], values

    def _mm(self, dense, name):
        if isinstance(dense, SparseTensor):
            return self._mm_sparse(dense, name)
        if not isinstance(dense, Tensor):
            raise TypeError(f"{name}(): argument 'mat2' (position 2) must be Tensor, not {type(dense).__name__}")
        vector = dense.dim() == 1
        if dense.dim() not in (1, 2):
            raise RuntimeError(f"{name}: a sparse matrix multiplies a matrix or a vector, got a {dense.dim()}-d "
                               "tensor")
        if self.dim() == 2 and dense.shape[0] != self._size[1]:
            raise RuntimeError(f"{name}: mat1 and mat2 shapes cannot be multiplied ({self._size[0]}x{self._size[1]}"
                               f" and {'x'.join(map(str, dense.shape))})")
        if dense.dtype != self.dtype:
            raise RuntimeError(f"{name}: expected mat1 and mat2 to have the same dtype, but got: {self.dtype} != "
                               f"{dense.dtype}")
        structure, values = self._structure()
        out = _CsrMatmul.apply(values, dense.unsqueeze(1) if vector else dense, structure)
        return out.squeeze(1) if vector else out

    def mm(self, mat2):
        return self._mm(mat2, "mm")

    def matmul(self, other):
        return self._mm(other, "matmul")

    def _mm_sparse(self, other, name):
        """self @ other of two sparse matrices, sparse (CSR when both are, else coalesced
        COO), never dense: every product of an entry a[i, k] with an entry b[k, j] (B's row
        k found through its CSR row starts), then the products of one (i, j) summed by
        coalesce. Differentiable w.r.t. both value sets (gathers, then index_add)."""
        L = _lucid()
        if self.dim() != 2 or other.dim() != 2 or self._size[1] != other._size[0]:
            raise RuntimeError(f"{name}: mat1 and mat2 shapes cannot be multiplied ({'x'.join(map(str, self._size))}"
                               f" and {'x'.join(map(str, other._size))})")
        if other.dtype != self.dtype:
            raise RuntimeError(f"{name}: expected mat1 and mat2 to have the same dtype, but got: {self.dtype} != "
                               f"{other.dtype}")
        if other.device != self.device:
            raise RuntimeError(f"{name}: expected mat1 and mat2 on one device, got {self.device} and {other.device}")
        a, va = self._structure()
        b, vb = other._structure()
        row_starts = b.crow[:-1].index_select(0, a.col)  # where B's row k begins, for each a[i, k]
        counts = b.crow[1:].index_select(0, a.col) - row_starts
        total = int(counts.sum()) if counts.numel() else 0  # (the result's size: one host read)
        entry = L.repeat_interleave(L.arange(counts.shape[0], device=self.device), counts, output_size=total)
        first = counts.cumsum(0) - counts  # each A entry's first product
        b_entry = row_starts.index_select(0, entry) + L.arange(total, device=self.device) - first.index_select(0, entry)
        values = va.index_select(0, entry) * vb.index_select(0, b_entry)
        indices = L.stack([a.row.index_select(0, entry), b.col.index_select(0, b_entry)])
        out = SparseTensor(sparse_coo, (self._size[0], other._size[1]), values, indices, checked=True).coalesce()
        both_csr = self._layout is sparse_csr and other._layout is sparse_csr
        return out.to_sparse_csr() if both_csr else out

    def mv(self, vec):
        if not isinstance(vec, Tensor) or vec.dim() != 1 or self.dim() != 2:
            got = vec.dim() if isinstance(vec, Tensor) else type(vec).__name__
            raise RuntimeError(f"mv: two tensor dim should be 2 and 1, but got SparseTensor Dim: {self.dim()}"
                               f"Tensor Dim: {got}")
        if vec.shape[0] != self._size[1]:
            raise RuntimeError("mv: expected self.size(-1) == vec.size(-1)")
        return self._mm(vec, "mv")

    def index_select(self, dim, index):
        """torch's index_select of a COO tensor: for each position j of `index`, the
        entries whose index along `dim` is index[j] (in their order), now at j; not
        coalesced (unless at most one). A dense dim selects from the values."""
        L = _lucid()
        if self._layout is not sparse_coo:
            raise NotImplementedError(f"index_select is not supported for the {self._layout} layout (torch's is "
                                      "COO only); .to_sparse_coo() gives a COO tensor")
        if not isinstance(index, Tensor) or index.dim() != 1 or index.dtype not in (L.int64, L.int32):
            raise IndexError("index_select() argument index must be 1-D strided (non-sparse) long-tensor.")
        dim = _wrap(dim, self.dim())
        size = self._size[dim]
        index = index.to(device=self.device, dtype=L.int64)
        outside = (index < -size) | (index >= size)
        if index.numel() and bool(outside.any()):
            bad = index[outside][0].item()
            raise IndexError(f"index_select(): index contains {bad} that is out of range for tensor of size "
                             f"{list(self._size)} at dimension {dim}")
        index = L.where(index < 0, index + size, index)
        shape = list(self._size)
        shape[dim] = index.numel()
        sparse_dims = self.sparse_dim()
        if dim >= sparse_dims:  # a dense dim: the values' own
            values = self._val.index_select(dim - sparse_dims + 1, index)
            return SparseTensor(sparse_coo, shape, values, self._ind, coalesced=self._coalesced, checked=True)
        # the entries of each wanted index, found in the entries sorted by their index
        # along dim (stable, so each index's entries keep their order)
        key = self._ind[dim]
        order = L.argsort(key, stable=True)
        ordered = key.index_select(0, order)
        low = L.searchsorted(ordered, index)
        counts = L.searchsorted(ordered, index, right=True) - low
        total = int(counts.sum()) if counts.numel() else 0
        position = L.repeat_interleave(L.arange(index.numel(), device=self.device), counts, output_size=total)
        first = counts.cumsum(0) - counts
        entry = order.index_select(0, low.index_select(0, position) + L.arange(total, device=self.device)
                                   - first.index_select(0, position))
        indices = self._ind.index_select(1, entry).clone()
        indices[dim] = position
        return SparseTensor(sparse_coo, shape, self._val.index_select(0, entry), indices, coalesced=total <= 1,
                            checked=True)  # (one entry or none is coalesced, as torch marks it)

    def __matmul__(self, other):
        return self._mm(other, "matmul")

    def __rmatmul__(self, other):
        if not isinstance(other, Tensor):
            return NotImplemented
        return _dense_times_sparse(other, self)

    def sum(self, dim=None, keepdim=False, dtype=None):
        from . import sparse
        return sparse.sum(self, dim, dtype=dtype)

    def sparse_mask(self, mask):
        """This tensor's values at `mask`'s indices (torch's Tensor.sparse_mask)."""
        return self.to_dense().sparse_mask(mask)

    def __repr__(self):
        L = _lucid()
        if self._layout is sparse_coo:
            members = f"indices={self._ind!r},\n       values={self._val!r}"
        else:
            members = (f"crow_indices={self._crow!r},\n       col_indices={self._col!r},\n"
                       f"       values={self._val!r}")
        extra = "" if self.dtype == L.get_default_dtype() else f", dtype={self.dtype}"
        return f"tensor({members}, size={tuple(self._size)}, nnz={self._nnz()}{extra}, layout={self._layout})"

    def __bool__(self):
        raise RuntimeError("Boolean value of a sparse Tensor is ambiguous (use .to_dense())")

    def __getattr__(self, name):  # (only for names the class does not have)
        if not name.startswith("_") and hasattr(Tensor, name):
            raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}': Tensor.{name} is not "
                                 f"supported for the {self.__dict__.get('_layout')} layout; .to_dense() gives the dense "
                                 "tensor")
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __reduce__(self):
        """Pickled as its members (lucid.save / load keep a sparse tensor whole)."""
        if self._layout is sparse_coo:
            return _rebuild, (sparse_coo, tuple(self._size), self._val.detach(), self._ind, self._coalesced)
        return _rebuild, (sparse_csr, tuple(self._size), self._val.detach(), (self._crow, self._col), False)


def _rebuild(lay, size, values, indices, coalesced):
    """A pickled sparse tensor (also what lucid.load(weights_only=True) allows: the
    members are checked as any new sparse tensor's, so a damaged file raises)."""
    members = indices if lay is sparse_csr else (indices,)
    if lay not in (sparse_coo, sparse_csr) or not isinstance(values, Tensor) or not all(
            isinstance(t, Tensor) for t in members) or len(members) != (2 if lay is sparse_csr else 1) or not all(
            isinstance(n, builtins.int) for n in size):
        raise RuntimeError("a pickled sparse tensor is damaged: expected (layout, sizes, values, indices)")
    if lay is sparse_coo:
        return SparseTensor(sparse_coo, size, values, indices, coalesced=bool(coalesced))
    return SparseTensor(sparse_csr, size, values, crow=indices[0], col=indices[1])


def _wrap(dim, n):
    if not -max(n, 1) <= dim < max(n, 1):
        raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], but got {dim})")
    return dim % n if n else 0


def _linear_index(indices, sizes):
    """Each entry's row-major position among the sparse dims (int64; checked not to wrap)."""
    total = 1
    for s in sizes:
        total *= s
    if total >= 2 ** 63:
        raise RuntimeError(f"sparse tensor of sparse size {tuple(sizes)}: more positions than int64 counts")
    linear = None
    for d, s in enumerate(sizes):
        linear = indices[d] if linear is None else linear * s + indices[d]
    return linear


def _unravel(linear, sizes):
    L = _lucid()
    rows = []
    for s in reversed(sizes):
        rows.append(linear.remainder(s))
        linear = linear.div(s, rounding_mode="floor")
    return L.stack(rows[::-1]) if rows else L.zeros(0, linear.numel(), dtype=L.int64, device=linear.device)


def _rows_of(crow):
    """Each CSR entry's row."""
    L = _lucid()
    return L.repeat_interleave(L.arange(crow.shape[0] - 1, device=crow.device), crow.diff())


def _check_coo(indices, values, size, coalesced):
    L = _lucid()
    if indices.dtype != L.int64 or indices.dim() != 2:
        raise RuntimeError(f"indices must be an int64 tensor of 2 dims [sparse_dim, nnz], got {indices.dtype} "
                           f"{tuple(indices.shape)}")
    if values.dim() < 1 or values.shape[0] != indices.shape[1]:
        raise RuntimeError(f"indices and values must have the same number of entries (nnz), but got "
                           f"{indices.shape[1]} and {tuple(values.shape)}")
    if indices.device != values.device:
        raise RuntimeError(f"indices and values must be on the same device, got {indices.device} and {values.device}")
    sd = indices.shape[0]
    if len(size) != sd + values.dim() - 1:
        raise RuntimeError(f"number of dimensions must be sparse_dim ({sd}) + dense_dim ({values.dim() - 1}), but "
                           f"got {len(size)}")
    if tuple(size[sd:]) != tuple(values.shape[1:]):
        raise RuntimeError(f"values has incorrect size, expected {[values.shape[0]] + list(size[sd:])}, got "
                           f"{list(values.shape)}")
    if any(s < 0 for s in size):
        raise RuntimeError(f"sparse tensor size {tuple(size)} has a negative entry")
    if indices.shape[1] == 0:
        return
    low, high = indices.amin(1).tolist(), indices.amax(1).tolist()
    for d in range(sd):
        if low[d] < 0:
            raise RuntimeError(f"found negative index {low[d]} for dim {d}")
        if high[d] >= size[d]:
            raise RuntimeError(f"size is inconsistent with indices: for dim {d}, size is {size[d]} but found index "
                               f"{high[d]}")
    if coalesced and indices.shape[1] > 1:
        linear = _linear_index(indices, size[:sd])
        if not bool((linear[1:] > linear[:-1]).all()):
            raise RuntimeError("is_coalesced=True, but the indices are not sorted and distinct (call .coalesce(), "
                               "or leave is_coalesced unset)")


def _check_csr(crow, col, values, size):
    """Raise unless (crow, col, values) is a sound CSR matrix of `size`; each entry's row."""
    L = _lucid()
    if len(size) != 2:
        raise RuntimeError(f"lucid's CSR tensors are matrices: size must have 2 dims, got {tuple(size)}")
    rows, cols = size
    for name, t in (("crow_indices", crow), ("col_indices", col)):
        if t.dtype != L.int64 or t.dim() != 1:
            raise RuntimeError(f"{name} must be a 1-d int64 tensor, got {t.dtype} {tuple(t.shape)}")
        if t.device != values.device:
            raise RuntimeError(f"{name} and values must be on the same device, got {t.device} and {values.device}")
    if values.dim() != 1:
        raise RuntimeError(f"values of a CSR tensor must be 1-d (lucid has no dense dims in CSR), got "
                           f"{tuple(values.shape)}")
    nnz = values.shape[0]
    if crow.shape[0] != rows + 1:
        raise RuntimeError(f"crow_indices.shape[-1] must be equal to the number of rows + 1 (={rows + 1}), but got "
                           f"{crow.shape[0]}")
    if col.shape[0] != nnz:
        raise RuntimeError(f"col_indices and values must have the same number of entries, got {col.shape[0]} and "
                           f"{nnz}")
    first, last = crow[0].item(), crow[-1].item()
    if first != 0:
        raise RuntimeError(f"crow_indices[0] must be 0, but got {first}")
    if last != nnz:
        raise RuntimeError(f"crow_indices[-1] must be nnz (={nnz}), but got {last}")
    if rows and bool((crow.diff() < 0).any()):
        raise RuntimeError("crow_indices must be non-decreasing (each row's count of entries is their difference)")
    if nnz:
        low, high = col.amin().item(), col.amax().item()
        if low < 0 or high >= cols:
            raise RuntimeError(f"col_indices must lie in [0, {cols}), but found {low if low < 0 else high}")
    row = _rows_of(crow)
    if nnz > 1:
        linear = row * cols + col
        if not bool((linear[1:] > linear[:-1]).all()):
            raise RuntimeError("col_indices must be sorted and distinct within each row (torch's CSR invariant)")
    return row


def _add_sparse(a, b):
    L = _lucid()
    if tuple(a.shape) != tuple(b.shape):
        raise RuntimeError(f"add: expected sizes to match, got {tuple(a.shape)} and {tuple(b.shape)}")
    csr = a._layout is sparse_csr
    a, b = a._coo(), b._coo()
    if a.sparse_dim() != b.sparse_dim():
        raise RuntimeError("add: sparse tensors of different sparse_dim")
    dtype = L.promote_types(a.dtype, b.dtype)
    s = SparseTensor(sparse_coo, a._size, L.cat([a._val.to(dtype), b._val.to(dtype)]),
                     L.cat([a._ind, b._ind], 1), checked=True).coalesce()
    return s.to_sparse_csr() if csr else s


def _mul_sparse(a, b):
    """Elementwise product: the entries both have."""
    L = _lucid()
    if tuple(a.shape) != tuple(b.shape):
        raise RuntimeError(f"mul: expected sizes to match, got {tuple(a.shape)} and {tuple(b.shape)}")
    csr = a._layout is sparse_csr
    a, b = a._coo().coalesce(), b._coo().coalesce()
    sizes = a._size[:a.sparse_dim()]
    la, lb = _linear_index(a._ind, sizes), _linear_index(b._ind, sizes)
    pos = L.searchsorted(lb, la).clamp(max=max(lb.numel() - 1, 0))
    hit = (lb[pos] == la) if lb.numel() else L.zeros(la.shape, dtype=L.bool, device=la.device)
    keep = hit.nonzero().squeeze(1)
    values = a._val.index_select(0, keep) * b._val.index_select(0, pos.index_select(0, keep))
    s = SparseTensor(sparse_coo, a._size, values, a._ind.index_select(1, keep), coalesced=True, checked=True)
    return s.to_sparse_csr() if csr else s


def _dense_times_sparse(dense, s):
    """D @ S = (S^T @ D^T)^T."""
    if dense.dim() == 1:
        return s.t()._mm(dense, "matmul")
    return s.t()._mm(dense.mT, "matmul").mT


def _product(name, a, b, out):
    """lucid.mm / lucid.matmul with a sparse operand (their second overload, bindings/sparse.cpp)."""
    if isinstance(a, SparseTensor):
        result = a._mm(b, name)
    elif isinstance(b, SparseTensor) and isinstance(a, Tensor):
        result = _dense_times_sparse(a, b)
    else:
        bad, arg = (a, "input") if not isinstance(a, (Tensor, SparseTensor)) else (b, "mat2" if name == "mm" else
                                                                                     "other")
        raise TypeError(f"{name}(): argument '{arg}' (position {1 if arg == 'input' else 2}) must be Tensor, not "
                        f"{type(bad).__name__}")
    if out is not None:
        _C._write_out(name, out, result, False)
        return out
    return result


# ---- constructors ---------------------------------------------------------------------

def sparse_coo_tensor(indices, values, size=None, *, dtype=None, device=None, pin_memory=False,
                      requires_grad=False, check_invariants=None, is_coalesced=None):
    """A sparse tensor in COO layout (torch.sparse_coo_tensor): entry k is values[k] at
    position indices[:, k]; repeated positions add up (until coalesce). size: inferred
    from the largest index per dim when not given."""
    from ._device import _resolve as _resolve_device
    device = None if device is None else _resolve_device(device)
    values = _as_values(values, dtype, device)
    indices = _as_index(indices, values.device, "indices")
    if indices.dim() == 1 and indices.numel() == 0:
        indices = indices.reshape(1, 0)
    if size is None:
        if indices.dim() != 2:
            raise RuntimeError(f"indices must be an int64 tensor of 2 dims [sparse_dim, nnz], got "
                               f"{tuple(indices.shape)}")
        high = indices.amax(1).tolist() if indices.shape[1] else [-1] * indices.shape[0]
        size = [h + 1 for h in high] + list(values.shape[1:])
    if requires_grad:
        values = values.detach().requires_grad_()
    return SparseTensor(sparse_coo, tuple(size), values, indices, coalesced=bool(is_coalesced))


def sparse_csr_tensor(crow_indices, col_indices, values, size=None, *, dtype=None, device=None, pin_memory=False,
                      requires_grad=False, check_invariants=None):
    """A sparse matrix in CSR layout (torch.sparse_csr_tensor): row i's entries are
    values[crow_indices[i]:crow_indices[i+1]] in columns col_indices[...]. size:
    (rows, largest column + 1) when not given."""
    from ._device import _resolve as _resolve_device
    device = None if device is None else _resolve_device(device)
    values = _as_values(values, dtype, device)
    crow = _as_index(crow_indices, values.device, "crow_indices")
    col = _as_index(col_indices, values.device, "col_indices")
    if size is None:
        size = (crow.shape[0] - 1, (col.amax().item() + 1) if col.numel() else 0)
    if requires_grad:
        values = values.detach().requires_grad_()
    return SparseTensor(sparse_csr, tuple(size), values, crow=crow, col=col)


# ---- dense tensors' side ------------------------------------------------------------------

def _dense_to_sparse(self, sparse_dim=None, *, layout=None, blocksize=None, dense_dim=None):
    if layout is sparse_csr:
        return _dense_to_sparse_csr(self, dense_dim)
    if layout not in (None, sparse_coo):
        raise RuntimeError(f"to_sparse: layout {layout} is not supported (lucid has sparse_coo and sparse_csr)")
    return _dense_to_coo(self, self.dim() if sparse_dim is None else sparse_dim)


def _dense_to_coo(x, sparse_dim):
    """x's entries that are not zero (for sparse_dim < x.dim(): its slices over the first
    sparse_dim dims that hold a nonzero), in row-major order."""
    L = _lucid()
    if not 0 <= sparse_dim <= x.dim():
        raise RuntimeError(f"to_sparse: sparse_dim {sparse_dim} out of range for a {x.dim()}-d tensor")
    if sparse_dim == 0:  # (one entry: the whole tensor)
        return SparseTensor(sparse_coo, tuple(x.shape), x.unsqueeze(0), L.zeros(0, 1, dtype=L.int64, device=x.device),
                            coalesced=True, checked=True)
    nonzero = x != 0
    if sparse_dim < x.dim():
        nonzero = nonzero.flatten(sparse_dim).any(-1)
    idx = nonzero.nonzero().T
    return SparseTensor(sparse_coo, tuple(x.shape), x[tuple(idx.unbind(0))], idx, coalesced=True, checked=True)


def _dense_to_sparse_csr(x, dense_dim=None):
    if x.dim() != 2 or dense_dim:
        raise RuntimeError(f"to_sparse_csr: lucid's CSR tensors are matrices, got a {x.dim()}-d tensor")
    return _dense_to_coo(x, 2).to_sparse_csr()


def _dense_sparse_mask(self, mask):
    """self's entries at `mask`'s indices, as a sparse tensor of mask's layout."""
    if not isinstance(mask, SparseTensor):
        raise TypeError(f"sparse_mask(): argument 'mask' must be a sparse tensor, not {type(mask).__name__}")
    if tuple(self.shape) != tuple(mask.shape):
        raise RuntimeError(f"sparse_mask(): operands have incompatible sizes {tuple(self.shape)} and "
                           f"{tuple(mask.shape)}")
    coo = mask._coo().coalesce()
    values = self[tuple(coo._ind.unbind(0))] if coo.sparse_dim() else self.unsqueeze(0)
    s = SparseTensor(sparse_coo, coo._size, values, coo._ind, coalesced=True, checked=True)
    return s.to_sparse_csr() if mask._layout is sparse_csr else s


def install(ns):
    """Tensor's sparse-facing methods and lucid's sparse names (import time)."""
    Tensor.layout = property(lambda self: strided)
    Tensor.is_sparse = property(lambda self: False)
    Tensor.is_sparse_csr = property(lambda self: False)
    Tensor.to_sparse = _dense_to_sparse
    Tensor.to_sparse_coo = lambda self: _dense_to_coo(self, self.dim())
    Tensor.to_sparse_csr = _dense_to_sparse_csr
    Tensor.to_dense = lambda self, dtype=None, *, masked_grad=None: self if dtype is None else self.to(dtype)
    Tensor.sparse_mask = _dense_sparse_mask
    dense_addmm = ns["addmm"]

    def addmm(input, mat1, mat2, *, beta=1, alpha=1, out=None):
        if isinstance(mat1, SparseTensor):
            from . import sparse
            result = sparse.addmm(input, mat1, mat2, beta=beta, alpha=alpha)
            if out is None:
                return result
            _C._write_out("addmm", out, result, False)
            return out
        return dense_addmm(input, mat1, mat2, beta=beta, alpha=alpha, out=out)

    addmm.__doc__ = dense_addmm.__doc__
    ns["addmm"] = addmm
    for name in ("layout", "strided", "sparse_coo", "sparse_csr", "sparse_coo_tensor", "sparse_csr_tensor"):
        ns[name] = globals()[name]
