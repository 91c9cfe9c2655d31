"""torch's other names for lucid's ops (numpy's spellings: absolute, arccos, divide,
greater, ...), its constants (pi, e, inf, nan, newaxis) and its tensor predicates. An
alias is the op itself, so it runs on either device with the op's gradient."""

import math

from . import _C
from ._tensor import Tensor

pi, e, inf, nan, newaxis = math.pi, math.e, math.inf, math.nan, None

# alias -> the lucid name it stands for (functions, methods and in-place methods)
ALIASES = {
    "absolute": "abs", "arccos": "acos", "arcsin": "asin", "arctan": "atan", "arccosh": "acosh",
    "arcsinh": "asinh", "arctanh": "atanh", "arctan2": "atan2", "divide": "div", "true_divide": "div",
    "multiply": "mul", "subtract": "sub", "greater": "gt", "greater_equal": "ge", "less": "lt", "less_equal": "le",
    "not_equal": "ne", "negative": "neg",
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
    namespace["is_complex"] = lambda input: input.is_complex()
    namespace["is_floating_point"] = lambda input: input.is_floating_point()
    namespace["is_signed"] = lambda input: input.is_signed()


def positive(input):
    """input itself (unary plus); bool tensors have none, as in torch."""
    if input.dtype == _bool():
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


def _bool():
    from ._dtype import bool as bool_
    return bool_
