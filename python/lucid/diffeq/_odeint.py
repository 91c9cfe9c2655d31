"""odeint, odeint_dense and odeint_event: the entry points, and which solver runs.

The method decides how t is read. An adaptive tableau (dopri5, the default; dopri8,
tsit5, bosh3, fehlberg2, adaptive_heun) picks its own steps to meet rtol / atol and
reads each time of t off its dense output. Every other method steps on a fixed grid:
t itself, unless options give a step_size or grid_constructor.

A time of t inside an adaptive step is read off the step's interpolant: the quartic
through the state at mid-step for dopri5 and tsit5 (fourth-order accurate) and dopri8
(whose mid-step state is only fifth-order accurate, so its values between steps are far
less accurate than its steps), the cubic Hermite of the step's ends for bosh3,
fehlberg2 and adaptive_heun, whose mid-step weights are first-order. The last time of
t is stepped onto, so the final state is always the method's own.

Gradients are autograd's: under grad mode the whole solve is recorded and
differentiable (discretise-then-optimise); odeint_adjoint is the constant-memory
alternative.
"""

import bisect
import math

import lucid
from .._tensor import Tensor
from ._adams import AdamsStepper
from ._adaptive import integrate as integrate_adaptive, integrate_dense as dense_adaptive
from ._event import attach_event_gradient, find_event
from ._explicit import ExplicitStepper
from ._fixed import integrate as integrate_fixed, integrate_dense as dense_fixed
from ._implicit import ImplicitStepper
from ._interp import evaluate
from ._methods import adams_kind, check_method, resolve_method
from ._options import parse_adams, parse_adaptive, parse_fixed, parse_implicit
from ._problem import Problem, check_tolerances, parse_grid

__all__ = ["odeint", "odeint_dense", "odeint_event"]


class _Solver:
    """The method resolved against the options: an adaptive tableau, or a fixed-grid stepper."""

    def __init__(self, problem, method, rtol, atol, options):
        self.problem, self.rtol, self.atol, self.options = problem, rtol, atol, options
        self.method = method
        corrector = adams_kind(method)
        self.tableau = None if corrector is not None else resolve_method(method)
        self.adams = corrector is not None
        self.fixed_opts = None
        if self.adams:
            opts = parse_adams(options)
            self.fixed_opts = opts
            self.make_stepper = lambda: AdamsStepper(problem, corrector, opts.max_order, opts.max_iters, rtol, atol,
                                                     opts.perturb)
        elif self.tableau.is_implicit:
            opts = parse_implicit(options)
            self.fixed_opts = opts
            self.make_stepper = lambda: ImplicitStepper(problem, self.tableau, opts.perturb, opts.max_iters)
        elif self.tableau.is_adaptive:
            parse_adaptive(options)  # (fails fast on a bad option, before any step)
            self.make_stepper = None
        else:
            opts = parse_fixed(options)
            self.fixed_opts = opts
            self.make_stepper = lambda: ExplicitStepper(problem, self.tableau, opts.perturb)

    def reject_adams(self, what):
        if self.adams:
            raise NotImplementedError(f"{what} does not support method={self.method!r}: Adams methods have no "
                                      "interpolant of their own; use a Runge-Kutta method such as 'dopri5'")

    def integrate(self, grid, return_trajectory):
        if self.make_stepper is None:
            return integrate_adaptive(self.problem, self.tableau, grid, self.rtol, self.atol, self.options,
                                      return_trajectory)
        return integrate_fixed(self.problem, self.make_stepper(), grid, self.fixed_opts, return_trajectory)

    def dense_segments(self, t0, t1):
        if self.make_stepper is None:
            return dense_adaptive(self.problem, self.tableau, t0, t1, self.rtol, self.atol, self.options)
        return dense_fixed(self.problem, self.make_stepper(), t0, t1, self.fixed_opts)


def _stack(states):
    dtype = states[-1].dtype
    return lucid.stack([s if s.dtype == dtype else s.to(dtype) for s in states], dim=0)


def _event_grid(t):
    """For an event solve only t[0] and the direction matter; a single time searches forwards."""
    if isinstance(t, (int, float)) or (isinstance(t, Tensor) and t.ndim == 0):
        start = float(t)
        return [start, start + 1.0]
    values = t.detach().reshape(-1).tolist() if isinstance(t, Tensor) else list(t)
    if len(values) == 1:
        start = float(values[0])
        return [start, start + 1.0]
    return parse_grid(t)


def solve_event(problem, solver, t0, direction):
    """(event time, solution of shape (2, ...)): the state at t0 and at the event."""
    solver.reject_adams("event detection")
    event_t, state = find_event(problem, solver.make_stepper, solver.tableau, t0, direction, solver.rtol,
                                solver.atol, solver.options, solver.fixed_opts)
    time, state = attach_event_gradient(problem, event_t, state)
    return time, problem.split_rows(_stack([problem.y0, state]))


