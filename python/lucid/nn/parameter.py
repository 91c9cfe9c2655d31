"""nn.Parameter: a tensor that a Module registers as one of its parameters.

lucid.Tensor is the engine's class itself (docs/ENGINE.md), so a Parameter is a
Tensor marked by a flag the engine keeps, and isinstance(t, nn.Parameter) checks
that flag (PyTorch's own _ParameterMeta does the same for its is_param tensors).
type(p) is lucid.Tensor.
"""

from .._tensor import Tensor

__all__ = ["Parameter", "Buffer"]


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
