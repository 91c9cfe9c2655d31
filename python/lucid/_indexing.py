"""t[key] and t[key] = value, as PyTorch parses them.

Basic parts of a key (ints, slices with positive steps, None, Ellipsis, 0-d integer
tensors used as ints) are applied first as views. Advanced parts (integer tensors,
lists, tuples inside the key, ranges, bool masks, Python bools) are collected, one
per dimension of that view, and handed to the engine's index / index_put_
(csrc/ops/index_ops.h), which places the broadcast index shape where PyTorch does
(Note [Advanced index placement]). A key with only basic parts gives a view of the
same storage; one with advanced parts gives a copy.
"""

from __future__ import annotations

from . import _C

_BOOL, _UINT8, _INT64 = 0, 1, 5  # engine dtype codes (python/lucid/_dtype.py)


def _is_tensor(x):
    return isinstance(x, _C.Tensor)


def _is_mask(t):
    return t._dtype in (_BOOL, _UINT8)


def _as_tuple(key):
    """PyTorch's treatSequenceAsTuple: x[[0, slice(None)]] means x[0, :], while
    x[[0, 1]] is an index tensor."""
    if isinstance(key, tuple):
        return key
    if isinstance(key, list) and len(key) < 32 and any(
            _is_tensor(k) or isinstance(k, (list, tuple, range, slice)) or k is None or k is Ellipsis for k in key):
        return tuple(key)
    return (key,)


def _list_to_index(seq):
    """A (nested) list, tuple or range used as an index: bools stay a mask, numbers
    become int64 (an empty one too)."""
    from ._dtype import get_default_dtype

    t = _C.from_data(list(seq) if isinstance(seq, range) else seq, -1, get_default_dtype()._code)
    if t._dtype in (_BOOL, _UINT8, _INT64):
        return t
    if t.dtype.is_complex:
        raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
    return t._clone(_INT64, None, False)  # floats truncate, as PyTorch's indexing_tensor_from_data


def _is_ndarray(k):
    return type(k).__name__ == "ndarray" and type(k).__module__ == "numpy" and k.ndim > 0


def _ndarray_index(a):
    """A NumPy array used as an index, as torch takes one: a bool (or uint8) mask, or integers as int64."""
    import numpy

    from ._creation import from_numpy

    if a.dtype.kind not in "biu":
        raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
    keep = a.dtype == numpy.bool_ or a.dtype == numpy.uint8
    return from_numpy(numpy.array(a, dtype=a.dtype if keep else numpy.int64))


def _bool_index(value):
    """The index a Python bool (or 0-d mask) stands for, after a new size-1 dimension
    is inserted: that dimension kept (True) or emptied (False)."""
    return _C.full([1 if value else 0], 0, _INT64, -1, False)


def _apply(impl, key):
    """Applies the basic parts of `key`; returns (view, indices) where indices is
    None for a purely basic key, else one entry (None or a tensor) per leading
    dimension of the view."""
    key = tuple(_list_to_index(k) if isinstance(k, (list, tuple, range)) else _ndarray_index(k) if _is_ndarray(k)
                else k for k in _as_tuple(key))
    if sum(1 for k in key if k is Ellipsis) > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    specified = 0
    for k in key:
        if _is_tensor(k):
            specified += k.ndim if _is_mask(k) else 1
        elif k is not None and k is not Ellipsis and not isinstance(k, bool):
            specified += 1
    if specified > impl.ndim:
        raise IndexError(f"too many indices for tensor of dimension {impl.ndim}")
    ndim = impl.ndim
    dim = 0  # position in the tensor being built
    indices = None

    def record(t, width):
        nonlocal indices, dim
        if indices is None:
            indices = []
        indices.extend([None] * (dim + 1 - len(indices)))
        indices[dim] = t
        dim += width

    # PyTorch's out-of-range message for an int names the position in the index tuple.
    for position, k in enumerate(key):
        if k is None:
            impl = impl._unsqueeze(dim)
            dim += 1
        elif k is Ellipsis:
            dim += ndim - specified
        elif isinstance(k, slice):
            step = 1 if k.step is None else _int(k.step)
            if step <= 0:
                raise ValueError("step must be greater than zero")
            start = None if k.start is None else _int(k.start)
            stop = None if k.stop is None else _int(k.stop)
            if start is not None or stop is not None or step != 1:  # `:` leaves the tensor itself
                impl = impl._slice(dim, start, stop, step)
            dim += 1
        elif isinstance(k, bool) or (_is_tensor(k) and k.ndim == 0 and _is_mask(k)):
            impl = impl._unsqueeze(dim)
            record(_bool_index(bool(k._item()) if _is_tensor(k) else k), 1)
        elif _is_tensor(k) and k.ndim > 0:
            record(k, k.ndim if _is_mask(k) else 1)
        elif hasattr(k, "__index__"):
            if _is_tensor(k) and (k.dtype.is_floating_point or k.dtype.is_complex):
                raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
            i, n = k.__index__(), impl._shape[dim]
            if not -n <= i < n:
                raise IndexError(f"index {i} is out of bounds for dimension {position} with size {n}")
            impl = impl._select(dim, i)
        else:
            raise IndexError("only integers, slices (`:`), ellipsis (`...`), None and long or byte "
                             f"Variables are valid indices (got {type(k).__name__})")
    return impl, indices


def _int(v):
    if not hasattr(v, "__index__"):
        raise TypeError(f"slice indices must be integers or None, not {type(v).__name__}")
    return v.__index__()


def _select_ints(impl, key):
    """t[i] and t[i, j, ...] with plain ints (a dataset's every item): selects, no key
    to parse. None when `key` is anything else."""
    if type(key) is int:
        key = (key,)
    elif type(key) is not tuple or not key or not all(type(k) is int for k in key):
        return None
    shape = impl._shape
    if len(key) > len(shape):
        raise IndexError(f"too many indices for tensor of dimension {len(shape)}")
    for position, i in enumerate(key):
        n = shape[position]
        if not -n <= i < n:
            raise IndexError(f"index {i} is out of bounds for dimension {position} with size {n}")
        impl = impl._select(0, i)
    return impl


def getitem(impl, key):
    out = _select_ints(impl, key)
    if out is not None:
        return out
    out, indices = _apply(impl, key)
    if indices is not None:
        return out._index(indices)
    return impl._view(list(impl._shape)) if out is impl else out


def _value_tensor(target, value):
    if _is_tensor(value):
        return value
    if isinstance(value, (bool, int, float, complex)):
        return _C.full([], value, target._dtype, target._device, False)
    from ._dtype import get_default_dtype

    src = _C.from_data(value, target._dtype, get_default_dtype()._code)
    return src if target._device < 0 else src._to_device(target._device)


def setitem(impl, key, value):
    target, indices = _apply(impl, key)
    if indices is None:
        if _is_tensor(value):
            target._copy(value)
        elif isinstance(value, (bool, int, float, complex)):
            target._fill(value)
        else:
            target._copy(_value_tensor(target, value))
        return
    value = _value_tensor(target, value)
    defined = [t for t in indices if t is not None]
    if value.ndim == 0 and value._dtype != target._dtype and len(defined) == 1 and defined[0]._dtype == _BOOL:
        # PyTorch writes x[mask] = 0-d tensor as masked_fill_, which casts the value
        value = value.to(target.dtype)
    # PyTorch drops the value's leading size-1 dimensions (x[idx] = v[None] works).
    shape = list(value._shape)
    lead = 0
    while lead < len(shape) and shape[lead] == 1:
        lead += 1
    if lead:
        value = value._view(shape[lead:])
    target._index_put_(indices, value, False)
