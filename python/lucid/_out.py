"""out= for the functions whose engine binding has none (reductions, scans, shape,
index and product ops): the result is computed, then written into `out` by the
engine's write_out (the same checks and resizing as the elementwise ops' out=).
"""

import functools

from . import _C
from ._tensor import Tensor

# torch's functions that take out=; exact: out must have the result's dtype.
TAKE_OUT = {
    "sum": False, "mean": False, "prod": False, "amax": False, "amin": False, "argmax": True, "argmin": True,
    "var": False, "std": False, "logsumexp": False, "norm": False, "all": False, "any": False,
    "cumsum": False, "cumprod": False, "scatter": False, "masked_select": False, "nonzero": True,
    "tril": False, "triu": False, "diag": False, "mv": False, "dot": False, "vdot": False, "addmm": False,
    "addmv": False, "baddbmm": False, "tensordot": False, "msort": False, "searchsorted": True, "bucketize": True,
    "nansum": False, "nanmean": False, "histc": False, "quantile": False, "nanquantile": False,
    "logcumsumexp": False,
}
# max/min along a dim return (values, indices): out is a pair.
TAKE_OUT_PAIR = ("max", "min", "sort", "topk", "kthvalue", "median", "nanmedian", "mode", "cummax", "cummin")


def _check_out(name, out):
    if not isinstance(out, Tensor):
        raise TypeError(f"{name}(): argument 'out' must be Tensor, not {type(out).__name__}")


def with_out(fn, name, exact):
    @functools.wraps(fn)
    def wrapper(*args, out=None, **kwargs):
        if out is None:
            return fn(*args, **kwargs)
        _check_out(name, out)
        _C._write_out(name, out, fn(*args, **kwargs), exact)
        return out
    return wrapper


def with_out_pair(fn, name):
    @functools.wraps(fn)
    def wrapper(*args, out=None, **kwargs):
        if out is None:
            return fn(*args, **kwargs)
        result = fn(*args, **kwargs)
        if isinstance(result, Tensor):  # the whole-tensor form: out is one tensor
            _check_out(name, out)
            _C._write_out(name, out, result, False)
            return out
        if not (isinstance(out, (tuple, list)) and len(out) == 2):
            raise TypeError(f"{name}(): argument 'out' must be a tuple of two Tensors (values, indices)")
        for o in out:
            _check_out(name, o)
        _C._write_out(name, out[0], result[0], False)
        _C._write_out(name, out[1], result[1], True)
        return type(result)((out[0], out[1]))
    return wrapper


def install(namespace):
    """Wraps the listed functions of `namespace` (lucid's globals) in place."""
    for name, exact in TAKE_OUT.items():
        if name in namespace:
            namespace[name] = with_out(namespace[name], name, exact)
    for name in TAKE_OUT_PAIR:
        if name in namespace:
            namespace[name] = with_out_pair(namespace[name], name)
