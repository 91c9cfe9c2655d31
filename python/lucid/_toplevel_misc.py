"""torch's remaining top-level functions that lucid composes from its ops: gradient,
frobenius_norm / nuclear_norm (deprecated there), range (deprecated), get_device,
is_inference, set_flush_denormal, set_warn_always / is_warn_always_enabled, and the
eager forms of the control-flow operators cond and while_loop."""

import builtins
import warnings

from . import _dtype as D
from ._tensor import Tensor


def _check_tensor(name, input, arg="input"):
    if not isinstance(input, Tensor):
        raise TypeError(f"{name}(): argument '{arg}' (position 1) must be Tensor, not {type(input).__name__}")


# ---- torch.gradient -----------------------------------------------------------------------
def _along(t, d, start, end=None):
    """t[start:end] along dim d."""
    return t[(slice(None),) * d + (slice(start, end),)]


def _gradient_uniform(input, d, h, edge_order):
    """ATen's gradient_helper_float: central differences inside, one-sided (first or
    second order) at the two ends, for samples h apart along dim d."""
    center = (_along(input, d, 2) - _along(input, d, 0, -2)) / h
    if edge_order == 1:
        first = (_along(input, d, 1, 2) - _along(input, d, 0, 1)) / h
        last = (_along(input, d, -1) - _along(input, d, -2, -1)) / h
    else:
        first = (_along(input, d, 0, 1) * -1.5 + _along(input, d, 1, 2) * 2 + _along(input, d, 2, 3) * -0.5) / h
        last = (_along(input, d, -3, -2) * 0.5 + _along(input, d, -2, -1) * -2 + _along(input, d, -1) * 1.5) / h
    from ._shape import cat
    return cat([first, center / 2, last], d)


def _gradient_coordinates(input, d, x, edge_order):
    """ATen's gradient_helper: second-order differences for samples at coordinates x
    (one-dimensional) along dim d."""
    if x.dim() != 1:
        raise RuntimeError(f"torch.gradient expected each element of spacing to have one dimension, but got an "
                           f"element with {x.dim()} dimensions!")
    shape = [1] * input.dim()
    shape[d] = -1
    dx = x.diff(1, 0)
    dx1, dx2 = dx[:-1], dx[1:]
    a = (-dx2 / (dx1 * (dx1 + dx2))).reshape(shape)
    b = ((dx2 - dx1) / (dx1 * dx2)).reshape(shape)
    c = (dx1 / (dx2 * (dx1 + dx2))).reshape(shape)
    center = a * _along(input, d, 0, -2) + b * _along(input, d, 1, -1) + c * _along(input, d, 2)
    if edge_order == 1:
        first = (_along(input, d, 1, 2) - _along(input, d, 0, 1)) / dx[0]
        last = (_along(input, d, -1) - _along(input, d, -2, -1)) / dx[-1]
    else:
        a = -(2.0 * dx[0] + dx[1]) / (dx[0] * (dx[0] + dx[1]))
        b = (dx[0] + dx[1]) / (dx[0] * dx[1])
        c = (-dx[0]) / (dx[1] * (dx[0] + dx[1]))
        first = a * _along(input, d, 0, 1) + b * _along(input, d, 1, 2) + c * _along(input, d, 2, 3)
        a = dx[-1] / (dx[-2] * (dx[-1] + dx[-2]))
        b = -(dx[-1] + dx[-2]) / (dx[-1] * dx[-2])
        c = (2 * dx[-1] + dx[-2]) / (dx[-1] * (dx[-1] + dx[-2]))
        last = a * _along(input, d, -3, -2) + b * _along(input, d, -2, -1) + c * _along(input, d, -1)
    from ._shape import cat
    return cat([first, center, last], d)


def _wrap_dims(dims, ndim):
    n = builtins.max(ndim, 1)
    out = []
    for d in dims:
        if not -n <= d < n:
            raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], but got {d})")
        d = d % n
        if d in out:
            raise RuntimeError(f"dim {d} appears multiple times in the list of dims")
        out.append(d)
    return out


