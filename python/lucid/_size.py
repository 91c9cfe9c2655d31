"""lucid.Size and the parsing of size arguments (f(2, 3), f((2, 3)), f([2, 3]))."""

from __future__ import annotations

__all__ = ["Size"]


class Size(tuple):
    """A tensor shape: a tuple of ints (torch.Size)."""

    __slots__ = ()

    def __repr__(self):
        return f"lucid.Size({list(self)})"

    def numel(self):
        n = 1
        for s in self:
            n *= s
        return n

    def __getitem__(self, key):
        r = super().__getitem__(key)
        return Size(r) if isinstance(key, slice) else r

    # Size + tuple, tuple + Size and Size * n stay Sizes, as torch's
    def __add__(self, other):
        return Size(tuple(self) + tuple(other)) if isinstance(other, tuple) else NotImplemented

    def __radd__(self, other):
        return Size(tuple(other) + tuple(self)) if isinstance(other, tuple) else NotImplemented

    def __mul__(self, n):
        return Size(tuple(self) * n) if hasattr(n, "__index__") else NotImplemented

    __rmul__ = __mul__


def _as_index(v, what):
    if isinstance(v, bool) or not hasattr(v, "__index__"):
        raise TypeError(f"{what}: expected a sequence of integers, but got an element of type "
                        f"{type(v).__name__}")
    return v.__index__()


def _parse_size(args, what, allow_negative=False):
    """A list of ints from varargs that may be one sequence or several ints."""
    if len(args) == 1 and not hasattr(args[0], "__index__"):
        seq = args[0]
        if not isinstance(seq, (tuple, list)):
            raise TypeError(f"{what}(): argument 'size' must be a tuple of ints, but got "
                            f"{type(seq).__name__}")
        args = seq
    sizes = [_as_index(v, what) for v in args]
    if not allow_negative:
        for s in sizes:
            if s < 0:
                raise RuntimeError(f"Trying to create tensor with negative dimension {s}: {sizes}")
    return sizes
