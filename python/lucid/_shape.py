"""Shape, gather and scatter ops: lucid.cat/stack/split/.../pad's building blocks.

The engine does the work (csrc/ops/shape_ops.cpp, csrc/ops/gather_ops.cpp); this
module parses PyTorch's spellings of the arguments (dims as varargs or a list,
src= or value=, ...) and composes the ops that are only arrangements of others
(stack, split, chunk, movedim, tile, take_along_dim, diag, trace). The
compositions are differentiable because their parts are.
"""

from __future__ import annotations

import builtins

from . import _C
from . import _dtype as D
from ._tensor import Tensor, _sizes_or_keyword, _wrap_dim

__all__ = [
    "cat", "concat", "concatenate", "stack", "hstack", "vstack", "atleast_1d", "atleast_2d", "split",
    "chunk", "tensor_split", "movedim", "moveaxis", "flip", "fliplr", "flipud", "roll", "tile",
    "gather", "scatter", "scatter_add", "index_select", "index_add", "masked_fill", "take_along_dim",
    "tril", "triu", "diag", "diagonal", "trace",
]


def _int_list(v, name, op):
    """An int or a sequence of ints (or a 0-d/1-d integer tensor) as a list."""
    if isinstance(v, Tensor):
        v = v.tolist()
    if isinstance(v, builtins.int) and not isinstance(v, builtins.bool):
        return [v]
    if isinstance(v, (tuple, list)) and all(isinstance(x, builtins.int) or
                                            (isinstance(x, Tensor) and x.ndim == 0) for x in v):
        return [builtins.int(x) for x in v]
    raise TypeError(f"{op}(): argument '{name}' must be an int or a tuple of ints, not {type(v).__name__}")


def _varargs(args, name, op):
    """x.flip(0, 1) and x.flip((0, 1)) alike."""
    if len(args) == 1 and not isinstance(args[0], builtins.int):
        return _int_list(args[0], name, op)
    return _int_list(list(args), name, op)


def _tensor_seq(tensors, op):
    if isinstance(tensors, Tensor) or not isinstance(tensors, (tuple, list)):
        raise TypeError(f"{op}(): argument 'tensors' must be a tuple or list of Tensors, not "
                        f"{type(tensors).__name__}")
    for i, t in enumerate(tensors):
        if not isinstance(t, Tensor):
            raise TypeError(f"{op}(): expected Tensor as element {i} in argument 0, but got "
                            f"{type(t).__name__}")
    return list(tensors)


# ---- joining -------------------------------------------------------------------------------

def cat(tensors, dim=0, *, out=None):
    return _C._cat(_tensor_seq(tensors, "cat"), dim)


def concat(tensors, dim=0, *, out=None):
    return cat(tensors, dim)


def concatenate(tensors, axis=0, *, out=None):
    return cat(tensors, axis)


def stack(tensors, dim=0, *, out=None):
    tensors = _tensor_seq(tensors, "stack")
    if not tensors:
        raise RuntimeError("stack expects a non-empty TensorList")
    shape = tensors[0].shape
    for i, t in enumerate(tensors):
        if t.shape != shape:
            raise RuntimeError(f"stack expects each tensor to be equal size, but got {list(shape)} at entry 0 "
                               f"and {list(t.shape)} at entry {i}")
    dim = _wrap_dim(dim, len(shape) + 1)
    return cat([t.unsqueeze(dim) for t in tensors], dim)


def atleast_1d(*tensors):
    ts = tensors[0] if len(tensors) == 1 and isinstance(tensors[0], (tuple, list)) else tensors
    out = tuple(t.reshape(1) if t.ndim == 0 else t for t in ts)
    return out[0] if len(tensors) == 1 and isinstance(tensors[0], Tensor) else out


