"""Integration on a fixed grid of steps, for the explicit, implicit and Adams steppers.

By default the times in t are the steps. options["step_size"] or
options["grid_constructor"] decouple the two, as in torchdiffeq: the steps then run on
their own grid and each time in t is read off the step containing it, through a line
or (interp="cubic") the Hermite cubic of the step's ends.

A stepper is anything with step(t0, t1, y) -> y1, called once per step, in order.
"""

import math

import lucid
from ._interp import cubic_hermite, evaluate, linear

__all__ = ["build_grid", "integrate", "integrate_dense", "fit_step"]


def _from_step_size(start, end, step_size):
    span = end - start
    direction = 1.0 if span > 0 else -1.0
    # (the slack keeps 1.0 / 0.1 = 10.000000000000002 from adding a step of length ~0)
    count = max(1, math.ceil(abs(span) / step_size * (1.0 - 1e-12)))
    return [start + direction * step_size * i for i in range(count)] + [end]


def build_grid(opts, problem, grid):
    """The times the stepper steps between: grid itself unless the options say otherwise."""
    if opts.grid_constructor is not None:
        t = lucid.tensor(grid, dtype=problem.y0.dtype, device=problem.y0.device)
        built = opts.grid_constructor(problem.user_func, problem.split(problem.y0), t)
        values = built.detach().tolist() if isinstance(built, lucid.Tensor) else list(built)
        steps = [float(v) for v in values]
        if len(steps) < 2 or steps[0] != grid[0] or steps[-1] != grid[-1]:
            raise ValueError(f"grid_constructor must return a grid from t[0] to t[-1] ({grid[0]!r} to {grid[-1]!r}), "
                             f"got {steps[:1]} to {steps[-1:]}")
        increasing = grid[-1] > grid[0]
        if any((b > a) != increasing or b == a for a, b in zip(steps, steps[1:])):
            raise ValueError("grid_constructor must return a strictly monotonic grid in the direction of t")
        return steps
    if opts.step_size is not None:
        return _from_step_size(grid[0], grid[-1], opts.step_size)
    return list(grid)


def fit_step(problem, opts, t0, t1, y0, y1, f0=None, f1=None):
    """The polynomial reading times inside a step; f0 / f1 are computed when missing."""
    if opts.interp == "cubic":
        f0 = problem.rhs(t0, y0) if f0 is None else f0
        f1 = problem.rhs(t1, y1) if f1 is None else f1
        return cubic_hermite(y0, y1, f0, f1, t1 - t0)
    return linear(y0, y1)


def integrate(problem, stepper, grid, opts, return_trajectory):
    """(final state, [state at each time of grid] or [])."""
    steps = build_grid(opts, problem, grid)
    direction = 1.0 if grid[-1] > grid[0] else -1.0
    direct = steps == list(grid)
    y = problem.y0
    trajectory = [y] if return_trajectory else []
    next_output = 1
    f_start = None  # f at the current step's start, carried over for the cubic fit
    value = y
    for t0, t1 in zip(steps, steps[1:]):
        y1 = stepper.step(t0, t1, y)
        if direct:
            value = y1
            if return_trajectory:
                trajectory.append(y1)
        else:
            f_end = problem.rhs(t1, y1) if opts.interp == "cubic" else None
            coefficients = None
            while next_output < len(grid) and direction * (grid[next_output] - t1) <= 0.0:
                target = grid[next_output]
                if target == t1:
                    value = y1
                else:
                    if coefficients is None:
                        coefficients = fit_step(problem, opts, t0, t1, y, y1, f_start, f_end)
                    value = evaluate(coefficients, t0, t1, target)
                if return_trajectory:
                    trajectory.append(value)
                next_output += 1
            f_start = f_end
        y = y1
    return value, trajectory


def integrate_dense(problem, stepper, t0, t1, opts):
    """Every step across [t0, t1] as (start, end, polynomial)."""
    steps = build_grid(opts, problem, [t0, t1])
    y = problem.y0
    f_start = problem.rhs(t0, y) if opts.interp == "cubic" else None
    segments = []
    for a, b in zip(steps, steps[1:]):
        y1 = stepper.step(a, b, y)
        f_end = problem.rhs(b, y1) if opts.interp == "cubic" else None
        segments.append((a, b, fit_step(problem, opts, a, b, y, y1, f_start, f_end)))
        y, f_start = y1, f_end
    return segments
