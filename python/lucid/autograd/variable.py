"""torch.autograd.Variable: before torch 0.4 the class of tensors that autograd tracked;
now every tensor is one. Variable(t, requires_grad=...) still returns a tensor (t's data,
detached, with requires_grad set), and isinstance(x, Variable) holds for every tensor,
so old programs run unchanged."""

from .._tensor import Tensor


class _VariableMeta(type):
    def __instancecheck__(cls, other):
        return isinstance(other, Tensor)

    def __subclasscheck__(cls, other):
        return isinstance(other, type) and issubclass(other, Tensor)


class Variable(metaclass=_VariableMeta):
    def __new__(cls, data=None, requires_grad=False, volatile=False):
        if volatile:
            import warnings
            warnings.warn("volatile was removed and now has no effect. Use `with lucid.no_grad():` instead.",
                          UserWarning, stacklevel=2)
        if data is None:
            from .. import empty
            data = empty(0)
        if not isinstance(data, Tensor):
            raise TypeError(f"Variable data has to be a tensor, but got {type(data).__name__}")
        return data.detach().requires_grad_(requires_grad)
