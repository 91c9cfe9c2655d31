"""Upstream Lucid's typing names, for programs that annotate with them: the aliases
(lucid.TensorLike, DTypeLike, DeviceLike, ShapeLike, Scalar, TensorOrScalar, StateDict)
and the runtime-checkable protocols (HasShape, SupportsGrad, SupportsNumpyConversion,
TensorLikeProtocol), which `isinstance` checks by the attributes an object has."""

from collections.abc import Mapping, Sequence
from typing import Any, Protocol, Union, runtime_checkable

from ._device import device
from ._dtype import dtype
from ._tensor import Tensor

Scalar = Union[bool, int, float, complex]
# what lucid.tensor takes: a tensor, a number, nested sequences of them, a NumPy array
TensorLike = Union[Tensor, Scalar, Sequence[Any], Any]
TensorOrScalar = Union[Tensor, Scalar]
DTypeLike = Union[dtype, str, type, None]  # lucid.float32, "float32", float
DeviceLike = Union[device, str, int, None]  # lucid.device("gpu"), "cuda:0", 0
ShapeLike = Union[int, Sequence[int]]
StateDict = Mapping[str, Any]  # Module.state_dict(), Optimizer.state_dict()


@runtime_checkable
class HasShape(Protocol):
    """Anything with a shape."""

    @property
    def shape(self) -> Any: ...


@runtime_checkable
class SupportsGrad(Protocol):
    """Anything that takes part in autograd: requires_grad, grad and backward."""

    requires_grad: bool
    grad: Any

    def backward(self, *args: Any, **kwargs: Any) -> Any: ...


@runtime_checkable
class SupportsNumpyConversion(Protocol):
    """Anything with a .numpy() (lucid and torch tensors)."""

    def numpy(self, *args: Any, **kwargs: Any) -> Any: ...


@runtime_checkable
class TensorLikeProtocol(Protocol):
    """The tensor surface: shape, dtype, device, ndim, size() and numpy()."""

    @property
    def shape(self) -> Any: ...

    @property
    def dtype(self) -> Any: ...

    @property
    def device(self) -> Any: ...

    @property
    def ndim(self) -> int: ...

    def size(self, *args: Any) -> Any: ...

    def numpy(self, *args: Any, **kwargs: Any) -> Any: ...


NAMES = ["Scalar", "TensorLike", "TensorOrScalar", "DTypeLike", "DeviceLike", "ShapeLike", "StateDict", "HasShape",
         "SupportsGrad", "SupportsNumpyConversion", "TensorLikeProtocol"]


def install(namespace):
    for name in NAMES:
        namespace[name] = globals()[name]
