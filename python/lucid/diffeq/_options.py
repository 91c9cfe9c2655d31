"""Parsing the options dict of each solver family, with its keys checked.

A key a method does not read is an error rather than being dropped: a misspelt
"step_size" silently ignored would leave the caller integrating on a grid they did not
ask for.
"""

import math
from dataclasses import dataclass

from .._tensor import Tensor

__all__ = ["AdaptiveOptions", "FixedOptions", "parse_adaptive", "parse_fixed", "parse_implicit", "parse_adams"]

ADAPTIVE_KEYS = frozenset({"min_step", "max_step", "first_step", "step_t", "jump_t", "safety", "ifactor", "dfactor",
                           "max_num_steps", "dtype", "norm"})
FIXED_KEYS = frozenset({"step_size", "grid_constructor", "interp", "perturb"})
IMPLICIT_KEYS = FIXED_KEYS | {"max_iters"}
ADAMS_KEYS = FIXED_KEYS | {"max_order", "max_iters"}


def _check_keys(options, allowed, family):
    if options is None:
        return {}
    if not isinstance(options, dict):
        raise TypeError(f"options must be a dict or None, got {type(options).__name__}")
    unknown = sorted(set(options) - allowed)
    if unknown:
        raise ValueError(f"unknown option(s) {unknown} for {family}; expected a subset of {sorted(allowed)}")
    return options


def _real(options, key, default):
    value = options.get(key, default)
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"option {key!r} must be a real number, got {type(value).__name__}")
    return float(value)


def _int(options, key, default, minimum):
    value = options.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"option {key!r} must be an int, got {type(value).__name__}")
    if value < minimum:
        raise ValueError(f"option {key!r} must be >= {minimum}, got {value}")
    return value


def _times(options, key):
    value = options.get(key)
    if value is None:
        return ()
    if isinstance(value, Tensor):
        values = value.detach().reshape(-1).tolist()
    elif isinstance(value, (list, tuple)):
        values = list(value)
    else:
        raise TypeError(f"option {key!r} must be a sequence of times or a 1-D Tensor, got {type(value).__name__}")
    times = [float(v) for v in values]
    if not all(math.isfinite(v) for v in times):
        raise ValueError(f"option {key!r} must hold finite times")
    return tuple(sorted(times))


@dataclass(frozen=True)
class AdaptiveOptions:
    min_step: float = 0.0
    max_step: float = math.inf
    first_step: float = None
    step_t: tuple = ()
    jump_t: tuple = ()
    safety: float = 0.9
    ifactor: float = 10.0
    dfactor: float = 0.2
    max_num_steps: int = 2 ** 31 - 1
    norm: object = None


def parse_adaptive(options):
    """Options of the adaptive (embedded-pair) methods. dtype is accepted and unused:
    step control always runs in host float64, which is what that option asks for."""
    options = _check_keys(options, ADAPTIVE_KEYS, "an adaptive method")
    first_step = options.get("first_step")
    if first_step is not None:
        first_step = abs(_real(options, "first_step", None))
        if first_step == 0.0 or not math.isfinite(first_step):
            raise ValueError(f"option 'first_step' must be finite and non-zero, got {options['first_step']!r}")
    norm = options.get("norm")
    if norm is not None and not callable(norm):
        raise TypeError(f"option 'norm' must be callable, got {type(norm).__name__}")
    parsed = AdaptiveOptions(
        min_step=abs(_real(options, "min_step", 0.0)), max_step=abs(_real(options, "max_step", math.inf)),
        first_step=first_step, step_t=_times(options, "step_t"), jump_t=_times(options, "jump_t"),
        safety=_real(options, "safety", 0.9), ifactor=_real(options, "ifactor", 10.0),
        dfactor=_real(options, "dfactor", 0.2), max_num_steps=_int(options, "max_num_steps", 2 ** 31 - 1, 1),
        norm=norm)
    if parsed.min_step > parsed.max_step:
        raise ValueError(f"option 'min_step' ({parsed.min_step}) exceeds 'max_step' ({parsed.max_step})")
    if not 0.0 < parsed.safety <= 1.0:
        raise ValueError(f"option 'safety' must lie in (0, 1], got {parsed.safety}")
    if parsed.ifactor < 1.0:
        raise ValueError(f"option 'ifactor' must be >= 1, got {parsed.ifactor}")
    if not 0.0 < parsed.dfactor <= 1.0:
        raise ValueError(f"option 'dfactor' must lie in (0, 1], got {parsed.dfactor}")
    if set(parsed.step_t) & set(parsed.jump_t):
        raise ValueError("options 'step_t' and 'jump_t' must not share a time")
    return parsed


@dataclass(frozen=True)
class FixedOptions:
    step_size: float = None
    grid_constructor: object = None
    interp: str = "linear"
    perturb: bool = False
    max_iters: int = None
    max_order: int = None


def parse_fixed(options, allowed=FIXED_KEYS, family="a fixed-step method", max_iters=None, max_order=None):
    """Options of the fixed-grid methods (and, through `allowed`, the implicit and
    Adams ones, which add max_iters and max_order)."""
    options = _check_keys(options, allowed, family)
    step_size = options.get("step_size")
    if step_size is not None:
        step_size = abs(_real(options, "step_size", None))
        if step_size == 0.0 or not math.isfinite(step_size):
            raise ValueError(f"option 'step_size' must be finite and non-zero, got {options['step_size']!r}")
    constructor = options.get("grid_constructor")
    if constructor is not None and not callable(constructor):
        raise TypeError(f"option 'grid_constructor' must be callable, got {type(constructor).__name__}")
    interp = options.get("interp", "linear")
    if interp not in ("linear", "cubic"):
        raise ValueError(f"option 'interp' must be 'linear' or 'cubic', got {interp!r}")
    perturb = options.get("perturb", False)
    if not isinstance(perturb, bool):
        raise TypeError(f"option 'perturb' must be a bool, got {type(perturb).__name__}")
    if max_iters is not None:
        max_iters = _int(options, "max_iters", max_iters, 1)
    if max_order is not None:
        max_order = _int(options, "max_order", max_order, 1)
    return FixedOptions(step_size, constructor, interp, perturb, max_iters, max_order)


def parse_implicit(options):
    return parse_fixed(options, IMPLICIT_KEYS, "an implicit method", max_iters=100)


def parse_adams(options):
    parsed = parse_fixed(options, ADAMS_KEYS, "an Adams method", max_iters=4, max_order=12)
    if parsed.max_order > 12:
        raise ValueError(f"option 'max_order' must be <= 12 (higher Adams orders are unstable), "
                         f"got {parsed.max_order}")
    return parsed
