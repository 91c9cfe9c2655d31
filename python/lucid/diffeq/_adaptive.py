"""Adaptive steps with an embedded pair, and integration to output times through them.

The two solutions of an embedded pair differ by an estimate of the step's local error.
A step is accepted when that error, measured against atol + rtol * |y| (RMS over the
state, as torchdiffeq does), is at most 1; either way the next step size follows from
how far inside or outside the tolerance it landed. The times in t are then outputs
only: the steps are the controller's, and each output is read off the step's dense
polynomial. The accept/reject decision needs the error on the host, one sync per step.
"""

import math
from dataclasses import dataclass

import lucid
from ._explicit import combine, explicit_stages
from ._interp import cubic_hermite, evaluate, quartic
from ._options import parse_adaptive

__all__ = ["AdaptiveStepper", "integrate", "integrate_dense"]


def _rms(x):
    return float((x * x).mean().sqrt().item()) if x.numel() else 0.0


def _norm(problem, opts, scaled):
    if opts.norm is None:
        return _rms(scaled)
    value = opts.norm(problem.split(scaled))
    return float(value.item()) if isinstance(value, lucid.Tensor) else float(value)


def _finite_or_inf(value):
    return value if math.isfinite(value) else math.inf


def select_initial_step(problem, opts, t0, y0, f0, order, rtol, atol, direction):
    """Hairer, Norsett and Wanner's starting step: size a trial step from |y| / |f|, take
    it, and refine from how fast f changed (one extra evaluation of f)."""
    with lucid.no_grad():
        y0, f0 = y0.detach(), f0.detach()
        scale = y0.abs() * rtol + atol
        d0 = _norm(problem, opts, y0 / scale)
        d1 = _norm(problem, opts, f0 / scale)
        h0 = 1e-6 if (d0 < 1e-5 or d1 < 1e-5) else 0.01 * d0 / d1
        f1 = problem.rhs(t0 + direction * h0, y0 + f0 * (direction * h0))
        d2 = _norm(problem, opts, (f1 - f0) / scale) / h0
    largest = max(d1, d2)
    if not (math.isfinite(h0) and math.isfinite(largest)):
        # (non-finite values: start small, and let the error test judge the step)
        return 1e-6
    h1 = max(1e-6, h0 * 1e-3) if largest <= 1e-15 else (0.01 / largest) ** (1.0 / (order + 1))
    return min(100.0 * h0, h1)


def optimal_step(h, ratio, opts, order):
    """The next step size from this one's error ratio; an accepted step never shrinks."""
    if ratio == 0.0:
        return h * opts.ifactor
    dfactor = 1.0 if ratio < 1.0 else opts.dfactor
    factor = min(opts.ifactor, max(opts.safety / ratio ** (1.0 / order), dfactor))
    return h * factor


@dataclass
class Step:
    """One accepted step: enough to interpolate inside it."""
    t0: float
    t1: float
    y0: object
    y1: object
    f0: object
    f1: object
    ks: list


