"""torch's list ops, as EMA updates, optimizers and gradient scaling write them:
torch._foreach_<op>[_] (lists back) and the public torch.foreach.<op>[_] (tuples back;
an in-place form gives back the list it was given).

Each applies lucid's op to the lists' elements in turn. An argument beside the list is
one number or tensor for every element, or a list (of numbers or tensors) with one per
element; lists must have the same length, as torch checks."""

import sys
import types
from numbers import Number

_UNARY = ["abs", "acos", "asin", "atan", "ceil", "cos", "cosh", "erf", "erfc", "exp", "expm1", "floor", "frac",
          "lgamma", "log", "log10", "log1p", "log2", "neg", "reciprocal", "round", "rsqrt", "sigmoid", "sign", "sin",
          "sinh", "sqrt", "tan", "tanh", "trunc"]
_BINARY = ["add", "sub", "mul", "div", "clamp_max", "clamp_min", "maximum", "minimum", "pow"]
_TERNARY = ["addcmul", "addcdiv", "lerp"]


def _lucid():
    import lucid

    return lucid


def _is_list(x):
    return isinstance(x, (list, tuple))


def _check_list(name, tensors):
    if not _is_list(tensors) or not all(isinstance(t, _lucid().Tensor) for t in tensors):
        raise TypeError(f"{name}(): expected a list of Tensors, got {type(tensors).__name__}")
    return list(tensors)


def _per_element(name, arg, n):
    """arg for each of n elements: a list's entries (one each), else arg itself."""
    if _is_list(arg):
        if len(arg) != n:  # (torch's two messages)
            if all(isinstance(a, Number) for a in arg):
                raise RuntimeError("Tensor list must have same number of elements as scalar list.")
            raise RuntimeError(f"Tensor lists must have the same number of tensors, got {n} and {len(arg)}")
        return list(arg)
    return [arg] * n


def _elementwise(op, inplace):
    method = op + "_" if inplace else op

    def apply(name, tensors, *args, **kwargs):
        tensors = _check_list(name, tensors)
        n = len(tensors)
        if op in ("addcmul", "addcdiv"):
            if len(args) == 3:  # the scalars given by position
                args, kwargs = args[:2], {**kwargs, "value": args[2]}
            if isinstance(kwargs.get("value"), _lucid().Tensor):  # torch's 1-D tensor of n scalars
                kwargs["value"] = kwargs["value"].tolist()
        columns = [_per_element(name, a, n) for a in args]
        per = {k: _per_element(name, v, n) if k == "value" else [v] * n for k, v in kwargs.items()}
        return [getattr(t, method)(*(c[i] for c in columns), **{k: v[i] for k, v in per.items()})
                for i, t in enumerate(tensors)]

    return apply


def _pow_apply(inplace):
    general = _elementwise("pow", inplace)

    def apply(name, base, exponent):
        if isinstance(base, Number) and not inplace:  # a number raised to each tensor
            lucid = _lucid()
            return [lucid.pow(base, e) for e in _check_list(name, exponent)]
        return general(name, base, exponent)

    return apply


def _norm(name, tensors, ord=2, dtype=None):
    lucid = _lucid()
    return [lucid.linalg.vector_norm(t, ord, dtype=dtype) for t in _check_list(name, tensors)]


def _max(name, tensors):
    return [t.max() for t in _check_list(name, tensors)]


def _mm(name, tensors, mat2):
    tensors = _check_list(name, tensors)
    return [a.mm(b) for a, b in zip(tensors, _per_element(name, mat2, len(tensors)))]


def _copy_(name, tensors, src, non_blocking=False):
    tensors = _check_list(name, tensors)
    for t, s in zip(tensors, _per_element(name, src, len(tensors))):
        t.copy_(s)
    return tensors


def _zero_(name, tensors):
    tensors = _check_list(name, tensors)
    for t in tensors:
        t.zero_()
    return tensors


def _clone(name, tensors, memory_format=None):
    kw = {} if memory_format is None else {"memory_format": memory_format}
    return [t.clone(**kw) for t in _check_list(name, tensors)]


def _table():
    """{op name: apply(name, tensors, ...)} for every op both APIs share."""
    table = {}
    for op in _UNARY + _BINARY + _TERNARY:
        for inplace in (False, True):
            table[op + ("_" if inplace else "")] = _pow_apply(inplace) if op == "pow" else _elementwise(op, inplace)
    table.update(norm=_norm, max=_max, mm=_mm, clone=_clone, copy_=_copy_, zero_=_zero_)
    return table


def _private(op, apply):
    name = f"_foreach_{op}"

    def fn(*args, **kwargs):
        return list(apply(name, *args, **kwargs))

    fn.__name__ = fn.__qualname__ = name
    return fn


def _public(op, apply):
    name = f"foreach.{op}"

    def fn(inputs, *args, **kwargs):
        out = apply(name, inputs, *args, **kwargs)
        return inputs if op.endswith("_") else tuple(out)  # (an in-place form gives back its very inputs)

    fn.__name__ = fn.__qualname__ = op
    return fn


def install(namespace):
    """lucid._foreach_<op> and the module lucid.foreach."""
    public = types.ModuleType("lucid.foreach", "torch.foreach: list ops returning tuples (lucid/_foreach.py).")
    for op, apply in _table().items():
        namespace[f"_foreach_{op}"] = _private(op, apply)
        setattr(public, op, _public(op, apply))
    sys.modules["lucid.foreach"] = public
    namespace["foreach"] = public
