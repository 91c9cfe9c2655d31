"""Argument checks the nn layers and functions share: a size that is wrong fails at the
constructor call that gave it, with the name of the argument, not later in a product."""

import operator

__all__ = ["int_arg"]


def int_arg(owner, name, value, *, minimum):
    """value as an int (any integral type but bool), at least `minimum` (0 or 1)."""
    if isinstance(value, bool):
        raise TypeError(f"{owner}: {name} must be an int, got bool")
    try:
        value = operator.index(value)
    except TypeError:
        raise TypeError(f"{owner}: {name} must be an int, got {type(value).__name__}") from None
    if value < minimum:
        kind = "positive" if minimum > 0 else "non-negative"
        raise ValueError(f"{owner}: {name} must be {kind}, got {value}")
    return value
