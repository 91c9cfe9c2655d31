"""Basic indexing: ints, slices (positive steps), None, Ellipsis, and 0-d integer
tensors used as ints. Every result is a view of the same storage."""

from __future__ import annotations

from . import _C


def _is_tensor(x):
    return isinstance(x, _C.Tensor)


def _apply(impl, key):
    if not isinstance(key, tuple):
        key = (key,)
    consumed = sum(1 for k in key if k is not None and k is not Ellipsis)
    if sum(1 for k in key if k is Ellipsis) > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    if consumed > impl.ndim:
        raise IndexError(f"too many indices for tensor of dimension {impl.ndim}")
    dim = 0  # position in the tensor being built
    # PyTorch's out-of-range message names the position in the index tuple.
    for position, k in enumerate(key):
        if k is None:
            impl = impl._unsqueeze(dim)
            dim += 1
        elif k is Ellipsis:
            dim += impl.ndim - dim - (consumed - _consumed_before(key, k))
        elif isinstance(k, slice):
            step = 1 if k.step is None else _int(k.step)
            if step <= 0:
                raise ValueError("step must be greater than zero")
            start = None if k.start is None else _int(k.start)
            stop = None if k.stop is None else _int(k.stop)
            impl = impl._slice(dim, start, stop, step)
            dim += 1
        elif isinstance(k, bool):
            raise IndexError("indexing with a Python bool is not supported yet; use a slice or None")
        elif hasattr(k, "__index__") and (not _is_tensor(k) or k.ndim == 0):
            if _is_tensor(k) and (k.dtype.is_floating_point or k.dtype.is_complex):
                raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
            i, n = k.__index__(), impl._shape[dim]
            if not -n <= i < n:
                raise IndexError(f"index {i} is out of bounds for dimension {position} with size {n}")
            impl = impl._select(dim, i)
        elif _is_tensor(k) or isinstance(k, (list, tuple)):
            raise IndexError("advanced indexing with tensors or lists is not supported yet: lucid "
                             "supports ints, slices, None and ... (basic indexing)")
        else:
            raise IndexError("only integers, slices (`:`), ellipsis (`...`), None and long or byte "
                             f"Variables are valid indices (got {type(k).__name__})")
    return impl


def _consumed_before(key, ellipsis):
    n = 0
    for k in key:
        if k is ellipsis:
            return n
        if k is not None:
            n += 1
    return n


def _int(v):
    if not hasattr(v, "__index__"):
        raise TypeError(f"slice indices must be integers or None, not {type(v).__name__}")
    return v.__index__()


def getitem(impl, key):
    out = _apply(impl, key)
    return impl._view(list(impl._shape)) if out is impl else out


def setitem(impl, key, value):
    target = _apply(impl, key)
    if _is_tensor(value):
        target._copy(value)
    elif isinstance(value, (bool, int, float, complex)):
        target._fill(value)
    else:
        from ._dtype import get_default_dtype

        src = _C.from_data(value, target._dtype, get_default_dtype()._code)
        target._copy(src)