def gradient(input, *, spacing=None, dim=None, edge_order=1):
    """torch.gradient: estimates of the derivative of the function sampled by input along
    each of `dim` (default: every dim), one tensor per dim. spacing is a number (the
    same step for every dim), a list of numbers (one step per dim) or a list of 1-D
    tensors (each dim's sample coordinates); edge_order 1 or 2 is the accuracy of the
    one-sided differences at the ends."""
    _check_tensor("gradient", input)
    if input.dtype == D.uint8:
        raise NotImplementedError("torch.gradient does not support uint8 input.")
    dims = None if dim is None else ([dim] if isinstance(dim, builtins.int) else list(dim))
    if isinstance(spacing, Tensor):
        raise TypeError("gradient(): argument 'spacing' must be a number or a list of numbers or of 1-D tensors, "
                        "not Tensor")
    listed = isinstance(spacing, (list, tuple))
    if listed and dims is None and len(spacing) != input.dim():
        raise RuntimeError(f"torch.gradient expected spacing to be unspecified, a scalar, or a list of length equal "
                           f"to 'self.dim() = {input.dim()}', since dim argument was not given, but got a list of "
                           f"length {len(spacing)}")
    if listed and dims is not None and len(spacing) != len(dims):
        raise RuntimeError(f"torch.gradient expected spacing to be unspecified, a scalar or it's spacing and dim "
                           f"arguments to have the same length, but got a spacing argument of length {len(spacing)} "
                           f"and a dim argument of length {len(dims)}.")
    if edge_order not in (1, 2):
        raise RuntimeError("torch.gradient only supports edge_order=1 and edge_order=2.")
    dims = list(builtins.range(input.dim())) if dims is None else _wrap_dims(dims, input.dim())
    for d in dims:
        if input.shape[d] < edge_order + 1:
            raise RuntimeError("torch.gradient expected each dimension size to be at least edge_order+1")
    steps = list(spacing) if listed else [1 if spacing is None else spacing] * len(dims)
    coordinates = builtins.any(isinstance(s, Tensor) for s in steps)
    if coordinates and not builtins.all(isinstance(s, Tensor) for s in steps):
        raise TypeError("gradient(): argument 'spacing' must be a list of numbers or a list of tensors, not a mix")
    result = []
    for d, s in zip(dims, steps):
        if coordinates:
            if s.device != input.device:
                raise RuntimeError(f"torch.gradient expected each tensor to be on the same device, but got devices "
                                   f"{input.device} and {s.device}!")
            result.append(_gradient_coordinates(input, d, s, edge_order))
        else:
            result.append(_gradient_uniform(input, d, s, edge_order))
    return tuple(result)


# ---- deprecated norms -------------------------------------------------------------------
def frobenius_norm(input, dim, keepdim=False):
    """sqrt of the sum of squares over dim (at most two dims; () is every dim).
    Deprecated in torch for linalg.vector_norm(input, 2, dim, keepdim)."""
    warnings.warn("lucid.frobenius_norm is deprecated, as torch's: use lucid.linalg.vector_norm(A, 2., dim, keepdim) "
                  "instead", UserWarning, stacklevel=2)
    dims = [dim] if isinstance(dim, builtins.int) else list(dim)
    if len(dims) > 2:
        raise RuntimeError(f"Expected at most 2 dimensions, but got {len(dims)} dimensions instead.")
    if not (input.is_floating_point() or input.is_complex()):
        raise NotImplementedError(f"norm(): input dtype should be either floating point or complex. Got "
                                  f"{D._torch_name(input.dtype)} instead.")
    from .linalg import vector_norm
    return vector_norm(input, 2, dim=tuple(dims), keepdim=keepdim)


