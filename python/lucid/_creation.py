"""Tensor creation: from data, filled, ranges, identity."""

from __future__ import annotations

import builtins

from . import _C
from . import _dtype as D
from . import _memory_format
from ._device import _resolve as _resolve_device
from ._device import get_default_device as _default_device
from ._size import _parse_size
from ._tensor import Tensor

__all__ = [
    "tensor", "as_tensor", "asarray", "from_numpy", "frombuffer", "from_dlpack", "zeros", "ones", "empty",
    "full", "zeros_like", "ones_like", "empty_like", "full_like", "arange", "linspace",
    "logspace", "eye",
]


def _finish(impl, dtype, device, requires_grad, pin_memory=False):
    """Casts, moves and flags a freshly built CPU tensor."""
    if dtype is not None and dtype._code != impl._dtype:
        impl = impl._clone(dtype._code)
    if pin_memory:
        pinned = _C.empty(list(impl._shape), impl._dtype, -1, True)
        pinned._copy(impl)
        impl = pinned
    if device is not None and device._code != impl._device:
        impl = impl._to_device(device._code)
    t = impl
    if requires_grad:
        t.requires_grad = True
    return t


def _opt_dtype(dtype):
    return None if dtype is None else D._check(dtype)


def _opt_device(device):
    return None if device is None else _resolve_device(device)


def tensor(data, *, dtype=None, device=None, requires_grad=False, pin_memory=False):
    """A new tensor that copies `data` (nested sequences, scalars, buffers, tensors); on
    the default device unless `device` is given (a tensor's copy stays on its device)."""
    dtype, device = _opt_dtype(dtype), _opt_device(device)
    if device is None and not isinstance(data, Tensor):
        device = _default_device()
    if isinstance(data, Tensor):
        impl = data.detach()._clone()
    else:
        impl = _C.from_data(data, -1 if dtype is None else dtype._code, D.get_default_dtype()._code)
    return _finish(impl, dtype, device, requires_grad, pin_memory)


def as_tensor(data, dtype=None, device=None):
    """Like tensor(), but shares memory with `data` when it can (tensors, buffers). An
    array goes to the default device, as tensor()'s data does: shared on the CPU, copied
    under a GPU default (torch's default device covers as_tensor too)."""
    dtype, device = _opt_dtype(dtype), _opt_device(device)
    if isinstance(data, Tensor):
        return data._to(dtype, device)
    if _C.is_numpy_like(data):
        return _C.from_buffer(data, False)._to(dtype, device or _default_device())
    if hasattr(data, "__dlpack__"):
        return from_dlpack(data)._to(dtype, device)
    return tensor(data, dtype=dtype, device=device)


def asarray(obj, *, dtype=None, device=None, copy=None, requires_grad=False):
    if copy:
        return tensor(obj, dtype=dtype, device=device, requires_grad=requires_grad)
    t = as_tensor(obj, dtype=dtype, device=device)
    if requires_grad:
        t.requires_grad = True
    return t


def from_numpy(ndarray):
    """A tensor sharing memory with a NumPy array (writes show up on both sides)."""
    if type(ndarray).__module__ != "numpy" or type(ndarray).__name__ != "ndarray":
        raise TypeError(f"expected np.ndarray (got {type(ndarray).__name__})")
    return _C.from_buffer(ndarray, False)


def frombuffer(buffer, *, dtype, count=-1, offset=0, requires_grad=False):
    """A 1-d tensor over the bytes of a buffer-protocol object, sharing its memory
    (a read-only buffer is copied instead: lucid never writes into immutable memory)."""
    t = _C.frombuffer(buffer, D._check(dtype)._code, count, offset)
    if requires_grad:
        t.requires_grad = True
    return t


def from_dlpack(ext):
    """A tensor sharing memory with a DLPack producer (an object with __dlpack__, or a capsule)."""
    if hasattr(ext, "__dlpack__"):
        kwargs = {}
        dev_type, dev_id = ext.__dlpack_device__()
        if dev_type == 2:  # CUDA: have the producer order its work before ours
            kwargs["stream"] = _C.gpu_stream_handle(dev_id)
        try:
            capsule = ext.__dlpack__(max_version=(1, 0), **kwargs)
        except TypeError:
            capsule = ext.__dlpack__(**kwargs)
    else:
        capsule = ext
    return _C.from_dlpack(capsule)


