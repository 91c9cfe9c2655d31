"""torch's other names for lucid's ops (numpy's spellings: absolute, arccos, divide,
greater, ...), its constants (pi, e, inf, nan, newaxis) and its tensor predicates. An
alias is the op itself, so it runs on either device with the op's gradient."""

import math

from . import _C
from . import _dtype as D
from ._tensor import Tensor

pi, e, inf, nan, newaxis = math.pi, math.e, math.inf, math.nan, None

# alias -> the lucid name it stands for (functions, methods and in-place methods)
ALIASES = {
    "absolute": "abs", "arccos": "acos", "arcsin": "asin", "arctan": "atan", "arccosh": "acosh",
    "arcsinh": "asinh", "arctanh": "atanh", "arctan2": "atan2", "divide": "div", "true_divide": "div",
    "multiply": "mul", "subtract": "sub", "greater": "gt", "greater_equal": "ge", "less": "lt", "less_equal": "le",
    "not_equal": "ne", "negative": "neg", "fix": "trunc",
}


def install(namespace):
    """Adds each alias to `namespace` (lucid's globals) and to Tensor, with its in-place
    method where the op has one."""
    for alias, name in ALIASES.items():
        if name in namespace:
            namespace[alias] = namespace[name]
        for suffix in ("", "_"):
            method = getattr(Tensor, name + suffix, None)
            if method is not None:
                setattr(Tensor, alias + suffix, method)
    for fn in (positive, rsub, is_nonzero, is_same_size):
        namespace[fn.__name__] = fn
    Tensor.positive = positive
    Tensor.is_nonzero = is_nonzero
    namespace["inner"] = inner
    Tensor.inner = inner
    Tensor.get_device = get_device
    Tensor.__divmod__ = lambda self, other: (self // other, self % other)
    Tensor.__rdivmod__ = lambda self, other: (other // self, other % self)
    namespace["get_num_interop_threads"] = get_num_interop_threads
    namespace["set_num_interop_threads"] = set_num_interop_threads
    namespace["is_complex"] = lambda input: input.is_complex()
    namespace["is_floating_point"] = lambda input: input.is_floating_point()
    namespace["is_signed"] = lambda input: input.is_signed()


def positive(input):
    """input itself (unary plus); bool tensors have none, as in torch."""
    if input.dtype == D.bool:
        raise RuntimeError("The `+` operator, on a bool tensor is not supported.")
    return input


def rsub(input, other, alpha=1):
    """other - alpha * input."""
    if isinstance(other, Tensor):
        return _C.sub(other, input, alpha=alpha)
    return input * -alpha + other


def is_nonzero(input):
    """bool(input) for a one-element tensor: whether its value is not zero."""
    if input.numel() == 0:
        raise RuntimeError("Boolean value of Tensor with no values is ambiguous")
    if input.numel() > 1:
        raise RuntimeError("Boolean value of Tensor with more than one value is ambiguous")
    return bool(input.item())


def is_same_size(input, other):
    return input.is_same_size(other)  # (the engine's method: TypeError for a non-tensor, as torch)



def inner(input, other):
    """The sum of products over the last dims of input and other (a product for 0-d)."""
    if input.ndim == 0 or other.ndim == 0:
        return input * other
    from . import tensordot
    return tensordot(input, other, ([-1], [-1]))


def get_device(self):
    """The GPU's index, or -1 on the CPU (torch's Tensor.get_device)."""
    return -1 if self.device.type == "cpu" else self.device.index


_INTEROP_THREADS = [1]


def get_num_interop_threads():
    """The inter-op thread count set_num_interop_threads recorded: lucid runs one op at a
    time on the calling thread (its parallelism is inside ops, get_num_threads)."""
    return _INTEROP_THREADS[0]


def set_num_interop_threads(n):
    if not isinstance(n, int) or n < 1:
        raise RuntimeError("Number of inter-op threads must be positive")
    _INTEROP_THREADS[0] = n