def odeint(func, y0, t, *, rtol=1e-7, atol=1e-9, method=None, options=None, event_fn=None,
           return_trajectory=True):
    """Integrates dy/dt = func(t, y) from y0 at t[0].

    func(t, y) gets t as a 0-d tensor of y0's dtype and returns dy/dt shaped like y
    (y0 may be a tuple of tensors, func then takes and returns tuples). t: strictly
    monotonic times (decreasing integrates backwards). method: a name or a
    ButcherTableau (None: "dopri5"); also "explicit_adams", "implicit_adams",
    "fixed_adams". options: per family (adaptive: min_step, max_step, first_step,
    step_t, jump_t, safety, ifactor, dfactor, max_num_steps, norm, dtype; fixed:
    step_size, grid_constructor, interp, perturb; implicit adds max_iters; Adams adds
    max_order and max_iters).

    Returns the states at every time of t, stacked on a new first axis (the final
    state only with return_trajectory=False). With event_fn(t, y), integrates from
    t[0] until its sign changes and returns (event_t, solution), solution holding the
    states at t[0] and at the event.
    """
    check_tolerances(rtol, atol)
    check_method(method)
    problem = Problem(func, y0, event_fn)
    if event_fn is not None:
        grid = _event_grid(t)
        solver = _Solver(problem, method, rtol, atol, options)
        return solve_event(problem, solver, grid[0], 1.0 if grid[1] > grid[0] else -1.0)
    grid = parse_grid(t)
    solver = _Solver(problem, method, rtol, atol, options)
    final, trajectory = solver.integrate(grid, return_trajectory)
    if not return_trajectory:
        return problem.split(final)
    return problem.split_rows(_stack(trajectory))


class DenseSolution:
    """The continuous solution odeint_dense returns: call it with a time (a float, a
    0-d tensor) for the state there, or with several (a list, a 1-D tensor) for them
    stacked. Times outside [t0, t1] raise ValueError."""

    def __init__(self, problem, segments, t0, t1):
        self._problem = problem
        self.t0, self.t1 = t0, t1
        self._segments = segments if t1 > t0 else list(reversed(segments))
        self._starts = [min(a, b) for a, b, _ in self._segments]
        self._low, self._high = min(t0, t1), max(t0, t1)

    def _state(self, t):
        if not math.isfinite(t) or not self._low <= t <= self._high:
            raise ValueError(f"time {t!r} lies outside the solved interval [{self._low!r}, {self._high!r}]")
        index = min(max(bisect.bisect_right(self._starts, t) - 1, 0), len(self._segments) - 1)
        a, b, coefficients = self._segments[index]
        return evaluate(coefficients, a, b, t)

    def __call__(self, t):
        if isinstance(t, Tensor) and t.ndim == 0:
            t = float(t.item())
        if isinstance(t, (int, float)):
            return self._problem.split(self._state(float(t)))
        times = t.detach().reshape(-1).tolist() if isinstance(t, Tensor) else [float(v) for v in t]
        return self._problem.split_rows(_stack([self._state(float(v)) for v in times]))


def odeint_dense(func, y0, t0, t1, *, rtol=1e-7, atol=1e-9, method=None, options=None):
    """Solves once across [t0, t1] and returns the continuous solution (a DenseSolution):
    each step's interpolating polynomial is kept, so any time inside can be asked for
    later without solving again. A fixed-step method steps once across the interval
    unless options give a step_size."""
    t0 = float(t0.item()) if isinstance(t0, Tensor) else float(t0)
    t1 = float(t1.item()) if isinstance(t1, Tensor) else float(t1)
    if not (math.isfinite(t0) and math.isfinite(t1)):
        raise ValueError(f"t0 and t1 must be finite, got {t0!r} and {t1!r}")
    if t0 == t1:
        raise ValueError(f"t0 and t1 must differ, both are {t0!r}")
    check_tolerances(rtol, atol)
    check_method(method)
    problem = Problem(func, y0)
    solver = _Solver(problem, method, rtol, atol, options)
    solver.reject_adams("odeint_dense")
    return DenseSolution(problem, solver.dense_segments(t0, t1), t0, t1)


def odeint_event(func, y0, t0, *, event_fn, reverse_time=False, odeint_interface=odeint, **kwargs):
    """Integrates from t0 until event_fn(t, y) changes sign; returns (event_t, solution),
    solution holding the states at t0 and at the event. reverse_time searches backwards;
    odeint_interface=odeint_adjoint differentiates the solve by the adjoint method; kwargs
    (rtol, atol, method, options, ...) go to odeint_interface. event_t is differentiable
    with respect to y0 and to func's parameters."""
    start = float(t0.item()) if isinstance(t0, Tensor) else float(t0)
    grid = [start, start - 1.0] if reverse_time else [start, start + 1.0]
    return odeint_interface(func, y0, grid, event_fn=event_fn, **kwargs)
