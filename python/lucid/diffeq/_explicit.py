"""One explicit Runge-Kutta step: the stages in order, then their weighted sum."""

import math

__all__ = ["combine", "stage_time", "explicit_stages", "ExplicitStepper"]


def combine(y, ks, weights, dt):
    """y + dt * sum(w * k): zero weights cost nothing, which most tableaux are full of."""
    out = y
    for k, weight in zip(ks, weights):
        if weight != 0.0:
            out = out + k * (weight * dt)
    return out


def stage_time(t0, t1, c, perturb):
    """The time of a stage at fraction c of [t0, t1].

    With perturb, a stage sitting on either end is moved one float inward, so a
    right-hand side with a jump exactly on a grid point is sampled from the side the
    step lies on (the reference library's perturb option)."""
    if perturb and c == 0.0:
        return math.nextafter(t0, t1)
    if perturb and c == 1.0:
        return math.nextafter(t1, t0)
    return t0 + c * (t1 - t0) if c != 1.0 else t1


def explicit_stages(problem, tableau, t0, t1, y, f0=None, perturb=False):
    """The stage derivatives k_1..k_s of one step; f0, when given, is k_1 already."""
    dt = t1 - t0
    ks = []
    for i in range(tableau.stages):
        if i == 0 and f0 is not None:
            ks.append(f0)
            continue
        stage_y = combine(y, ks, tableau.a[i], dt)
        ks.append(problem.rhs(stage_time(t0, t1, tableau.c[i], perturb), stage_y))
    return ks


class ExplicitStepper:
    """Fixed-grid steps with an explicit tableau (its error weights, if any, unused)."""

    def __init__(self, problem, tableau, perturb=False):
        self.problem = problem
        self.tableau = tableau
        self.perturb = perturb

    def step(self, t0, t1, y):
        ks = explicit_stages(self.problem, self.tableau, t0, t1, y, perturb=self.perturb)
        return combine(y, ks, self.tableau.b, t1 - t0)
