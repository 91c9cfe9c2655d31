"""Adams multistep steps: explicit Adams-Bashforth, or Bashforth predicting and
Adams-Moulton correcting ("implicit_adams" / "fixed_adams").

An order-k Adams step reuses the derivatives of the last k grid points, so it costs one
new evaluation of f whatever its order. Its weights assume those points are evenly
spaced; the order therefore rises only over a run of steps of the current size, and
while fewer than min(4, max_order) such points exist (at the start, after a change of
step size) the step is classical RK4 instead.
"""

import math
from fractions import Fraction
from functools import lru_cache

import lucid
from ._explicit import combine, explicit_stages, stage_time
from ._tableaux_explicit import RK4_CLASSIC

__all__ = ["AdamsStepper", "adams_weights"]

_STARTUP_ORDER = 4


def _polynomial_times(p, q):
    out = [Fraction(0)] * (len(p) + len(q) - 1)
    for i, x in enumerate(p):
        for j, y in enumerate(q):
            out[i + j] += x * y
    return out


@lru_cache(maxsize=None)
def adams_weights(order, corrector):
    """Weights w_j of y_next = y + h * sum_j w_j f_j, newest derivative first.

    They integrate over one step the polynomial through the derivatives at the nodes
    (in steps, relative to the step's start) 0, -1, ..., -(order-1) for Bashforth, and
    1, 0, ..., -(order-2) for Moulton: w_j is the integral over [0, 1] of node j's
    Lagrange basis polynomial. Exact rationals, rounded once.
    """
    first = 1 if corrector else 0
    nodes = [Fraction(first - j) for j in range(order)]
    weights = []
    for j, node_j in enumerate(nodes):
        basis = [Fraction(1)]
        for i, node_i in enumerate(nodes):
            if i != j:
                basis = _polynomial_times(basis, [-node_i / (node_j - node_i), 1 / (node_j - node_i)])
        weights.append(float(sum(c / (power + 1) for power, c in enumerate(basis))))
    return tuple(weights)


def _error_ratio(old, new, rtol, atol):
    scale = lucid.maximum(old.abs(), new.abs()) * rtol + atol
    x = (new - old) / scale
    return float((x * x).mean().sqrt().item()) if x.numel() else 0.0


class AdamsStepper:
    def __init__(self, problem, corrector, max_order, max_iters, rtol, atol, perturb):
        self.problem, self.corrector = problem, corrector
        self.max_order, self.max_iters = max_order, max_iters
        self.rtol, self.atol, self.perturb = rtol, atol, perturb
        self.history = []  # (t, f(t, y)) at past grid points, newest first

    def _usable_order(self, dt):
        """How many remembered derivatives lie on the grid of step dt, back from the newest."""
        count = 1
        for (newer, _), (older, _) in zip(self.history, self.history[1:]):
            if count == self.max_order or not math.isclose(newer - older, dt, rel_tol=1e-9, abs_tol=0.0):
                break
            count += 1
        return min(count, self.max_order)

    def step(self, t0, t1, y):
        dt = t1 - t0
        f0 = self.problem.rhs(stage_time(t0, t1, 0.0, self.perturb), y)
        self.history.insert(0, (t0, f0))
        del self.history[self.max_order:]
        order = self._usable_order(dt)
        if order < min(_STARTUP_ORDER, self.max_order):
            ks = explicit_stages(self.problem, RK4_CLASSIC, t0, t1, y, f0=f0, perturb=self.perturb)
            return combine(y, ks, RK4_CLASSIC.b, dt)
        derivatives = [f for _, f in self.history[:order]]
        y1 = combine(y, derivatives, adams_weights(order, False), dt)
        if self.corrector:
            y1 = self._correct(t0, t1, y, y1, derivatives, order)
        return y1

    def _correct(self, t0, t1, y, predicted, derivatives, order):
        """Moulton sweeps until a sweep moves y1 by less than the tolerance (at most max_iters)."""
        weights = adams_weights(order, True)
        current = predicted
        for _ in range(self.max_iters):
            f1 = self.problem.rhs(stage_time(t0, t1, 1.0, self.perturb), current)
            updated = combine(y, [f1, *derivatives[:order - 1]], weights, t1 - t0)
            moved = _error_ratio(current.detach(), updated.detach(), self.rtol, self.atol)
            current = updated
            if moved <= 1.0:
                break
        return current
