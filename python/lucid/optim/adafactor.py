"""Adafactor (torch.optim.Adafactor; Shazeer & Stern, 2018): Adam-like steps whose second
moment of a matrix is kept factored, as a row mean and a column mean of the squared
gradient, so it costs O(rows + cols) memory instead of O(rows * cols).

torch's variant, step for step: lr caps the relative step size rho_t = min(lr, 1/sqrt(t))
and scales decoupled weight decay; eps1 (the dtype's machine epsilon when None) guards
the variance estimate and the update's denominator; eps2 is the smallest step scale.
Written with lucid tensor ops, so it runs wherever the parameters live. State is torch's:
"step", and "row_var"/"col_var" for parameters of 2 or more dims, else "variance"."""

from .._dtype import finfo
from .._tensor import Tensor
from ..autograd import no_grad
from ._working_copies import as_float32, float32_working_copies
from .optimizer import Optimizer, _scalar_state, _zeros

__all__ = ["Adafactor"]


def _to_float(value):
    return value.item() if isinstance(value, Tensor) else value


def _rms(tensor, scale=1.0):
    """The root mean square of all of tensor's elements over `scale`, as a Python float."""
    return tensor.norm(2).item() / ((tensor.numel() ** 0.5) * scale)


def _zeros_reduced(p, dim):
    """Zeros of p's shape with `dim` reduced to 1: a factored second moment."""
    import lucid

    shape = list(p.shape)
    shape[dim] = 1
    return lucid.zeros(shape, dtype=p.dtype, device=p.device)


class Adafactor(Optimizer):
    def __init__(self, params, lr=1e-2, beta2_decay=-0.8, eps=(None, 1e-3), d=1.0, weight_decay=0.0, *,
                 foreach=None, maximize=False):
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 <= lr:
            raise ValueError(f"Learning rate should be >= 0 but is: {lr}")
        if not 0.0 >= beta2_decay:
            raise ValueError(f"beta2_decay should be <= 0 but is: {beta2_decay}")
        if eps[0] is not None and not 0.0 <= eps[0]:
            raise ValueError(f"epsilon1 should be >= 0 but is: {eps[0]}")
        if not 0.0 <= eps[1]:
            raise ValueError(f"epsilon2 should be >= 0 but is: {eps[1]}")
        if not 1.0 <= d:
            raise ValueError(f"Clipping threshold d should be >= 1 but is: {d}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"weight_decay should be >= 0 but is: {weight_decay}")
        # foreach is accepted for torch's signature; every path takes the same steps.
        defaults = dict(lr=lr, beta2_decay=beta2_decay, eps=eps, d=d, weight_decay=weight_decay, foreach=foreach,
                        maximize=maximize)
        super().__init__(params, defaults)

    def step(self, closure=None):
        return self._step_groups(closure, self._step_group)

    def _step_group(self, group, params, grads):
        for p in params:
            if p.is_complex():
                raise RuntimeError("Adafactor does not support complex parameters")

        def init(p, state):
            state["step"] = _scalar_state(0)
            if p.dim() > 1:
                state["row_var"] = _zeros_reduced(p, -1)
                state["col_var"] = _zeros_reduced(p, -2)
            else:
                state["variance"] = _zeros(p)

        self._states(params, init)
        eps1, eps2 = group["eps"]
        if eps1 is None:
            # As torch: the epsilon of the group's first parameter's dtype serves every parameter.
            eps1 = finfo(params[0].dtype).eps
        lr = _to_float(group["lr"])
        with no_grad():
            for p, grad in zip(params, grads):
                if group["maximize"]:
                    grad = -grad
                self._update(p, grad, self.state[p], lr, eps1, eps2, group)

    @staticmethod
    def _update(p, grad, state, lr, eps1, eps2, group):
        step = state["step"]
        step.add_(1)
        t = step.item()
        one_minus_beta2 = t ** group["beta2_decay"]  # the weight of the new squared gradient
        rho = min(lr, 1 / (t ** 0.5))
        factored = grad.dim() > 1
        moments = (state["row_var"], state["col_var"]) if factored else (state["variance"],)
        grad = as_float32(grad)
        with float32_working_copies(p, *moments) as (p, *moments):
            alpha = max(eps2, _rms(p)) * rho  # measured before weight decay, as torch
            if group["weight_decay"] != 0:
                p.mul_(1 - lr * group["weight_decay"])
            if factored:
                row_var, col_var = moments
                row_var.lerp_(grad.square().mean(dim=-1, keepdim=True), one_minus_beta2)
                col_var.lerp_(grad.square().mean(dim=-2, keepdim=True), one_minus_beta2)
                # The rank-1 estimate of the squared gradient: outer product of the row and
                # column means over the mean of all of it (the mean of the row means).
                var_estimate = (row_var @ col_var) / row_var.mean(dim=-2, keepdim=True).clamp(min=eps1)
            else:
                (variance,) = moments
                variance.lerp_(grad * grad, one_minus_beta2)
                var_estimate = variance
            update = var_estimate.clamp(min=eps1 * eps1).rsqrt() * grad
            # Clipping: the update's RMS is brought down to d when it exceeds it.
            denom = max(1.0, _rms(update, group["d"]))
            p.add_(update, alpha=-alpha / denom)
