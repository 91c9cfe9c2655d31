"""PyTorch's legacy tensor API, which real programs still use: the constructor
lucid.Tensor(...), the typed classes lucid.FloatTensor, lucid.LongTensor, ...
(and lucid.cuda.FloatTensor, ...), Tensor.type / type_as, and the is_<backend>
flags of backends lucid does not have.

Note [Legacy constructor]: lucid.Tensor is the engine's class (_tensor.py), so its
constructor is bound in C++ (csrc/bindings/tensor.cpp) and forwards the call to
tensor_new here. As torch.Tensor's, the forms are: Tensor() (1-d, no elements),
Tensor(*sizes) and Tensor(lucid.Size) (uninitialised), Tensor(sequence) (the data,
as the default float dtype; a plain tuple is data, not a size) and Tensor(tensor)
(an alias of it). The typed classes take the same forms with their dtype; they are
instances of _TensorType, whose __instancecheck__ makes isinstance(t,
lucid.FloatTensor) true exactly for float32 CPU tensors, as in torch, while every
tensor stays of type lucid.Tensor.
"""

from __future__ import annotations

import builtins

from . import _C
from . import _dtype as D
from . import gpu as _gpu
from ._device import _resolve as _resolve_device
from ._size import Size, _parse_size
from ._tensor import Tensor

_CLASSES = ["FloatTensor", "DoubleTensor", "HalfTensor", "BFloat16Tensor", "LongTensor", "IntTensor",
            "ShortTensor", "CharTensor", "ByteTensor", "BoolTensor"]
__all__ = _CLASSES + ["set_default_tensor_type", "typename"]

_NAMES = {name: torch_name + "Tensor" for name, torch_name in D._TORCH_NAMES.items()}  # torch's classes
_DTYPES = {name: getattr(D, dt) for dt, name in _NAMES.items()}  # legacy class name -> dtype


def _describe(args, kwargs):
    parts = [type(a).__name__ for a in args] + [f"{k}={type(v).__name__}" for k, v in kwargs.items()]
    return ", ".join(parts)


def _new(dtype, on_gpu, args, kwargs):
    """The tensor that Tensor(*args, **kwargs) or a typed class builds (torch's
    legacy_tensor_ctor). dtype None means the default dtype, as torch.Tensor."""
    if set(kwargs) - {"device"}:
        raise TypeError(f"new() received an invalid combination of arguments - got ({_describe(args, kwargs)}), "
                        "but expected one of: (*, device), (Tensor other), (tuple of ints size, *, device), "
                        "(object data, *, device)")
    kind = "gpu" if on_gpu else "cpu"
    device = kwargs.get("device")
    if device is None:
        device = _resolve_device(kind)
    else:
        device = _resolve_device(device)
        if device.type != kind:
            raise RuntimeError(f"legacy constructor expects device type: {kind} but device type: "
                               f"{device.type} was passed")
    exact = dtype is not None
    dtype = D.get_default_dtype() if dtype is None else dtype
    if len(args) == 1 and isinstance(args[0], Tensor):
        other = args[0]
        if exact and not (other.dtype is dtype and other.is_cuda == on_gpu):
            raise TypeError(f"expected {_type_string(dtype, on_gpu)} (got {other.type()})")
        return other._view(list(other._shape))  # an alias, recorded by autograd as torch's
    if len(args) == 1 and not isinstance(args[0], Size) and not _is_int(args[0]):
        return _from_data(args[0], dtype, device)
    shape = [0] if not args else _parse_size(args, "new")
    return _C.empty(shape, dtype._code, device._code, False)


def _is_int(x):
    """An int that Tensor(x) reads as a size (a NumPy array has __index__ too, but is data)."""
    return hasattr(x, "__index__") and not isinstance(x, builtins.bool) and getattr(x, "ndim", 0) == 0


def _from_data(data, dtype, device):
    if isinstance(data, (str, bytes)):
        raise TypeError(f"new(): invalid data type '{type(data).__name__}'")
    if data is None or isinstance(data, (builtins.bool, builtins.float, complex)):
        raise TypeError(f"new(): data must be a sequence (got {type(data).__name__})")
    t = _C.from_data(data, dtype._code, D.get_default_dtype()._code)
    return t if device.type == "cpu" else t._to_device(device._code)


def tensor_new(*args, **kwargs):
    """lucid.Tensor(...) (Note [Legacy constructor])."""
    return _new(None, False, args, kwargs)


class _TensorType(type):
    """The type of lucid.FloatTensor and friends (torch.tensortype)."""

    def __call__(cls, *args, **kwargs):
        return _new(cls.dtype, cls.is_cuda, args, kwargs)

    def __instancecheck__(cls, obj):
        return isinstance(obj, Tensor) and obj.dtype is cls.dtype and obj.is_cuda == cls.is_cuda

    def __repr__(cls):
        return f"<class '{cls.__module__}.{cls.__name__}'>"


