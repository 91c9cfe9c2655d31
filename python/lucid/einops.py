"""einops' tensor operations (upstream Lucid's lucid.einops): rearrange, reduce, repeat and
einsum over readable axis patterns.

A pattern names each dimension: `"b c h w -> b (h w) c"`. A parenthesised group is one
dimension made of several axes (composed or decomposed, the first axis outermost); `1`
or `()` is a dimension of size 1; `...` stands for any number of dimensions. Lengths
that cannot be read from the input come as keywords (`h=2`). rearrange keeps every
axis; reduce removes the axes missing on the right with a reduction ("mean", "sum",
"max", "min", "prod", or a callable taking (tensor, dims)); repeat adds axes missing on
the left (their lengths as keywords, or a number in the pattern). Each is one reshape,
one permute and one reshape (plus the reduction or an expand), so gradients follow.
Errors are einops' (a ValueError naming what does not fit)."""

import math
import re

__all__ = ["einsum", "rearrange", "reduce", "repeat"]

_ELLIPSIS = "…"
_ANONYMOUS = "·"  # (the prefix of an anonymous axis's name: no identifier starts so)
_REDUCTIONS = ("mean", "sum", "max", "min", "prod", "any", "all")


def _lucid():
    import lucid
    return lucid


class _Side:
    """One side of a pattern: its dimensions, each a list of axes (names, or ints for
    anonymous lengths on repeat's right side); `ellipsis` the index of `...`, or None."""

    def __init__(self, text, side):
        self.groups, self.ellipsis = [], None
        tokens = re.findall(r"\(|\)|\.\.\.|[^\s()]+", text)
        group = None
        for token in tokens:
            if token == "(":
                if group is not None:
                    raise ValueError(f"Nested brackets are not allowed in the {side} side of the pattern")
                group = []
            elif token == ")":
                if group is None:
                    raise ValueError(f"Brackets are not balanced in the {side} side of the pattern")
                self.groups.append(group)
                group = None
            elif token == "...":
                if self.ellipsis is not None:
                    raise ValueError(f"Ellipsis can occur only once in the {side} side of the pattern")
                if group is not None:
                    raise ValueError("Ellipsis inside brackets is not supported")
                self.ellipsis = len(self.groups)
                self.groups.append([_ELLIPSIS])
            else:
                axis = self._axis(token, side)
                if group is not None:
                    if axis != 1:
                        group.append(axis)
                else:
                    self.groups.append([] if axis == 1 else [axis])
        if group is not None:
            raise ValueError(f"Brackets are not balanced in the {side} side of the pattern")
        names = [a for g in self.groups for a in g if isinstance(a, str)]
        if len(names) != len(set(names)):
            raise ValueError(f"Indexing expression contains duplicate dimension on the {side} side: {text!r}")

    @staticmethod
    def _axis(token, side):
        if token.isdigit():
            return int(token)
        if not token.isidentifier():
            raise ValueError(f"Invalid axis name {token!r} in the {side} side of the pattern")
        return token

    def names(self):
        return [a for g in self.groups for a in g if isinstance(a, str)]


def _parse(pattern):
    if "->" not in pattern:
        raise ValueError(f"Pattern {pattern!r} has no '->'")
    left, right = pattern.split("->")
    return _Side(left, "left"), _Side(right, "right")


def _expand_ellipsis(side, ndim_of_ellipsis):
    groups = []
    for g in side.groups:
        if g == [_ELLIPSIS]:
            groups += [[f"{_ELLIPSIS}{i}"] for i in range(ndim_of_ellipsis)]
        else:
            groups.append(g)
    return groups


