"""torch's view-copy functions (alias_copy, permute_copy, ... : the view op, then a copy
into a new contiguous tensor, as torch's results are), narrow_copy, the unsafe_ split
forms, and the top-level in-place forms (torch.sin_(x) is x.sin_()) and fill.

The copies keep the autograd graph (the view's backward, then the copy's), as torch's
do; out= writes the result into a given tensor with the engine's checks (its dtype must
be the result's). unsafe_chunk / unsafe_split differ from chunk / split in torch only in
skipping the view-tracking that guards in-place writes: lucid's pieces are the same views.
"""

import functools

from . import _C
from . import _dtype as D
from ._memory_format import contiguous_format
from ._tensor import Tensor


def _fresh(t):
    """A new contiguous tensor with t's values (kept in the autograd graph)."""
    return t.clone(memory_format=contiguous_format)


def _check_input(name, input):
    if not isinstance(input, Tensor):
        raise TypeError(f"{name}(): argument 'input' (position 1) must be Tensor, not {type(input).__name__}")


def _into_out(name, result, out):
    """result, or result written into out= as the engine's out= ops write (exact dtype)."""
    if out is None:
        return result
    if not isinstance(out, Tensor):
        raise TypeError(f"{name}(): argument 'out' must be Tensor, not {type(out).__name__}")
    _C._write_out(name, out, result, True)
    return out


def _with_out(name, fn):
    """fn with out=: one tensor, written as the engine's out= ops write (exact dtype)."""
    @functools.wraps(fn)
    def wrapper(input, *args, out=None, **kwargs):
        _check_input(name, input)
        return _into_out(name, fn(input, *args, **kwargs), out)
    return wrapper


def _with_outs(name, fn):
    """fn (returning a tuple of tensors) with out=: a list of as many tensors, each written
    with the engine's checks; the call then returns None, as torch's."""
    @functools.wraps(fn)
    def wrapper(input, *args, out=None, **kwargs):
        _check_input(name, input)
        results = fn(input, *args, **kwargs)
        if out is None:
            return results
        if not isinstance(out, (list, tuple)) or not all(isinstance(o, Tensor) for o in out):
            raise TypeError(f"{name}(): argument 'out' must be a list of Tensors, not {type(out).__name__}")
        if len(out) != len(results):
            raise RuntimeError(f"{name} expected an out= argument of size {len(results)}, got size {len(out)}")
        for o, r in zip(out, results):
            _C._write_out(name, o, r, True)
        return None
    return wrapper


def alias_copy(input):
    return _fresh(input)


def detach_copy(input):
    return _fresh(input.detach())


def view_copy(input, size):
    """input.view(size) copied; size may be a dtype (the bytes reinterpreted). Where no
    view of that size exists (strides that do not fold), a reshaped copy, as ATen's."""
    if isinstance(size, D.dtype):
        return _fresh(input.view(size))
    out = input.reshape(size)
    return _fresh(out) if out._storage_key == input._storage_key else out  # (reshape copied already)


def permute_copy(input, dims):
    return _fresh(input.permute(*dims))


def expand_copy(input, size, *, implicit=False):
    return _fresh(input.expand(*size))


def transpose_copy(input, dim0, dim1):
    return _fresh(input.transpose(dim0, dim1))


def t_copy(input):
    return _fresh(input.t())


def diagonal_copy(input, offset=0, dim1=0, dim2=1):
    return _fresh(input.diagonal(offset, dim1, dim2))


def select_copy(input, dim, index):
    return _fresh(input.select(dim, index))


def slice_copy(input, dim=0, start=None, end=None, step=1):
    """input[..., start:end:step, ...] along dim, copied (step must be positive)."""
    if step <= 0:
        raise RuntimeError("slice step must be positive")
    n = max(input.dim(), 1)
    if not -n <= dim < n:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], but got {dim})")
    key = (slice(None),) * (dim % n) + (slice(start, end, step),)
    return _fresh(input[key])


def squeeze_copy(input, dim=None):
    return _fresh(input.squeeze(dim))


def unsqueeze_copy(input, dim):
    return _fresh(input.unsqueeze(dim))


def unfold_copy(input, dimension, size, step):
    return _fresh(input.unfold(dimension, size, step))


def as_strided_copy(input, size, stride, storage_offset=None):
    return _fresh(input.as_strided(size, stride, storage_offset))


def view_as_real_copy(input):
    from ._complex import view_as_real
    return _fresh(view_as_real(input))


def view_as_complex_copy(input):
    from ._complex import view_as_complex
    return _fresh(view_as_complex(input))


def narrow_copy(input, dim, start, length):
    return _fresh(input.narrow(dim, start, length))