def _legacy_class(name, on_gpu):
    return _TensorType(name, (), {"dtype": _DTYPES[name], "is_cuda": on_gpu, "is_sparse": False,
                                  "__module__": "lucid.cuda" if on_gpu else "lucid",
                                  "__doc__": f"{name}(...): lucid.Tensor's forms, as {_DTYPES[name]}."})


globals().update({name: _legacy_class(name, False) for name in _CLASSES})
for _name in _CLASSES:  # lucid.cuda.FloatTensor, ... (lucid.cuda is lucid.gpu)
    setattr(_gpu, _name, _legacy_class(_name, True))
del _name


def _type_string(dtype, on_gpu):
    return ("lucid.cuda." if on_gpu else "lucid.") + _NAMES[dtype._name]


def _parse_type(spec):
    """(dtype, on_gpu or None to keep the device) of Tensor.type's argument."""
    if isinstance(spec, _TensorType):
        return spec.dtype, spec.is_cuda
    if isinstance(spec, D.dtype) or (isinstance(spec, builtins.type) and spec in D._PY_TYPES):
        return D._check(spec), None
    if isinstance(spec, str):
        module, _, name = spec.rpartition(".")
        if module in ("torch", "lucid", "torch.cuda", "lucid.cuda") and name in _DTYPES:
            return _DTYPES[name], module.endswith(".cuda")
        raise ValueError(f"invalid type: {spec!r} (expected e.g. 'lucid.FloatTensor', "
                         "'torch.cuda.LongTensor', a legacy class or a dtype)")
    raise TypeError(f"dtype must be a type, str, or dtype object (got {type(spec).__name__})")


def set_default_tensor_type(t):
    """torch's deprecated set_default_tensor_type: t, a floating legacy class or its name ('torch.FloatTensor',
    'torch.cuda.DoubleTensor'), sets the default dtype, and the default device to the GPU for a cuda type and
    to the CPU otherwise."""
    import warnings

    from ._device import set_default_device

    if isinstance(t, D.dtype):
        raise TypeError("set_default_tensor_type() takes a tensor type such as lucid.FloatTensor or its name; "
                        "use set_default_dtype for a dtype")
    dtype, on_gpu = _parse_type(t)
    if not dtype.is_floating_point:
        raise TypeError("only floating-point types are supported as the default type")
    warnings.warn("set_default_tensor_type() is deprecated as of PyTorch 2.1, please use set_default_dtype() and "
                  "set_default_device() as alternatives.", UserWarning, stacklevel=2)
    D.set_default_dtype(dtype)
    set_default_device("gpu" if on_gpu else None)


def typename(obj):
    """A tensor's legacy type string (t.type(): 'lucid.FloatTensor'), else the object's qualified name ('int')."""
    if isinstance(obj, Tensor):
        return obj.type()
    module = getattr(obj, "__module__", "") or ""
    if hasattr(obj, "__qualname__"):
        qualname = obj.__qualname__
    elif hasattr(obj, "__name__"):
        qualname = obj.__name__
    else:
        module, qualname = obj.__class__.__module__ or "", obj.__class__.__qualname__
    return qualname if module in ("", "builtins") else f"{module}.{qualname}"


class _LegacyAPI:
    """Holder of the methods installed onto lucid.Tensor (see _install)."""

    def type(self, dtype=None, non_blocking=False):
        """With no argument, the type's name ('lucid.FloatTensor', or
        'lucid.cuda.FloatTensor' on a GPU); else self converted to that type (self
        itself when it has it already)."""
        if dtype is None:
            return _type_string(self.dtype, self.is_cuda)
        dt, on_gpu = _parse_type(dtype)
        device = None
        if on_gpu is not None and on_gpu != self.is_cuda:
            device = _resolve_device("gpu" if on_gpu else "cpu")
        return self._to(dtype=dt, device=device)

    def type_as(self, other):
        if not isinstance(other, Tensor):
            raise TypeError(f"type_as(): argument 'other' (position 1) must be Tensor, not "
                            f"{type(other).__name__}")
        return self.type(other.type())

    def is_signed(self):
        return self.dtype.is_signed

    def is_same_size(self, other):
        if not isinstance(other, Tensor):
            raise TypeError(f"is_same_size(): argument 'other' (position 1) must be Tensor, not "
                            f"{type(other).__name__}")
        return self._shape == other._shape

    def is_conj(self):
        return False  # lucid conjugates eagerly: no tensor carries a lazy conjugate bit

    def is_neg(self):
        return False  # nor a lazy negative bit


# Backends and layouts lucid does not have: tensors report False, as torch's CPU
# tensors do (is_sparse / is_sparse_csr: _sparse.py's, False for a dense tensor).
_FALSE_FLAGS = ("is_xpu", "is_mps", "is_meta", "is_quantized", "is_mkldnn",
                "is_nested", "is_vulkan", "is_ipu", "is_xla", "is_maia", "is_mtia")


def _install():
    for name, value in vars(_LegacyAPI).items():
        if not name.startswith("__"):
            setattr(Tensor, name, value)
    for name in _FALSE_FLAGS:
        setattr(Tensor, name, property(lambda self: False, doc=f"Tensor.{name}: always False in lucid."))


_install()