def _filled(size, value, dtype, device, requires_grad, pin_memory, what):
    shape = _parse_size(size, what)
    dtype = D.get_default_dtype() if dtype is None else D._check(dtype)
    device = _resolve_device(device)
    if value is None:
        impl = _C.empty(shape, dtype._code, device._code, pin_memory)
    else:
        impl = _C.full(shape, value, dtype._code, device._code, pin_memory)
    t = impl
    if requires_grad:
        t.requires_grad = True
    return t


def _dense_layout(layout, what):
    """torch's layout= of a creation function: lucid.strided (or None) makes a dense
    tensor; a sparse layout is for the functions that make an empty sparse tensor."""
    from . import _sparse
    if layout is not None and layout is not _sparse.strided:
        raise RuntimeError(f"{what}(): layout={layout} is not supported here (lucid makes sparse tensors with "
                           "lucid.zeros / empty and with lucid.sparse_coo_tensor / sparse_csr_tensor)")


def _empty_sparse(shape, layout, dtype, device, requires_grad, what):
    """torch.zeros(size, layout=torch.sparse_coo / sparse_csr): a sparse tensor with no entries."""
    from . import _sparse
    shape = _parse_size(shape, what)
    dtype = D.get_default_dtype() if dtype is None else D._check(dtype)
    values = _C.empty([0], dtype._code, _resolve_device(device)._code, False)
    if layout is _sparse.sparse_csr:
        if len(shape) != 2:
            raise RuntimeError(f"{what}(): lucid's CSR tensors are matrices, got size {tuple(shape)}")
        crow = _C.full([shape[0] + 1], 0, D.int64._code, values._device, False)
        out = _sparse.sparse_csr_tensor(crow, _C.empty([0], D.int64._code, values._device, False), values, shape)
    else:
        idx = _C.empty([len(shape), 0], D.int64._code, values._device, False)
        out = _sparse.sparse_coo_tensor(idx, values, shape, is_coalesced=True)
    return out.requires_grad_() if requires_grad else out


def _size_arg(args, size, what):
    """The size of f(2, 3), f((2, 3)) or f(size=(2, 3)), as _parse_size's varargs.
    A size= keyword must be a sequence (f(size=2) is a TypeError, as in PyTorch);
    f() with neither is a 0-d tensor."""
    if size is None:
        return args
    if args:
        raise TypeError(f"{what}() got multiple values for argument 'size'")
    if not isinstance(size, (tuple, list)):
        raise TypeError(f"{what}(): argument 'size' must be tuple of ints, not {type(size).__name__}")
    return (size,)


def empty(*args, size=None, dtype=None, layout=None, device=None, requires_grad=False, pin_memory=False,
          memory_format=None):
    shape = _size_arg(args, size, "empty")
    if layout is not None and layout._name.startswith("sparse"):
        return _empty_sparse(shape, layout, dtype, device, requires_grad, "empty")
    if memory_format is None:
        return _filled(shape, None, dtype, device, requires_grad, pin_memory, "empty")
    _memory_format._check(memory_format, "empty")
    if memory_format is _memory_format.preserve_format:
        raise RuntimeError("preserve memory format is unsupported by the contiguous operator")
    out = _memory_format.empty_as(list(shape), memory_format,
                                  lambda s: _filled(s, None, dtype, device, False, pin_memory, "empty"))
    if requires_grad:
        out.requires_grad = True
    return out


def zeros(*args, size=None, dtype=None, layout=None, device=None, requires_grad=False, pin_memory=False):
    if layout is not None and layout._name.startswith("sparse"):
        return _empty_sparse(_size_arg(args, size, "zeros"), layout, dtype, device, requires_grad, "zeros")
    return _filled(_size_arg(args, size, "zeros"), 0, dtype, device, requires_grad, pin_memory, "zeros")


def ones(*args, size=None, dtype=None, layout=None, device=None, requires_grad=False, pin_memory=False):
    _dense_layout(layout, "ones")
    return _filled(_size_arg(args, size, "ones"), 1, dtype, device, requires_grad, pin_memory, "ones")


def _scalar_dtype(value):
    if isinstance(value, builtins.bool):
        return D.bool
    if isinstance(value, builtins.int):
        return D.int64
    if isinstance(value, complex):
        return D._default_complex()
    if isinstance(value, builtins.float):
        return D.get_default_dtype()
    raise TypeError(f"full(): fill_value must be a number, but got {type(value).__name__}")


