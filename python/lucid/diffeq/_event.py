"""Integrating until event_fn(t, y) changes sign, and the event time's derivative.

Once a step brackets the sign change, the crossing is found by bisecting the step's
interpolating polynomial: event_fn is evaluated along it, f is not.

The time found that way comes from comparisons and carries no graph. It is still a
differentiable function of y0 and of f's parameters, pinned by g(t*, y(t*)) = 0:
differentiating that identity gives dt* = -(dg/dy . dy) / (dg/dt + dg/dy . f), where
dy is the state's derivative at fixed time, which the state at the event does carry.
attach_event_gradient writes the time in terms of that state; and the state itself gets
the term f * dt* it is missing (it was read at a host float) by adding
f * (t* - t*.detach()), which is zero in value.
"""

import lucid
from ._adaptive import AdaptiveStepper
from ._fixed import fit_step
from ._interp import evaluate
from ._options import parse_adaptive

__all__ = ["find_event", "attach_event_gradient", "MAX_EVENT_STEPS"]

# A solve whose event never fires has to end: this many steps, unless
# options["max_num_steps"] says otherwise.
MAX_EVENT_STEPS = 100_000


def _sign(value):
    return (value > 0.0) - (value < 0.0)


def _bisect(problem, coefficients, sign0, t0, t1):
    """The crossing inside [t0, t1], to the resolution of a float64 time."""
    low, high = t0, t1
    with lucid.no_grad():
        while True:
            mid = 0.5 * (low + high)
            if mid in (low, high) or abs(high - low) <= 4 * 2.2e-16 * max(1.0, abs(mid)):
                break
            if _sign(problem.event(mid, evaluate(coefficients, t0, t1, mid))) == sign0:
                low = mid
            else:
                high = mid
    event_t = 0.5 * (low + high)
    return event_t, evaluate(coefficients, t0, t1, event_t)


def find_event(problem, stepper_factory, tableau, t0, direction, rtol, atol, options, fixed_opts):
    """(event time as a host float, state there) from (t0, y0), searching in `direction`.

    stepper_factory(): a fixed-grid stepper, or None for an adaptive tableau."""
    y0 = problem.y0
    sign0 = _sign(problem.event(t0, y0))
    if sign0 == 0:
        return t0, y0
    if tableau is not None and tableau.is_adaptive:
        opts = parse_adaptive(options)
        limit = opts.max_num_steps if options and "max_num_steps" in options else MAX_EVENT_STEPS
        stepper = AdaptiveStepper(problem, tableau, t0, y0, rtol, atol, opts, direction)
        for _ in range(limit):
            step = stepper.advance()
            if _sign(problem.event(step.t1, step.y1)) != sign0:
                return _bisect(problem, stepper.fit(step), sign0, step.t0, step.t1)
    else:
        if fixed_opts.step_size is None:
            raise ValueError("an event solve with a fixed-step method needs options['step_size']: there is no "
                             "end time to lay a grid over")
        stepper = stepper_factory()
        t, y = t0, y0
        for _ in range(MAX_EVENT_STEPS):
            t1 = t + direction * fixed_opts.step_size
            y1 = stepper.step(t, t1, y)
            if _sign(problem.event(t1, y1)) != sign0:
                return _bisect(problem, fit_step(problem, fixed_opts, t, t1, y, y1), sign0, t, t1)
            t, y = t1, y1
    raise RuntimeError(f"event_fn did not change sign within the step budget from t={t0!r}; check the event "
                       "condition and the direction of the search")


def attach_event_gradient(problem, event_t, state):
    """(event time tensor, state) with the derivatives described in the module notes.

    dg/dt, dg/dy and f at the event are computed now, as constants, and the time is
    written as event_t - (dg/dy . (state - state.detach())) / (dg/dt + dg/dy . f): its
    value is event_t, its derivative the implicit function theorem's. (A custom
    Function holding event_fn until backward would tie the graph to the caller's
    function, a cycle through the engine that Python's collector cannot break.)
    """
    time = problem.time(event_t)
    if not (lucid.is_grad_enabled() and state.requires_grad):
        return time, state
    with lucid.enable_grad():
        t_leaf = time.clone().requires_grad_(True)
        y_leaf = state.detach().clone().requires_grad_(True)
        value = problem.call_event(t_leaf, y_leaf)
        if value.requires_grad:
            dg_dt, dg_dy = lucid.autograd.grad([value], [t_leaf, y_leaf], allow_unused=True)
        else:  # event_fn reads neither t nor y
            dg_dt = dg_dy = None
    with lucid.no_grad():
        slope = problem.rhs(event_t, state.detach())
        rate = None if dg_dy is None else (dg_dy * slope).sum()
        if rate is not None and dg_dt is not None:
            rate = rate + dg_dt
    if rate is not None:
        # rate == 0 is a tangential crossing, where the event time has no derivative.
        time = time - ((state - state.detach()) * (dg_dy / rate)).sum()
    return time, state + slope * (time - time.detach())
