"""The losses' legacy `size_average` / `reduce` flags (torch.nn._reduction): either one given picks the reduction,
with torch's deprecation warning, over `reduction`; both None leave `reduction` as it is."""

import functools
import inspect
import warnings


def legacy_get_string(size_average, reduce, emit_warning=True):
    """torch's mapping: reduce False -> "none"; else size_average False -> "sum"; else "mean" (None counts as
    True)."""
    size_average = True if size_average is None else size_average
    reduce = True if reduce is None else reduce
    ret = "mean" if size_average and reduce else "sum" if reduce else "none"
    if emit_warning:
        warnings.warn(f"size_average and reduce args will be deprecated, please use reduction='{ret}' instead.",
                      stacklevel=4)  # (the caller of the loss or of its constructor)
    return ret


def reduction_of(size_average, reduce, reduction):
    """The reduction torch's legacy flags stand for when either is given; `reduction` otherwise."""
    return reduction if size_average is None and reduce is None else legacy_get_string(size_average, reduce)


def legacy_reduction(fn):
    """Decorator for a functional loss with torch's `size_average`, `reduce` and `reduction` parameters: when a call
    gives either legacy flag (by position or keyword), fn runs with the reduction they stand for."""
    signature = inspect.signature(fn)
    names = list(signature.parameters)
    at_average, at_reduce = names.index("size_average"), names.index("reduce")

    @functools.wraps(fn)
    def run(*args, **kwargs):
        average = args[at_average] if len(args) > at_average else kwargs.get("size_average")
        reduce = args[at_reduce] if len(args) > at_reduce else kwargs.get("reduce")
        if average is None and reduce is None:
            return fn(*args, **kwargs)
        bound = signature.bind(*args, **kwargs)
        bound.arguments.update(size_average=None, reduce=None, reduction=reduction_of(average, reduce, None))
        return fn(*bound.args, **bound.kwargs)
    return run
