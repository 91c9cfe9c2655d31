"""SparseAdam (torch.optim.SparseAdam): "lazy" Adam that updates only the entries a
step has a gradient for, leaving the moments of the others untouched.

lucid has no sparse tensors (Embedding(sparse=True) is refused), so the entries a
gradient is "for" are its nonzero ones: for an embedding table these are exactly
the rows the batch looked up, the rows a sparse gradient would list."""

import math

from ._checks import check_betas, check_eps, check_lr
from .optimizer import Optimizer, _scalar_state, _zeros

__all__ = ["SparseAdam"]


class SparseAdam(Optimizer):
    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, maximize=False):
        check_lr(lr)
        check_eps(eps)
        check_betas(betas)
        defaults = dict(lr=lr, betas=tuple(betas), eps=eps, maximize=maximize)
        super().__init__(params, defaults)

    def step(self, closure=None):
        return self._step_groups(closure, self._step_group)

    def _step_group(self, group, params, grads):
        import lucid

        def init(p, state):
            state["step"] = _scalar_state(0)
            state["exp_avg"], state["exp_avg_sq"] = _zeros(p), _zeros(p)

        beta1, beta2 = group["betas"]
        with lucid.no_grad():
            for p, grad, m1, m2, step in zip(params, grads, *self._states(params, init, "exp_avg", "exp_avg_sq",
                                                                          "step")):
                if group["maximize"]:
                    grad = -grad
                step += 1
                t = step.item()
                present = grad != 0
                zero = lucid.zeros((), dtype=p.dtype, device=p.device)
                m1.add_(lucid.where(present, (grad - m1) * (1 - beta1), zero))
                m2.add_(lucid.where(present, (grad * grad - m2) * (1 - beta2), zero))
                step_size = group["lr"] * math.sqrt(1 - beta2 ** t) / (1 - beta1 ** t)
                update = m1 / (m2.sqrt() + group["eps"])
                p.add_(lucid.where(present, update * -step_size, zero))
