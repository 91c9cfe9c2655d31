"""Input signatures of compiled calls: what a call's trace is kept for."""

from .._tensor import Tensor

_SCALARS = (bool, int, float, complex, str, bytes, type(None))


def spec(value, dynamic):
    """A hashable description of one argument: a tensor by shape (its number of
    dimensions when `dynamic`), dtype, device and requires_grad; containers by their
    items; numbers and strings by value (by type when `dynamic`, for int and float);
    other objects by identity, as a trace may read anything of them."""
    if isinstance(value, Tensor):
        return ("tensor", value.ndim if dynamic else tuple(value.shape), str(value.dtype), str(value.device),
                value.requires_grad)
    if isinstance(value, (list, tuple)):
        return (type(value).__name__, tuple(spec(v, dynamic) for v in value))
    if isinstance(value, dict):
        return ("dict", tuple((k, spec(v, dynamic)) for k, v in value.items()))
    if isinstance(value, _SCALARS):
        if dynamic and type(value) in (int, float):
            return (type(value).__name__,)
        return (type(value).__name__, value)
    return ("object", type(value).__qualname__, id(value))


def shapes_only_differ(a, b):
    """Whether two static signatures differ only in sizes (so a dynamic one covers both)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, tuple):
        if len(a) != len(b):
            return False
        if len(a) == 5 and a[0] == "tensor" == b[0]:
            return len(a[1]) == len(b[1]) and a[2:] == b[2:]
        return all(shapes_only_differ(x, y) for x, y in zip(a, b))
    return a == b
