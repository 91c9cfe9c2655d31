"""SparseAdam (torch.optim.SparseAdam): "lazy" Adam that updates only the entries a
step has a gradient for, leaving the moments of the others untouched.

lucid has no sparse tensors (Embedding(sparse=True) is refused), so the entries a
gradient is "for" are its nonzero ones: for an embedding table these are exactly
the rows the batch looked up, the rows a sparse gradient would list."""

import math

from ._checks import check_betas, check_eps, check_lr
from .optimizer import Optimizer, _scalar_state
from .sgd import _closure_loss

__all__ = ["SparseAdam"]


class SparseAdam(Optimizer):
    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, maximize=False):
        check_lr(lr)
        check_eps(eps)
        check_betas(betas)
        defaults = dict(lr=lr, betas=tuple(betas), eps=eps, maximize=maximize)
        super().__init__(params, defaults)

    def step(self, closure=None):
        loss = _closure_loss(closure)
        import lucid

        with lucid.no_grad():
            for group in self.param_groups:
                beta1, beta2 = group["betas"]
                for p, grad in zip(*self._grads(group)):
                    if group["maximize"]:
                        grad = -grad
                    state = self.state[p]
                    if not state:
                        state["step"] = _scalar_state(0)
                        state["exp_avg"] = lucid.zeros(p.shape, dtype=p.dtype, device=p.device)
                        state["exp_avg_sq"] = lucid.zeros(p.shape, dtype=p.dtype, device=p.device)
                    state["step"] += 1
                    step = state["step"].item()
                    exp_avg, exp_avg_sq = state["exp_avg"], state["exp_avg_sq"]
                    present = grad != 0
                    zero = lucid.zeros((), dtype=p.dtype)
                    avg_update = lucid.where(present, (grad - exp_avg) * (1 - beta1), zero)
                    sq_update = lucid.where(present, (grad * grad - exp_avg_sq) * (1 - beta2), zero)
                    exp_avg.add_(avg_update)
                    exp_avg_sq.add_(sq_update)
                    step_size = group["lr"] * math.sqrt(1 - beta2 ** step) / (1 - beta1 ** step)
                    update = exp_avg / (exp_avg_sq.sqrt() + group["eps"])
                    p.add_(lucid.where(present, update * -step_size, zero))
        return loss
