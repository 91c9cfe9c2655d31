"""nn.Parameter: a tensor that a Module registers as one of its parameters.

lucid.Tensor is the engine's class itself (docs/ENGINE.md), so a Parameter is a
Tensor marked by a flag the engine keeps, and isinstance(t, nn.Parameter) checks
that flag (PyTorch's own _ParameterMeta does the same for its is_param tensors).
type(p) is lucid.Tensor.

UninitializedParameter and UninitializedBuffer (the lazy modules' placeholders) are
likewise plain tensors, empty until materialize() gives them a shape in place (so an
optimizer made before the first forward holds the materialized parameter); a registry
of the ones not yet materialized answers isinstance and is_lazy.
"""

import weakref

from .._tensor import Tensor

__all__ = ["Parameter", "UninitializedParameter", "is_lazy", "Buffer", "UninitializedBuffer",
           "UninitializedTensorMixin", "UninitializedParameterWarning"]


class _ParameterMeta(type):
    def __instancecheck__(cls, obj):
        return isinstance(obj, Tensor) and obj._is_param


class Parameter(metaclass=_ParameterMeta):
    """Parameter(data=None, requires_grad=True): shares data's memory, is a leaf."""

    def __new__(cls, data=None, requires_grad=True):
        if data is None:
            from .._creation import empty
            data = empty(0)
        if not isinstance(data, Tensor):
            raise TypeError(f"Parameter(): data must be a Tensor, not {type(data).__name__}")
        p = data.detach()
        p.requires_grad_(requires_grad)
        p._is_param = True
        return p


class Buffer:
    """nn.Buffer(data, persistent=True): marks a tensor to register as a buffer when
    assigned to a Module attribute."""

    def __init__(self, data, *, persistent=True):
        if not isinstance(data, Tensor):
            raise TypeError(f"Buffer(): data must be a Tensor, not {type(data).__name__}")
        self.data = data
        self.persistent = persistent


class UninitializedParameterWarning(UserWarning):
    """The warning a lazy module gives when it is made (upstream Lucid's name; torch's is a
    plain UserWarning, which this is too)."""


# id(tensor) -> (weak reference, UninitializedParameter or UninitializedBuffer,
# persistent): the placeholders not yet materialized.
_uninitialized = {}


def _lazy_entry(obj):
    entry = _uninitialized.get(id(obj)) if isinstance(obj, Tensor) else None
    return entry if entry is not None and entry[0]() is obj else None


def _lazy_kind(obj):
    entry = _lazy_entry(obj)
    return entry[1] if entry is not None else None


def _mark_uninitialized(t, kind, persistent=True):
    key = id(t)
    _uninitialized[key] = (weakref.ref(t, lambda _: _uninitialized.pop(key, None)), kind, persistent)
    return t


def _copy_placeholder_mark(source, copy):
    """A deep copy of a placeholder is a placeholder (Tensor.__deepcopy__)."""
    entry = _lazy_entry(source)
    if entry is not None:
        _mark_uninitialized(copy, entry[1], entry[2])


class _UninitializedMeta(type):
    def __instancecheck__(cls, obj):
        kind = _lazy_kind(obj)
        return kind is not None and issubclass(kind, cls)


class UninitializedTensorMixin(metaclass=_UninitializedMeta):
    """What UninitializedParameter and UninitializedBuffer share: `t.materialize(shape,
    device=None, dtype=None)` gives the placeholder its shape (uninitialised values) in
    place, after which it is an ordinary parameter (or tensor)."""

    @staticmethod
    def materialize(t, shape, device=None, dtype=None):
        if _lazy_kind(t) is None:
            raise RuntimeError("materialize() is for UninitializedParameter and UninitializedBuffer; this tensor "
                               "is already initialized")
        from .._creation import empty
        shape = (shape,) if isinstance(shape, int) else tuple(shape)
        t.data = empty(shape, device=t.device if device is None else device, dtype=t.dtype if dtype is None else dtype)
        del _uninitialized[id(t)]


class UninitializedParameter(UninitializedTensorMixin, metaclass=_UninitializedMeta):
    """UninitializedParameter(requires_grad=True, device=None, dtype=None): a parameter
    whose shape a lazy module infers at its first forward (torch.nn.parameter's)."""

    cls_to_become = Parameter

    def __new__(cls, requires_grad=True, device=None, dtype=None):
        from .._creation import empty
        return _mark_uninitialized(Parameter(empty(0, device=device, dtype=dtype), requires_grad), cls)


class UninitializedBuffer(UninitializedTensorMixin, metaclass=_UninitializedMeta):
    """UninitializedBuffer(requires_grad=False, device=None, dtype=None, persistent=True):
    the buffer counterpart. Assigned to a module attribute that is not yet a buffer, it
    is registered as one, `persistent` or not (as nn.Buffer)."""

    cls_to_become = Tensor

    def __new__(cls, requires_grad=False, device=None, dtype=None, persistent=True):
        from .._creation import empty
        return _mark_uninitialized(empty(0, device=device, dtype=dtype).requires_grad_(requires_grad), cls,
                                   persistent)

    @staticmethod
    def _persistent(t):
        return _lazy_entry(t)[2]


def is_lazy(param):
    """Whether `param` is an UninitializedParameter or UninitializedBuffer not yet materialized."""
    return _lazy_kind(param) is not None


class _Materialize:
    """Tensor.materialize, present only on the placeholders (hasattr is False elsewhere,
    as on torch's tensors)."""

    def __get__(self, obj, objtype=None):
        if obj is None:
            return self
        if _lazy_kind(obj) is None:
            raise AttributeError("'Tensor' object has no attribute 'materialize'")
        return lambda shape, device=None, dtype=None: UninitializedTensorMixin.materialize(obj, shape, device, dtype)


Tensor.materialize = _Materialize()