def nuclear_norm(input, dim=None, keepdim=False):
    """The sum of the singular values of the matrices over dim (a 2-tuple; default the
    last two dims). nuclear_norm(input, keepdim) is accepted too, as torch's overload.
    Deprecated in torch for linalg.matrix_norm(input, 'nuc', dim, keepdim)."""
    warnings.warn("lucid.nuclear_norm is deprecated, as torch's: use lucid.linalg.matrix_norm(A, 'nuc', dim, "
                  "keepdim) instead", UserWarning, stacklevel=2)
    if isinstance(dim, builtins.bool):  # nuclear_norm(input, keepdim)
        dim, keepdim = None, dim
    dims = (-2, -1) if dim is None else tuple(dim)
    if len(dims) != 2:
        raise RuntimeError(f"linalg.matrix_norm: dim must be a 2-tuple. Got {len(dims)}")
    if not (input.is_floating_point() or input.is_complex()):
        raise NotImplementedError(f"linalg.matrix_norm: Expected a floating point or complex tensor as input. "
                                  f"Got {D._torch_name(input.dtype)}")
    from .linalg import matrix_norm
    return matrix_norm(input, "nuc", dim=dims, keepdim=keepdim)


# ---- torch.range (deprecated) ----------------------------------------------------------------
def range(start, end, step=1, *, dtype=None, device=None, requires_grad=False, pin_memory=False):
    """Values start, start + step, ... up to and including end (torch.range, deprecated:
    lucid.arange excludes end, as Python's range). Default dtype: the default float."""
    warnings.warn("lucid.range is deprecated and will be removed in a future release because its behavior is "
                  "inconsistent with Python's range builtin. Instead, use lucid.arange, which produces values in "
                  "[start, end).", UserWarning, stacklevel=2)
    from ._creation import arange
    dtype = D.get_default_dtype() if dtype is None else dtype
    values = [v.item() if isinstance(v, Tensor) else v for v in (start, end, step)]
    if builtins.any(builtins.float(v) != builtins.float(v) or abs(builtins.float(v)) == float("inf")
                    for v in values[:2]):
        raise RuntimeError(f"unsupported range: {values[0]} -> {values[1]}")
    if dtype.is_floating_point or dtype.is_complex:
        lo, hi, h = (builtins.float(v) for v in values)  # (ATen computes in double)
    else:
        lo, hi, h = (builtins.int(v) for v in values)
    if h == 0:
        raise RuntimeError("step must be nonzero")
    if not ((h > 0 and hi >= lo) or (h < 0 and hi <= lo)):
        raise RuntimeError("upper bound and lower bound inconsistent with step sign")
    n = builtins.int((hi - lo) / h) + 1 if isinstance(h, builtins.float) else (hi - lo) // h + 1
    work = D.float64 if isinstance(h, builtins.float) else D.int64
    out = (arange(n, dtype=work, device=device) * h + lo).to(dtype)
    if pin_memory:
        out = out.pin_memory()
    return out.requires_grad_(requires_grad) if requires_grad else out


# ---- predicates and process settings -----------------------------------------------------
def get_device(input):
    """The GPU's index of input's device, or -1 on the CPU."""
    _check_tensor("get_device", input)
    return input.get_device()


def is_inference(input):
    """Whether input is an inference tensor: never in lucid, whose inference_mode is
    no_grad with a flag (it makes no tensors of another kind)."""
    _check_tensor("is_inference", input)
    return False


def set_flush_denormal(mode):
    """torch.set_flush_denormal: asks for denormal floats to be flushed to zero on the CPU
    and returns whether that was done. lucid's engine exposes no control of the CPU's
    FTZ/DAZ flags, so nothing is changed and the answer is False (unsupported)."""
    if not isinstance(mode, builtins.bool):  # (RuntimeError, as torch's)
        raise RuntimeError(f"flush_denormal expects a bool, but got {type(mode).__name__}")
    return False


_WARN_ALWAYS = [False]


def set_warn_always(b):
    """Sets the flag that torch reads to repeat its warn-once warnings every time. lucid
    stores it (is_warn_always_enabled reports it) and its warnings ignore it: they go
    through Python's warnings module, whose filters decide about repeats."""
    if not isinstance(b, builtins.bool):  # (RuntimeError, as torch's)
        raise RuntimeError(f"set_warn_always expects a bool, but got {type(b).__name__}")
    _WARN_ALWAYS[0] = b


def is_warn_always_enabled():
    """The flag set_warn_always last set (False at start)."""
    return _WARN_ALWAYS[0]