def unbind_copy(input, dim=0):
    return tuple(_fresh(t) for t in input.unbind(dim))


def _check_split_size(name, split_size):
    # (split itself also takes a list of sizes; these take one size, as torch's)
    if isinstance(split_size, bool) or not isinstance(split_size, int):
        raise TypeError(f"{name}(): argument 'split_size' (position 2) must be int, not {type(split_size).__name__}")


def split_copy(input, split_size, dim=0):
    _check_split_size("split_copy", split_size)
    return tuple(_fresh(t) for t in input.split(split_size, dim))


def split_with_sizes_copy(input, split_sizes, dim=0):
    return tuple(_fresh(t) for t in input.split_with_sizes(list(split_sizes), dim))


# the sparse members, copied (lucid's sparse tensors: COO and CSR)
def indices_copy(input):
    return _fresh(input.indices())


def values_copy(input):
    return _fresh(input.values())


def crow_indices_copy(input):
    return _fresh(input.crow_indices())


def col_indices_copy(input):
    return _fresh(input.col_indices())


_SPARSE_COPIES = (indices_copy, values_copy, crow_indices_copy, col_indices_copy)


def _with_sparse_out(name, fn):
    # (a sparse tensor is not a lucid.Tensor: the input check is the member method's own)
    @functools.wraps(fn)
    def wrapper(input, *, out=None):
        return _into_out(name, fn(input), out)
    return wrapper


def unsafe_chunk(input, chunks, dim=0):
    return tuple(input.chunk(chunks, dim))


def unsafe_split(input, split_size, dim=0):
    _check_split_size("unsafe_split", split_size)
    return tuple(input.split(split_size, dim))


def unsafe_split_with_sizes(input, split_sizes, dim=0):
    return tuple(input.split_with_sizes(list(split_sizes), dim))


def fill(input, value):
    """A new tensor of input's shape and dtype filled with value (a number, or a 0-d
    tensor, whose gradient is the sum of the result's)."""
    _check_input("fill", input)
    return input.clone().fill_(value)


_COPIES = (alias_copy, detach_copy, view_copy, permute_copy, expand_copy, transpose_copy, t_copy, diagonal_copy,
           select_copy, slice_copy, squeeze_copy, unsqueeze_copy, unfold_copy, as_strided_copy, view_as_real_copy,
           view_as_complex_copy, narrow_copy)
_COPIES_MANY = (unbind_copy, split_copy, split_with_sizes_copy)

# torch's top-level in-place functions that are the method of the same name
INPLACE = ("abs_", "acos_", "acosh_", "addmv_", "arccos_", "arccosh_", "arcsin_", "arcsinh_", "arctan_", "arctanh_",
           "as_strided_", "asin_", "asinh_", "atan_", "atanh_", "ceil_", "clamp_", "clamp_max_", "clamp_min_", "clip_",
           "conj_physical_", "cos_", "cosh_", "deg2rad_", "detach_", "erf_", "erfc_", "exp2_", "exp_", "expm1_",
           "fill_", "fix_", "floor_", "frac_", "gcd_", "i0_", "lcm_", "ldexp_", "log10_", "log1p_", "log2_", "log_",
           "logit_", "nan_to_num_", "neg_", "negative_", "rad2deg_", "reciprocal_", "relu_", "resize_as_", "round_",
           "rsqrt_", "sigmoid_", "sin_", "sinc_", "sinh_", "sqrt_", "square_", "tan_", "tanh_", "trunc_", "xlogy_",
           "zero_")


def _method_fn(name):
    def fn(input, *args, **kwargs):
        _check_input(name, input)
        return getattr(input, name)(*args, **kwargs)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"lucid.{name}(input, ...) is input.{name}(...): in place, returning input."
    return fn


def install(namespace):
    """Adds the functions to `namespace` (lucid's globals), leaving any name lucid has, and
    narrow_copy / unsafe_* as Tensor methods."""
    for fn in _COPIES:
        namespace.setdefault(fn.__name__, _with_out(fn.__name__, fn))
    for fn in _COPIES_MANY:
        namespace.setdefault(fn.__name__, _with_outs(fn.__name__, fn))
    for fn in _SPARSE_COPIES:
        namespace.setdefault(fn.__name__, _with_sparse_out(fn.__name__, fn))
    for fn in (unsafe_chunk, unsafe_split, unsafe_split_with_sizes, fill):
        namespace.setdefault(fn.__name__, fn)
    for name in INPLACE:
        if hasattr(Tensor, name):
            namespace.setdefault(name, _method_fn(name))
    for fn in (narrow_copy, unsafe_chunk, unsafe_split, unsafe_split_with_sizes):
        if not hasattr(Tensor, fn.__name__):
            setattr(Tensor, fn.__name__, fn)
