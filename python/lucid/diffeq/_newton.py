"""Newton's method for the stage equations of the implicit methods.

The iteration runs with gradients off, on detached values: its iterates are a means,
not part of the answer's derivative. The Jacobian of f comes from autograd, one
reverse pass per row, and from finite differences when f does not record a graph
(the adjoint's backward dynamics, which detach their result). The Newton matrix is
built once per solve from f's Jacobian at the step's start and rebuilt at the current
iterate only when convergence slows: simplified Newton, as stiff solvers run it.
"""

import math
import warnings

import lucid

__all__ = ["jacobian", "newton", "solve_linear", "tolerance"]


def tolerance(dtype):
    """Relative size of the last Newton update that counts as converged."""
    eps = lucid.finfo(dtype).eps
    return 1e-12 if dtype == lucid.float64 else 64.0 * eps


def _finite_difference_jacobian(rhs, t, y, f):
    n = y.numel()
    eps = lucid.finfo(y.dtype).eps
    values = y.tolist()
    eye = lucid.eye(n, dtype=y.dtype, device=y.device)
    columns = []
    for j in range(n):
        delta = math.sqrt(eps) * max(1.0, abs(values[j]))
        columns.append((rhs(t, y + eye[j] * delta) - f) / delta)
    return lucid.stack(columns, dim=1)


def jacobian(rhs, t, y):
    """d f_i / d y_j at (t, y) for a 1-D state and rhs(t, y) -> 1-D: an n x n tensor with
    no graph behind it."""
    y = y.detach()
    n = y.numel()
    with lucid.enable_grad():
        leaf = y.clone().requires_grad_(True)
        out = rhs(t, leaf)
    if not out.requires_grad:
        with lucid.no_grad():
            return _finite_difference_jacobian(rhs, t, y, out.detach()).to(y.dtype)
    eye = lucid.eye(n, dtype=out.dtype, device=out.device)
    rows = []
    for i in range(n):
        (row,) = lucid.autograd.grad([out], [leaf], grad_outputs=[eye[i]], retain_graph=i < n - 1,
                                     allow_unused=True)
        rows.append(lucid.zeros_like(y) if row is None else row.detach())
    return lucid.stack(rows).to(y.dtype)


def solve_linear(matrix, vector, where):
    """matrix^-1 vector for a 1-D vector, naming the solve in the error if it fails."""
    try:
        return lucid.linalg.solve(matrix, vector.reshape(-1, 1)).reshape(-1)
    except RuntimeError as error:
        raise RuntimeError(f"implicit step at {where}: the Newton matrix could not be solved ({error}); "
                           "try a smaller step") from None


def newton(residual, matrix, refresh, guess, max_iters, where):
    """Drives residual(x) to zero from `guess`; returns x.

    matrix: the Newton matrix to start with; refresh(x): the matrix rebuilt at x, used
    when an update shrinks by less than half (the approximate matrix has gone stale).
    Stops when an update is below tolerance relative to x; warns if max_iters pass
    first, since a step taken from an unconverged iterate is not the method's step.
    """
    tol = tolerance(guess.dtype)
    eps = lucid.finfo(guess.dtype).eps
    x, previous = guess, None
    for _ in range(max_iters):
        update = solve_linear(matrix, -residual(x), where)
        x = x + update
        size = float(update.abs().max().item())
        scale = 1.0 + float(x.abs().max().item())
        if not math.isfinite(size):
            raise RuntimeError(f"implicit step at {where}: Newton's iteration diverged; try a smaller step")
        if size <= tol * scale:
            return x
        # Stalled at rounding level: the iterate is as good as this precision allows.
        if previous is not None and size >= previous and size <= 1e3 * eps * scale:
            return x
        if previous is not None and size > 0.5 * previous:
            matrix = refresh(x)
        previous = size
    warnings.warn(f"implicit step at {where}: Newton's iteration did not converge in {max_iters} iterations "
                  "(options['max_iters']); the step was taken from the last iterate", RuntimeWarning, stacklevel=4)
    return x