def atleast_2d(*tensors):
    ts = tensors[0] if len(tensors) == 1 and isinstance(tensors[0], (tuple, list)) else tensors
    out = tuple(t.reshape(1, -1) if t.ndim < 2 else t for t in ts)
    return out[0] if len(tensors) == 1 and isinstance(tensors[0], Tensor) else out


def hstack(tensors, *, out=None):
    ts = atleast_1d(_tensor_seq(tensors, "hstack"))
    return cat(ts, 0 if ts and ts[0].ndim == 1 else 1)


def vstack(tensors, *, out=None):
    return cat(atleast_2d(_tensor_seq(tensors, "vstack")), 0)


# ---- splitting -----------------------------------------------------------------------------

def split(tensor, split_size_or_sections, dim=0):
    if tensor.ndim == 0:
        raise RuntimeError("split expects at least a 1-dimensional tensor")
    n = tensor.shape[_wrap_dim(dim, tensor.ndim)]
    if isinstance(split_size_or_sections, (tuple, list)):
        sizes = _int_list(list(split_size_or_sections), "split_size", "split")
        return tuple(_C._split_with_sizes(tensor, sizes, dim, False))
    size = builtins.int(split_size_or_sections)
    if size < 0:
        raise RuntimeError(f"split expects split_size be non-negative, but got split_size={size}")
    if size == 0 and n != 0:
        raise RuntimeError(f"split_size can only be 0 if dimension size is 0, but got dimension size of {n}")
    count = builtins.max((n + size - 1) // size, 1) if size else 1
    sizes = [size] * (count - 1) + [n - size * (count - 1)]
    return tuple(_C._split_with_sizes(tensor, sizes, dim, True))


def chunk(input, chunks, dim=0):
    if input.ndim == 0:
        raise RuntimeError("chunk expects at least a 1-dimensional tensor")
    if chunks <= 0:
        raise RuntimeError(f"chunk expects `chunks` to be greater than 0, got: {chunks}")
    n = input.shape[_wrap_dim(dim, input.ndim)]
    size = (n + chunks - 1) // chunks
    if size == 0 and n == 0:  # PyTorch: `chunks` empty pieces of an empty dimension
        return split(input, [0] * chunks, dim)
    return split(input, size, dim)


def tensor_split(input, indices_or_sections, dim=0):
    if input.ndim == 0:
        raise RuntimeError("tensor_split expects at least a 1-dimensional tensor, but got a tensor with 0 dims")
    dim = _wrap_dim(dim, input.ndim)
    n = input.shape[dim]
    ios = indices_or_sections
    if isinstance(ios, Tensor):
        if ios.dtype.is_floating_point or ios.dtype.is_complex or ios.ndim > 1:
            raise RuntimeError("tensor_split expected tensor_indices_or_sections to have a dtype of long and be "
                               "0-D or 1-D")
        ios = ios.item() if ios.ndim == 0 else ios.tolist()
    if isinstance(ios, (tuple, list)):
        # Python slices input[a:b] between consecutive indices (negative ones wrap).
        bounds = [0] + _int_list(list(ios), "indices", "tensor_split") + [None]
        return tuple(input._slice(dim, a, b, 1) for a, b in zip(bounds, bounds[1:]))
    sections = builtins.int(ios)
    if sections <= 0:
        raise RuntimeError(f"number of sections must be larger than 0, got {sections}")
    base, extra = divmod(n, sections)
    sizes = [base + 1] * extra + [base] * (sections - extra)
    return split(input, sizes, dim)


# ---- rearranging ---------------------------------------------------------------------------

def movedim(input, source, destination):
    src = _int_list(source, "source", "movedim")
    dst = _int_list(destination, "destination", "movedim")
    nd = input.ndim
    if len(src) != len(dst):
        raise RuntimeError(f"movedim: Invalid source or destination dims: source ({src} dims) should contain the "
                           f"same number of dims as destination ({dst} dims)")
    src = [_wrap_dim(d, nd) for d in src]
    dst = [_wrap_dim(d, nd) for d in dst]
    if len(set(src)) != len(src):
        raise RuntimeError(f"movedim: repeated dim in `source` ({list(source) if isinstance(source, (list, tuple)) else source})")
    if len(set(dst)) != len(dst):
        raise RuntimeError(f"movedim: repeated dim in `destination` ({list(destination) if isinstance(destination, (list, tuple)) else destination})")
    if nd == 0:
        return input._view([])
    order = [-1] * nd
    for s, d in zip(src, dst):
        order[d] = s
    rest = iter(d for d in range(nd) if d not in src)
    order = [o if o >= 0 else next(rest) for o in order]
    return input.permute(*order)


moveaxis = movedim


def flip(input, dims):
    return _C._flip(input, _int_list(dims, "dims", "flip"))


def fliplr(input):
    if input.ndim < 2:
        raise RuntimeError("Input must be >= 2-d.")
    return flip(input, [1])


def flipud(input):
    if input.ndim < 1:
        raise RuntimeError("Input must be >= 1-d.")
    return flip(input, [0])


def roll(input, shifts, dims=None):
    return _C._roll(input, _int_list(shifts, "shifts", "roll"),
                    [] if dims is None else _int_list(dims, "dims", "roll"))


def tile(input, dims):
    reps = _int_list(dims, "dims", "tile")
    reps = [1] * (input.ndim - len(reps)) + reps
    return _C._repeat(input, reps)


def tril(input, diagonal=0):
    return _C._tril(input, diagonal)


def triu(input, diagonal=0):
    return _C._triu(input, diagonal)


def diagonal(input, offset=0, dim1=0, dim2=1):
    return _C._diagonal(input, offset, dim1, dim2)


def diag(input, diagonal=0):
    if input.ndim == 1:
        m, k = input.shape[0], diagonal
        # v_i lands at flat position i * (m + 1) of the m x m matrix: append m zeros
        # to every element, then keep the first m * m.
        padded = cat([input.unsqueeze(1), input.new_zeros(m, m)], 1).reshape(-1)
        mat = padded.narrow(0, 0, m * m).reshape(m, m)
        if k == 0:
            return mat
        from .nn.functional import pad
        return pad(mat, (k, 0, 0, k) if k > 0 else (0, -k, -k, 0))
    if input.ndim == 2:
        return _C._diagonal(input, diagonal, 0, 1).clone()
    raise RuntimeError(f"diag(): Supports 1D or 2D tensors. Got {input.ndim}D")


def trace(input):
    if input.ndim != 2:
        raise RuntimeError(f"trace: expected a matrix, but got tensor with dim {input.ndim}")
    return _C._diagonal(input, 0, 0, 1).sum()


# ---- gather / scatter -------------------------------------------------------------------------

def gather(input, dim, index, *, sparse_grad=False, out=None):
    return _C._gather(input, dim, index)


def _reduce(reduce):
    if reduce is None:
        return ""
    if reduce not in ("add", "multiply"):
        raise RuntimeError(f"reduce argument must be either add or multiply, got {reduce}")
    return reduce


def scatter(input, dim, index, src=None, value=None, *, reduce=None):
    if (src is None) == (value is None):
        raise TypeError("scatter() expects exactly one of 'src' (a Tensor) or 'value' (a number)")
    what = src if src is not None else value
    if value is not None and isinstance(value, Tensor):
        raise TypeError("scatter(): argument 'value' must be a Number, not Tensor")
    return _C._scatter(input, dim, index, what, _reduce(reduce))


def scatter_add(input, dim, index, src):
    return _C._scatter_add(input, dim, index, src)


def index_select(input, dim, index, *, out=None):
    return _C._index_select(input, dim, index)


def index_add(input, dim, index, source, *, alpha=1, out=None):
    return _C._index_add(input, dim, index, source, alpha)


def masked_fill(input, mask, value):
    if not isinstance(value, (Tensor, builtins.bool, builtins.int, builtins.float, builtins.complex)):
        raise TypeError(f"masked_fill(): argument 'value' must be Number or Tensor, not {type(value).__name__}")
    return _C._masked_fill(input, mask, value)


def take_along_dim(input, indices, dim=None, *, out=None):
    # PyTorch: the flattened form goes straight to gather (int32 too); with a dim, int64 only.
    if indices.dtype not in ((D.int64, D.int32) if dim is None else (D.int64,)):
        raise RuntimeError(f"torch.take_along_dim(): dtype of indices should be Long but got {indices.dtype}")
    if dim is None:
        return gather(input.reshape(-1), 0, indices.reshape(-1))
    if input.ndim != indices.ndim:
        raise RuntimeError("torch.take_along_dim(): input and indices should have the same number of dimensions, "
                           f"but got {input.ndim} dimensions for input, and {indices.ndim} dimensions for indices")
    dim = _wrap_dim(dim, input.ndim)
    in_shape, ix_shape = list(input.shape), list(indices.shape)
    for d in range(input.ndim):
        if d == dim:
            continue
        a, b = in_shape[d], ix_shape[d]
        if a != b and a != 1 and b != 1:
            raise RuntimeError(f"The size of tensor a ({a}) must match the size of tensor b ({b}) at "
                               f"non-singleton dimension {d}")
        in_shape[d] = ix_shape[d] = builtins.max(a, b) if a and b else 0
    return gather(input.expand(*in_shape), dim, indices.expand(*ix_shape))


# ---- Tensor methods -------------------------------------------------------------------------------

def _inplace(fn):
    """self.<op>_(...): the out-of-place result written back into self. copy_'s
    CopyBackwards hands self's gradient to the result, whose graph reaches self's
    old history, so the gradient of an in-place op comes out right."""
    def method(self, *args, **kwargs):
        self.copy_(fn(self, *args, **kwargs))
        return self
    return method


def _methods():
    def flip_m(self, *dims, **keyword):
        dims = _sizes_or_keyword(dims, keyword, "dims", "flip")
        return flip(self, _varargs(dims, "dims", "flip"))

    def repeat_m(self, *sizes, **keyword):
        sizes = _sizes_or_keyword(sizes, keyword, "repeats", "repeat")
        if not sizes:
            raise TypeError('repeat() missing 1 required positional arguments: "repeats"')
        return _C._repeat(self, _varargs(sizes, "sizes", "repeat"))

    def split_m(self, split_size, dim=0):  # (the method's parameter is torch's split_size)
        return split(self, split_size, dim)

    def tile_m(self, *dims):
        return tile(self, _varargs(dims, "dims", "tile"))

    def roll_m(self, shifts, dims=None):
        return roll(self, shifts, dims)

    def scatter_m(self, dim, index, src=None, value=None, *, reduce=None):
        if src is not None and value is None and not isinstance(src, Tensor):
            src, value = None, src  # x.scatter(dim, index, 1.5): the value overload
        return scatter(self, dim, index, src, value, reduce=reduce)

    m = {
        "flip": flip_m, "fliplr": fliplr, "flipud": flipud, "roll": roll_m, "repeat": repeat_m,
        "tile": tile_m, "split": split_m, "chunk": chunk, "tensor_split": tensor_split, "movedim": movedim,
        "moveaxis": movedim, "tril": tril, "triu": triu, "diag": diag, "diagonal": diagonal, "trace": trace,
        "gather": gather, "scatter": scatter_m, "scatter_add": scatter_add, "index_select": index_select,
        "index_add": index_add, "masked_fill": masked_fill, "take_along_dim": take_along_dim,
    }
    for name in ("tril", "triu", "scatter", "scatter_add", "index_add", "masked_fill"):
        m[name + "_"] = _inplace(m[name])
    return m


for _name, _fn in _methods().items():
    setattr(Tensor, _name, _fn)
del _name, _fn