def _prepare(tensor, pattern, axes_lengths):
    """The elementary axes of the input with their lengths, the right side's groups, and
    the input reshaped to the elementary axes."""
    left, right = _parse(pattern)
    lengths = {}
    # an anonymous length on the left ("(h 2)": reduce's pooling) is an axis of its own
    for g in left.groups:
        for i, a in enumerate(g):
            if isinstance(a, int):
                g[i] = f"{_ANONYMOUS}{len(lengths)}"
                lengths[g[i]] = a
    if right.ellipsis is not None and left.ellipsis is None:  # (left only: reduce reduces what it covers)
        raise ValueError(f"Ellipsis found in right side, but not left side of a pattern {pattern!r}")
    shape = tuple(tensor.shape)
    fixed = len(left.groups) - (1 if left.ellipsis is not None else 0)
    if (left.ellipsis is None and len(shape) != fixed) or (left.ellipsis is not None and len(shape) < fixed):
        raise ValueError(f"Wrong shape: expected {len(left.groups)} dims. Received {len(shape)}-dim tensor: "
                         f"{pattern!r} for shape {shape}")
    n_ellipsis = len(shape) - fixed
    left_groups, right_groups = _expand_ellipsis(left, n_ellipsis), _expand_ellipsis(right, n_ellipsis)
    for name, value in axes_lengths.items():
        if not isinstance(value, int) or value < 1:
            raise ValueError(f"Axis {name}={value!r} must be a positive int")
        lengths[name] = value
    for group, size in zip(left_groups, shape):
        unknown = [a for a in group if a not in lengths]
        known = math.prod(lengths[a] for a in group if a in lengths)
        if len(unknown) > 1:
            raise ValueError(f"Could not infer sizes for {set(unknown)} in {pattern!r}")
        if unknown:
            if size % known:
                raise ValueError(f"Shape mismatch, can't divide axis of length {size} in chunks of {known}")
            lengths[unknown[0]] = size // known
        elif known != size:
            raise ValueError(f"Shape mismatch, {known} != {size} for the group {group} of {pattern!r}")
    elementary = [a for g in left_groups for a in g]
    return elementary, lengths, right_groups, tensor.reshape(tuple(lengths[a] for a in elementary))


def _compose(t, order, right_groups, lengths):
    """t, whose axes are `order`, permuted to the right side's order and regrouped."""
    flat = [a for g in right_groups for a in g if isinstance(a, str)]
    t = t.permute(*[order.index(a) for a in flat]) if flat != order else t
    return t.reshape(tuple(math.prod(lengths[a] if isinstance(a, str) else a for a in g) for g in right_groups))


def rearrange(tensor, pattern, **axes_lengths):
    """The same elements, dimensions reordered, split or merged by the pattern."""
    elementary, lengths, right_groups, t = _prepare(_as_tensor(tensor), pattern, axes_lengths)
    right = [a for g in right_groups for a in g if isinstance(a, str)]
    if any(a.startswith(_ANONYMOUS) for a in elementary):
        raise ValueError(f"Non-unitary anonymous axes are not supported in rearrange (exception is length 1): "
                         f"{pattern!r}")
    if set(right) != set(elementary) or any(isinstance(a, int) for g in right_groups for a in g):
        raise ValueError(f"Identifiers only on one side of expression (should be on both): "
                         f"{set(right) ^ set(elementary)} in {pattern!r}")
    return _compose(t, elementary, right_groups, lengths)


def reduce(tensor, pattern, reduction, **axes_lengths):
    """rearrange, with the axes missing on the right reduced away."""
    elementary, lengths, right_groups, t = _prepare(_as_tensor(tensor), pattern, axes_lengths)
    right = [a for g in right_groups for a in g if isinstance(a, str)]
    if not set(right) <= set(elementary) or any(isinstance(a, int) for g in right_groups for a in g):
        raise ValueError(f"Unexpected identifiers on the right side of reduce: {set(right) - set(elementary)}")
    reduced = [i for i, a in enumerate(elementary) if a not in right]
    if reduced:
        if callable(reduction):
            t = reduction(t, tuple(reduced))
        elif reduction in _REDUCTIONS:
            t = _reduce(t, reduction, reduced)
        else:
            raise ValueError(f"Unknown reduction {reduction!r}; expected one of {_REDUCTIONS} or a callable")
    kept = [a for a in elementary if a in right]
    return _compose(t, kept, right_groups, lengths)


