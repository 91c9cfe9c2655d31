"""Adamax: Adam with the infinity norm (torch.optim.Adamax)."""

from .. import _C
from ._checks import check_betas, check_eps, check_lr, check_no_capturable, check_weight_decay
from .optimizer import Optimizer, _fused_step, _scalar_state, _zeros

__all__ = ["Adamax"]


class Adamax(Optimizer):
    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, foreach=None, *,
                 maximize=False, differentiable=False, capturable=False):
        check_lr(lr)
        check_eps(eps)
        check_betas(betas)
        check_weight_decay(weight_decay)
        check_no_capturable("Adamax", capturable, differentiable)
        defaults = dict(lr=lr, betas=tuple(betas), eps=eps, weight_decay=weight_decay, foreach=foreach,
                        maximize=maximize, differentiable=differentiable, capturable=capturable)
        super().__init__(params, defaults)

    def step(self, closure=None):
        return self._step_groups(closure, self._step_group)

    def _step_group(self, group, params, grads):
        def init(p, state):
            state["step"] = _scalar_state(0)
            state["exp_avg"], state["exp_inf"] = _zeros(p), _zeros(p)

        m1, u, steps = self._states(params, init, "exp_avg", "exp_inf", "step")
        beta1, beta2 = group["betas"]
        _fused_step(_C._adamax_step, params, grads, [m1, u], [steps], group["lr"], beta1, beta2, group["eps"],
                    group["weight_decay"], group["maximize"])
