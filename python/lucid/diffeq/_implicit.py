"""Steps of an implicit Runge-Kutta method: the stage equations solved by Newton.

The stages K satisfy K_i = f(t + c_i h, y + h sum_j a_ij K_j). A diagonally implicit
tableau is solved one stage at a time (n unknowns each); any other as one coupled
system of s * n unknowns, whose Newton matrix has blocks delta_ij I - h a_ij J_i.

Gradients: the solve itself runs detached. When autograd is recording, one more
Newton update is taken with the residual recorded and the exact matrix M at the
solution: K - M^-1 R(K). Its value is the solution (R is ~0 there), and its derivative
is -M^-1 dR, which is the implicit function theorem's exact derivative of the stages.
So odeint differentiates through an implicit step without unrolling the iteration.
"""

import lucid
from ._explicit import combine, stage_time
from ._newton import jacobian, newton, solve_linear

__all__ = ["ImplicitStepper"]


def _identity(n, like):
    return lucid.eye(n, dtype=like.dtype, device=like.device)


class ImplicitStepper:
    """Steps on 1-D views of the state: the Newton matrices are over its flat elements."""

    def __init__(self, problem, tableau, perturb, max_iters):
        self.problem, self.tableau = problem, tableau
        self.perturb, self.max_iters = perturb, max_iters
        self.a = tableau.square_a()

    def step(self, t0, t1, y):
        shape = y.shape

        def flat_rhs(t, v):
            return self.problem.rhs(t, v.reshape(shape)).reshape(-1)

        times = [stage_time(t0, t1, c, self.perturb) for c in self.tableau.c]
        flat = y.reshape(-1)
        if self.tableau.is_dirk:
            ks = self._diagonal_stages(flat_rhs, times, t1 - t0, flat, f"t={t0!r}")
        else:
            ks = self._coupled_stages(flat_rhs, times, t1 - t0, flat, f"t={t0!r}")
        return combine(flat, ks, self.tableau.b, t1 - t0).reshape(shape)

    def _diagonal_stages(self, rhs, times, dt, y, where):
        ks = []
        for i, t_i in enumerate(times):
            known = combine(y, ks, self.a[i][:i], dt)
            diagonal = self.a[i][i] * dt
            if diagonal == 0.0:  # an explicit stage
                ks.append(rhs(t_i, known))
                continue
            base = known.detach()
            identity = _identity(base.numel(), base)

            def residual(k, t_i=t_i, base=base, diagonal=diagonal):
                return k - rhs(t_i, base + k * diagonal)

            def refresh(k, t_i=t_i, base=base, diagonal=diagonal, identity=identity):
                return identity - jacobian(rhs, t_i, base + k * diagonal) * diagonal

            with lucid.no_grad():
                guess = rhs(t_i, base)
                matrix = identity - jacobian(rhs, t_i, base) * diagonal
                k = newton(residual, matrix, refresh, guess, self.max_iters, f"{where}, stage {i}")
            if lucid.is_grad_enabled():
                recorded = k - rhs(t_i, known + k * diagonal)
                if recorded.requires_grad:
                    k = k - solve_linear(refresh(k), recorded, where)
            ks.append(k)
        return ks

    def _coupled_stages(self, rhs, times, dt, y, where):
        a, s = self.a, self.tableau.stages
        base = y.detach()
        n = base.numel()
        identity = _identity(n, base)
        zero = lucid.zeros((n, n), dtype=base.dtype, device=base.device)

        def split(x):
            return [x[i * n:(i + 1) * n] for i in range(s)]

        def stage_states(ks, start):
            return [combine(start, ks, a[i], dt) for i in range(s)]

        def matrix_from(jacobians):
            rows = []
            for i in range(s):
                blocks = []
                for j in range(s):
                    block = identity if i == j else zero
                    if a[i][j] != 0.0:
                        block = block - jacobians[i] * (a[i][j] * dt)
                    blocks.append(block)
                rows.append(lucid.cat(blocks, dim=1))
            return lucid.cat(rows, dim=0)

        def residual(x, start=base):
            ks = split(x)
            states = stage_states(ks, start)
            return lucid.cat([ks[i] - rhs(times[i], states[i]) for i in range(s)])

        def refresh(x):
            states = stage_states(split(x), base)
            return matrix_from([jacobian(rhs, times[i], states[i]) for i in range(s)])

        with lucid.no_grad():
            f0 = rhs(times[0], base)
            matrix = matrix_from([jacobian(rhs, times[0], base)] * s)
            x = newton(residual, matrix, refresh, lucid.cat([f0] * s), self.max_iters, where)
        if lucid.is_grad_enabled():
            recorded = residual(x, start=y)
            if recorded.requires_grad:
                x = x - solve_linear(refresh(x), recorded, where)
        return split(x)