# ---- control flow (eager) -----------------------------------------------------------------
def _leaves(tree):
    """The leaves of a nested dict / list / tuple."""
    if isinstance(tree, dict):
        for v in tree.values():
            yield from _leaves(v)
    elif isinstance(tree, (list, tuple)):
        for v in tree:
            yield from _leaves(v)
    else:
        yield tree


def cond(pred, true_fn, false_fn, operands=()):
    """true_fn(*operands) if pred else false_fn(*operands), run eagerly. pred is a Python
    bool / number or a one-element tensor; operands a tuple or list of (possibly nested
    dict / list / tuple of) tensors. torch checks, when it compiles the call, that both
    branches return matching tensors; run eagerly, only the taken branch runs."""
    if isinstance(pred, (builtins.bool, builtins.int, builtins.float)):
        return true_fn(*operands) if pred else false_fn(*operands)
    if not isinstance(pred, Tensor):
        raise RuntimeError(f"Expected pred to be bool or tensor, but got {pred}.")
    if pred.numel() != 1:
        raise RuntimeError(f"Expected pred to be bool or single-element tensor, but got {pred}.")
    if not callable(true_fn) or not callable(false_fn):
        raise RuntimeError("Expect both branches to be callable.")
    if not isinstance(operands, (tuple, list)) or not builtins.all(isinstance(t, Tensor) for t in _leaves(operands)):
        raise RuntimeError("Expect operands to be a tuple of possibly nested dict/list/tuple that only consists of "
                           f"tensor leaves, but got {operands}.")
    return true_fn(*operands) if builtins.bool(pred) else false_fn(*operands)


def _check_loop_pred(pred):
    if isinstance(pred, builtins.bool) or (isinstance(pred, Tensor) and pred.dim() == 0 and pred.dtype == D.bool):
        return builtins.bool(pred)
    raise RuntimeError(f"cond_fn must return a boolean scalar tensor or a boolean but got {pred}")


def while_loop(cond_fn, body_fn, carried_inputs):
    """Runs carried = body_fn(*carried) while cond_fn(*carried) (a bool or a 0-d bool
    tensor) holds, eagerly; returns the body's last result (a tuple of copies of the
    tensors when the body never ran). carried_inputs is a tuple or list of tensors and
    ints; the body returns a tuple or list of as many values."""
    if not callable(cond_fn) or not callable(body_fn):
        raise RuntimeError("Expect cond_fn and body_fn to be callable.")
    if not isinstance(carried_inputs, (tuple, list)):
        raise RuntimeError(f"carried_inputs must be a tuple or list but got {type(carried_inputs)}")
    bad = tuple(type(v) for v in _leaves(carried_inputs) if not isinstance(v, (Tensor, builtins.int)))
    if bad:  # (torch's check of the leaves is an assertion)
        raise AssertionError(f"{list(carried_inputs)} can only be of ({Tensor}, {builtins.int}) but got {bad}")
    carried = tuple(carried_inputs)
    if not _check_loop_pred(cond_fn(*carried)):
        return tuple(v.clone() if isinstance(v, Tensor) else v for v in carried)
    while True:
        out = body_fn(*carried)
        if not isinstance(out, (tuple, list)):
            raise RuntimeError(f"body_fn should return a tuple but got {type(out)}")
        if len(out) != len(carried):
            raise RuntimeError(f"body_fn should return the same number of elements as carried_inputs, got "
                               f"{len(out)} vs {len(carried)}")
        carried = out
        if not _check_loop_pred(cond_fn(*carried)):
            return carried


def _assert(condition, message):
    """torch._assert: Python's assert as a function (models call it where a tracer must see
    the check), which also holds under python -O."""
    if not condition:
        raise AssertionError(message)


_ALL = (_assert, gradient, frobenius_norm, nuclear_norm, range, get_device, is_inference, set_flush_denormal, set_warn_always,
        is_warn_always_enabled, cond, while_loop)


def install(namespace):
    """Adds the functions to `namespace` (lucid's globals), leaving any name lucid has."""
    for fn in _ALL:
        namespace.setdefault(fn.__name__, fn)