def _reduce(t, how, dims):
    if how in ("max", "min"):
        for d in sorted(dims, reverse=True):
            t = getattr(t, "amax" if how == "max" else "amin")(d)
        return t
    if how in ("prod", "any", "all"):
        for d in sorted(dims, reverse=True):
            t = getattr(t, how)(d)
        return t
    return getattr(t, how)(dim=tuple(dims))


def repeat(tensor, pattern, **axes_lengths):
    """rearrange, with the axes missing on the left added, the input repeated along them."""
    elementary, lengths, right_groups, t = _prepare(_as_tensor(tensor), pattern, axes_lengths)
    right = [a for g in right_groups for a in g]
    if any(a.startswith(_ANONYMOUS) for a in elementary):
        raise ValueError(f"Non-unitary anonymous axes are not supported in the left side of repeat: {pattern!r}")
    if not set(elementary) <= {a for a in right if isinstance(a, str)}:
        raise ValueError(f"Unexpected identifiers on the left side of repeat: "
                         f"{set(elementary) - {a for a in right if isinstance(a, str)}}")
    new = [a for a in right if a not in elementary]
    for a in new:
        if isinstance(a, str) and a not in lengths:
            raise ValueError(f"Specify sizes for new axes in repeat: {a}")
    # the input's axes in the right side's order, a size-1 axis where a new one goes,
    # then expanded to the new axes' lengths
    order = [a for a in right if a in elementary]
    t = t.permute(*[elementary.index(a) for a in order]) if order != elementary else t
    shape, sizes = [], []
    for a in right:
        shape.append(lengths[a] if a in elementary else 1)
        sizes.append(lengths[a] if isinstance(a, str) else a)
    t = t.reshape(tuple(shape)).expand(*sizes)
    return t.reshape(tuple(math.prod(lengths[a] if isinstance(a, str) else a for a in g) for g in right_groups))


def _as_tensor(tensor):
    lucid = _lucid()
    if isinstance(tensor, (list, tuple)):  # (einops stacks a list of tensors along a new first axis)
        return lucid.stack(list(tensor))
    if not isinstance(tensor, lucid.Tensor):
        raise TypeError(f"Expected a Tensor (or a list of them), got {type(tensor).__name__}")
    return tensor


def einsum(*args):
    """einsum with einops' named axes: einsum("b i, b j -> b i j", x, y) (upstream Lucid's
    order) or einsum(x, y, "b i, b j -> b i j") (einops')."""
    lucid = _lucid()
    if args and isinstance(args[0], str):
        pattern, operands = args[0], args[1:]
    elif args and isinstance(args[-1], str):
        pattern, operands = args[-1], args[:-1]
    else:
        raise ValueError("einsum needs a pattern (a string) first or last")
    if "->" not in pattern:
        raise ValueError(f"Pattern {pattern!r} has no '->'")
    letters = {}

    def letter(name):
        if name not in letters:
            if len(letters) == 52:
                raise ValueError("Too many axis names in the pattern (einsum takes at most 52)")
            letters[name] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"[len(letters)]
        return letters[name]

    def side(text):
        out = ""
        for token in re.findall(r"\.\.\.|[^\s]+", text.strip()):
            if token == "...":
                out += "..."
            elif token.isidentifier():
                out += letter(token)
            else:
                raise ValueError(f"Invalid axis name {token!r} in einsum pattern (no brackets or numbers)")
        return out

    left, right = pattern.split("->")
    inputs = [side(part) for part in left.split(",")]
    if len(inputs) != len(operands):
        raise ValueError(f"The pattern names {len(inputs)} operands, but {len(operands)} were given")
    return lucid.einsum(",".join(inputs) + "->" + side(right), *operands)