class AdaptiveStepper:
    """Takes accepted steps from (t0, y0) in `direction`, one per advance()."""

    def __init__(self, problem, tableau, t0, y0, rtol, atol, opts, direction, end=None):
        self.problem, self.tableau, self.opts = problem, tableau, opts
        self.rtol, self.atol, self.direction = rtol, atol, direction
        self.t, self.y = t0, y0
        self.f = problem.rhs(t0, y0)
        self.accepted = 0
        # Times steps must land on; past a jump time f is evaluated afresh on its far side.
        # The end of the solve is one: the last value is then the method's own rather than
        # its interpolant's, which for dopri8, bosh3 and fehlberg2 is far less accurate.
        landings = set(opts.step_t) | set(opts.jump_t) | ({end} if end is not None else set())
        self._landings = sorted(landings, key=lambda v: direction * v)
        self._jumps = set(opts.jump_t)
        if opts.first_step is not None:
            h = opts.first_step
        else:
            h = select_initial_step(problem, opts, t0, y0, self.f, tableau.order - 1, rtol, atol, direction)
        self.h = self._clamp(h)

    def _clamp(self, h):
        return min(max(h, self.opts.min_step), self.opts.max_step)

    def _next_landing(self):
        for time in self._landings:
            if self.direction * (time - self.t) > 0.0:
                return time
        return None

    def _error_ratio(self, y1, ks, dt):
        with lucid.no_grad():
            error = None
            for k, weight in zip(ks, self.tableau.b_error):
                if weight != 0.0:
                    term = k.detach() * (weight * dt)
                    error = term if error is None else error + term
            y0, y1 = self.y.detach(), y1.detach()
            scale = lucid.maximum(y0.abs(), y1.abs()) * self.rtol + self.atol
            return _finite_or_inf(_norm(self.problem, self.opts, error / scale))

    def advance(self):
        tableau, opts, problem = self.tableau, self.opts, self.problem
        while True:
            h = self.h
            landing = self._next_landing()
            if landing is not None and abs(landing - self.t) <= h:
                t1 = landing
                h = abs(landing - self.t)
            else:
                landing = None
                t1 = self.t + self.direction * h
            if t1 == self.t or not (0.0 < h < math.inf):
                raise RuntimeError(f"step size underflow at t={self.t!r}: the step shrank below the time's "
                                   "resolution (func returning non-finite values, or a problem too stiff for an "
                                   "explicit method?)")
            at_jump = landing is not None and landing in self._jumps
            dt = t1 - self.t
            ks = explicit_stages(problem, tableau, self.t, t1, self.y, f0=self.f, perturb=at_jump)
            y1 = combine(self.y, ks, tableau.b, dt)
            ratio = self._error_ratio(y1, ks, dt)
            # A step already at min_step is accepted: that floor is what the caller asked for.
            accepted = ratio <= 1.0 or h <= opts.min_step
            proposal = self._clamp(optimal_step(h, ratio, opts, tableau.order))
            if not accepted:
                self.h = proposal
                continue
            self.accepted += 1
            if self.accepted > opts.max_num_steps:
                raise RuntimeError(f"max_num_steps ({opts.max_num_steps}) exceeded at t={t1!r}; loosen rtol/atol "
                                   "or raise options['max_num_steps']")
            f1 = ks[-1] if tableau.is_fsal else problem.rhs(t1, y1)
            if at_jump:
                # f jumps here: the interpolant keeps the near side, the next step starts on the far one.
                f_next = problem.rhs(math.nextafter(t1, t1 + self.direction), y1)
            else:
                f_next = f1
            step = Step(self.t, t1, self.y, y1, self.f, f1, ks)
            self.t, self.y, self.f, self.h = t1, y1, f_next, proposal
            return step

    def fit(self, step):
        """The step's dense-output polynomial: the quartic through the midpoint state when
        the tableau's mid weights are accurate enough to help, else the cubic Hermite."""
        dt = step.t1 - step.t0
        if self.tableau.mid_order < 4:
            return cubic_hermite(step.y0, step.y1, step.f0, step.f1, dt)
        y_mid = combine(step.y0, step.ks, self.tableau.mid, dt)
        return quartic(step.y0, step.y1, y_mid, step.f0, step.f1, dt)


def _stepper(problem, tableau, t0, t_end, rtol, atol, options):
    direction = 1.0 if t_end > t0 else -1.0
    return AdaptiveStepper(problem, tableau, t0, problem.y0, rtol, atol, parse_adaptive(options), direction,
                           end=t_end)


def integrate(problem, tableau, grid, rtol, atol, options, return_trajectory):
    """(final state, [state at each time of grid] or []) with adaptive steps."""
    stepper = _stepper(problem, tableau, grid[0], grid[-1], rtol, atol, options)
    direction = stepper.direction
    trajectory = [problem.y0] if return_trajectory else []
    step, coefficients = None, None
    value = problem.y0
    for target in grid[1:]:
        while direction * (stepper.t - target) < 0.0:
            step, coefficients = stepper.advance(), None
        if stepper.t == target:
            value = stepper.y
        else:
            if coefficients is None:
                coefficients = stepper.fit(step)
            value = evaluate(coefficients, step.t0, step.t1, target)
        if return_trajectory:
            trajectory.append(value)
    return value, trajectory


def integrate_dense(problem, tableau, t0, t1, rtol, atol, options):
    """Every accepted step across [t0, t1] as (start, end, quartic)."""
    stepper = _stepper(problem, tableau, t0, t1, rtol, atol, options)
    segments = []
    while stepper.direction * (stepper.t - t1) < 0.0:
        step = stepper.advance()
        segments.append((step.t0, step.t1, stepper.fit(step)))
    return segments
