"""The process-wide switches torch keeps at its top level, re-exported as lucid.*:
deterministic algorithms and float32 matmul precision.

use_deterministic_algorithms(True) makes GPU convolutions take only the algorithms cuDNN marks
deterministic (as lucid.backends.cudnn.deterministic does). The CPU's kernels are deterministic
(the thread pool gives each thread the same part of the work on every call, so sums add in one
order for a given thread count). The GPU kernels that add with atomics (scatter_add, index_add,
the backward of embedding and gathers) do not consult it yet.
set_float32_matmul_precision is lucid.backends.cuda.matmul.allow_tf32's state (see there)."""

import warnings

from . import cuda, cudnn

__all__ = ["use_deterministic_algorithms", "are_deterministic_algorithms_enabled",
           "is_deterministic_algorithms_warn_only_enabled", "set_deterministic_debug_mode",
           "get_deterministic_debug_mode", "set_float32_matmul_precision", "get_float32_matmul_precision"]

# torch's debug modes: 0 default (off), 1 warn, 2 error
_MODES = ("default", "warn", "error")
_state = {"mode": 0}


def use_deterministic_algorithms(mode, *, warn_only=False):
    """mode=True: only deterministic algorithms may run (warn_only=True: a nondeterministic
    one warns instead of raising)."""
    for name, value in (("mode", mode), ("warn_only", warn_only)):
        if not isinstance(value, bool):
            raise TypeError(f"use_deterministic_algorithms(): argument '{name}' must be bool, not "
                            f"{type(value).__name__}")
    _state["mode"] = (1 if warn_only else 2) if mode else 0
    cudnn._sync_determinism()


def are_deterministic_algorithms_enabled():
    return _state["mode"] != 0


def is_deterministic_algorithms_warn_only_enabled():
    return _state["mode"] == 1


def set_deterministic_debug_mode(debug_mode):
    """"default"/0, "warn"/1 or "error"/2: use_deterministic_algorithms off, warn-only, on."""
    if isinstance(debug_mode, str):
        if debug_mode not in _MODES:
            raise RuntimeError("invalid value of debug_mode, expected one of `default`, `warn`, `error`, but got "
                               f"{debug_mode}")
        debug_mode = _MODES.index(debug_mode)
    elif isinstance(debug_mode, int) and not isinstance(debug_mode, bool):
        if debug_mode not in (0, 1, 2):
            raise RuntimeError(f"invalid value of debug_mode, expected 0, 1, or 2, but got {debug_mode}")
    else:
        raise TypeError(f"debug_mode must be str or int, but got {type(debug_mode)}")
    _state["mode"] = debug_mode
    cudnn._sync_determinism()


def get_deterministic_debug_mode():
    return _state["mode"]


def set_float32_matmul_precision(precision):
    """"highest" (float32 products in float32), "high" or "medium" (TF32 allowed on a GPU).
    Another string warns and changes nothing, as in torch."""
    try:
        cuda._set_precision(precision)
    except ValueError as e:
        warnings.warn(f"{e}; the call has no effect", stacklevel=2)


def get_float32_matmul_precision():
    return cuda._get_precision()
