"""The problem a solve works on: a flat state, a checked right-hand side, the time grid.

Every solver integrates one tensor. A caller whose state is a tuple of tensors (as
torchdiffeq allows) is served by flattening it into one vector here and splitting the
results back at the end, so no solver has to know.
"""

import math

import lucid
from .._tensor import Tensor

__all__ = ["Problem", "parse_grid", "check_tolerances"]


def _host_floats(values, what):
    if isinstance(values, Tensor):
        if values.ndim != 1:
            raise ValueError(f"{what} must be 1-D, got shape {tuple(values.shape)}")
        return [float(v) for v in values.detach().tolist()]
    try:
        return [float(v) for v in values]
    except TypeError:
        raise TypeError(f"{what} must be a 1-D Tensor or a sequence of numbers, got {type(values).__name__}") from None


def parse_grid(t):
    """The time grid as host floats: 1-D, at least two finite points, strictly monotonic.

    Read to the host once, so no solver reads a step size off the device per step."""
    grid = _host_floats(t, "t")
    if len(grid) < 2:
        raise ValueError(f"t must hold at least 2 time points, got {len(grid)}")
    for value in grid:
        # (before the ordering test: every comparison with NaN is False)
        if not math.isfinite(value):
            raise ValueError(f"t must hold finite time points, found {value!r}")
    increasing = grid[1] > grid[0]
    for before, after in zip(grid, grid[1:]):
        if after == before or (after > before) != increasing:
            raise ValueError("t must be strictly increasing or strictly decreasing; "
                             f"found {before!r} followed by {after!r}")
    return grid


def check_tolerances(rtol, atol):
    for name, value in (("rtol", rtol), ("atol", atol)):
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise TypeError(f"{name} must be a real number, got {type(value).__name__}")
        if not (value >= 0.0 and math.isfinite(value)):
            raise ValueError(f"{name} must be finite and >= 0, got {value!r}")
    if rtol == 0.0 and atol == 0.0:
        raise ValueError("rtol and atol cannot both be 0: the error test would reject every step")


class Problem:
    """func, y0 (and event_fn) reduced to one flat state, with checked evaluations.

    rhs(t, y) and event(t, y) take the time as a host float; the caller's functions get
    it as a 0-d tensor of the state's dtype on the state's device.
    """

    def __init__(self, func, y0, event_fn=None):
        if not callable(func):
            raise TypeError(f"func must be callable, got {type(func).__name__}")
        if isinstance(y0, Tensor):
            self.shapes = None
            flat = y0
        elif isinstance(y0, (tuple, list)):
            if not y0:
                raise ValueError("y0 must not be an empty tuple")
            for i, part in enumerate(y0):
                if not isinstance(part, Tensor):
                    raise TypeError(f"y0[{i}] must be a Tensor, got {type(part).__name__}")
            devices = {str(part.device) for part in y0}
            if len(devices) > 1:
                raise ValueError(f"the tensors of y0 must be on one device, got {sorted(devices)}")
            self.shapes = [tuple(part.shape) for part in y0]
            dtype = y0[0].dtype
            for part in y0[1:]:
                dtype = lucid.promote_types(dtype, part.dtype)
            flat = lucid.cat([part.reshape(-1).to(dtype) for part in y0])
        else:
            raise TypeError(f"y0 must be a Tensor or a tuple of Tensors, got {type(y0).__name__}")
        if not flat.dtype.is_floating_point:
            raise ValueError(f"y0 must have a floating-point dtype to be integrated, got {flat.dtype}")
        self.y0 = flat
        self.user_func = func
        self.user_event = event_fn
        if event_fn is not None and not callable(event_fn):
            raise TypeError(f"event_fn must be callable, got {type(event_fn).__name__}")

    # -- the state's form -------------------------------------------------------------

    def split(self, flat):
        """The caller's form of one flat state."""
        if self.shapes is None:
            return flat
        parts, offset = [], 0
        for shape in self.shapes:
            size = math.prod(shape)
            parts.append(flat[offset:offset + size].reshape(shape))
            offset += size
        return tuple(parts)

    def split_rows(self, stacked):
        """The caller's form of a stack of flat states (one per row)."""
        if self.shapes is None:
            return stacked
        rows, parts, offset = stacked.shape[0], [], 0
        for shape in self.shapes:
            size = math.prod(shape)
            parts.append(stacked[:, offset:offset + size].reshape((rows, *shape)))
            offset += size
        return tuple(parts)

    def time(self, value):
        return lucid.tensor(value, dtype=self.y0.dtype, device=self.y0.device)

    # -- evaluations ------------------------------------------------------------------

    def call_func(self, t_tensor, y):
        """func in the caller's form, returning the derivative flat (unchecked)."""
        if self.shapes is None:
            return self.user_func(t_tensor, y)
        parts = self.user_func(t_tensor, self.split(y))
        if isinstance(parts, Tensor) or not isinstance(parts, (tuple, list)):
            raise TypeError(f"func must return a tuple of Tensors when y0 is a tuple, got {type(parts).__name__}")
        if len(parts) != len(self.shapes):
            raise ValueError(f"func returned {len(parts)} tensors but y0 holds {len(self.shapes)}")
        for i, (part, shape) in enumerate(zip(parts, self.shapes)):
            if not isinstance(part, Tensor):
                raise TypeError(f"func's result [{i}] must be a Tensor, got {type(part).__name__}")
            if tuple(part.shape) != shape:
                raise ValueError(f"func's result [{i}] has shape {tuple(part.shape)} but y0[{i}] has shape {shape}")
        return lucid.cat([part.reshape(-1) for part in parts])

    def rhs(self, t, y):
        """f(t, y) for a host time t, checked against the state."""
        out = self.call_func(self.time(t), y)
        if not isinstance(out, Tensor):
            raise TypeError(f"func must return a Tensor, got {type(out).__name__}")
        if tuple(out.shape) != tuple(y.shape):
            raise ValueError(f"func returned shape {tuple(out.shape)} but the state has shape {tuple(y.shape)}")
        if out.device != y.device:
            raise ValueError(f"func returned a tensor on {out.device} but the state is on {y.device}")
        return out

    def call_event(self, t_tensor, y):
        out = self.user_event(t_tensor, self.split(y))
        if not isinstance(out, Tensor):
            raise TypeError(f"event_fn must return a Tensor, got {type(out).__name__}")
        if out.numel() != 1:
            raise ValueError(f"event_fn must return a single-element tensor, got shape {tuple(out.shape)}")
        return out.reshape(())

    def event(self, t, y):
        """event_fn(t, y) for a host time t, as a host float."""
        return float(self.call_event(self.time(t), y).item())