def full(size, fill_value, *, dtype=None, layout=None, device=None, requires_grad=False, pin_memory=False):
    _dense_layout(layout, "full")
    if isinstance(fill_value, Tensor) or type(fill_value).__module__ == "numpy":  # (a NumPy scalar: its number)
        fill_value = fill_value.item()
    if dtype is None:
        dtype = _scalar_dtype(fill_value)
    return _filled((size,), fill_value, dtype, device, requires_grad, pin_memory, "full")


def _like(input, fill_value, dtype, device, requires_grad, memory_format=None):
    """A tensor shaped like `input` and laid out as `memory_format` (by default
    preserve_format: as `input` when it is dense), optionally filled."""
    if not isinstance(input, Tensor):
        raise TypeError(f"expected a lucid.Tensor as input, but got {type(input).__name__}")
    dtype = input.dtype if dtype is None else D._check(dtype)
    device = input.device if device is None else _resolve_device(device)
    fmt = _memory_format.preserve_format if memory_format is None else _memory_format._check(memory_format,
                                                                                                "empty_like")
    if fmt is _memory_format.preserve_format:
        impl = _C.empty_like(input, dtype._code, device._code)
    else:
        impl = _memory_format.empty_as(list(input.shape), fmt, lambda s: _C.empty(s, dtype._code, device._code,
                                                                                  False))
    if fill_value is not None:
        # A fresh tensor: fill without counting a version (fill_ would).
        impl = _C.full_like(impl, fill_value.item() if isinstance(fill_value, Tensor) else fill_value)
    t = impl
    if requires_grad:
        t.requires_grad = True
    return t


def empty_like(input, *, dtype=None, layout=None, device=None, requires_grad=False, memory_format=None):
    _dense_layout(layout, "empty_like")
    return _like(input, None, dtype, device, requires_grad, memory_format)


def zeros_like(input, *, dtype=None, layout=None, device=None, requires_grad=False, memory_format=None):
    _dense_layout(layout, "zeros_like")
    return _like(input, 0, dtype, device, requires_grad, memory_format)


def ones_like(input, *, dtype=None, layout=None, device=None, requires_grad=False, memory_format=None):
    _dense_layout(layout, "ones_like")
    return _like(input, 1, dtype, device, requires_grad, memory_format)


def full_like(input, fill_value, *, dtype=None, layout=None, device=None, requires_grad=False, memory_format=None):
    _dense_layout(layout, "full_like")
    return _like(input, fill_value, dtype, device, requires_grad, memory_format)


def _number(v, what):
    if isinstance(v, Tensor):
        v = v.item()
    if isinstance(v, builtins.bool) or not isinstance(v, (builtins.int, builtins.float)):
        raise TypeError(f"{what} must be a real number, but got {type(v).__name__}")
    return v


def arange(start, end=None, step=1, *, dtype=None, device=None, requires_grad=False):
    if end is None:
        start, end = 0, start
    start, end, step = (_number(start, "start"), _number(end, "end"), _number(step, "step"))
    all_int = all(isinstance(v, builtins.int) for v in (start, end, step))
    if dtype is None:
        dtype = D.int64 if all_int else D.get_default_dtype()
    dtype, device = D._check(dtype), _resolve_device(device)
    if all_int and not dtype.is_floating_point:
        impl = _C.arange_int(start, end, step, dtype._code, device._code)
    else:
        impl = _C.arange(builtins.float(start), builtins.float(end), builtins.float(step),
                         dtype._code, device._code)
    return _finish(impl, None, None, requires_grad)


def linspace(start, end, steps, *, dtype=None, device=None, requires_grad=False):
    start, end = _number(start, "start"), _number(end, "end")
    dtype = D.get_default_dtype() if dtype is None else D._check(dtype)
    impl = _C.linspace(builtins.float(start), builtins.float(end), steps, dtype._code,
                       _resolve_device(device)._code)
    return _finish(impl, None, None, requires_grad)


def logspace(start, end, steps, base=10.0, *, dtype=None, device=None, requires_grad=False):
    start, end = _number(start, "start"), _number(end, "end")
    dtype = D.get_default_dtype() if dtype is None else D._check(dtype)
    impl = _C.logspace(builtins.float(start), builtins.float(end), steps, builtins.float(base),
                       dtype._code, _resolve_device(device)._code)
    return _finish(impl, None, None, requires_grad)


def eye(n, m=None, *, dtype=None, device=None, requires_grad=False):
    dtype = D.get_default_dtype() if dtype is None else D._check(dtype)
    impl = _C.eye(n, n if m is None else m, dtype._code, _resolve_device(device)._code)
    return _finish(impl, None, None, requires_grad)
