"""RAdam: Adam with a rectified adaptive learning rate (torch.optim.RAdam)."""

from .. import _C
from ._checks import check_betas, check_eps, check_lr, check_no_capturable, check_weight_decay
from .optimizer import Optimizer, _fused_step, _scalar_state, _zeros

__all__ = ["RAdam"]


class RAdam(Optimizer):
    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
                 decoupled_weight_decay=False, *, foreach=None, maximize=False, capturable=False,
                 differentiable=False):
        check_lr(lr)
        check_eps(eps)
        check_betas(betas)
        check_weight_decay(weight_decay)
        check_no_capturable("RAdam", capturable, differentiable)
        defaults = dict(lr=lr, betas=tuple(betas), eps=eps, weight_decay=weight_decay, maximize=maximize,
                        foreach=foreach, capturable=capturable, decoupled_weight_decay=decoupled_weight_decay,
                        differentiable=differentiable)
        super().__init__(params, defaults)

    def step(self, closure=None):
        return self._step_groups(closure, self._step_group)

    def _step_group(self, group, params, grads):
        def init(p, state):
            state["step"] = _scalar_state(0)
            state["exp_avg"], state["exp_avg_sq"] = _zeros(p), _zeros(p)

        m1, m2, steps = self._states(params, init, "exp_avg", "exp_avg_sq", "step")
        beta1, beta2 = group["betas"]
        _fused_step(_C._radam_step, params, grads, [m1, m2], [steps], group["lr"], beta1, beta2, group["eps"],
                    group["weight_decay"], group["decoupled_weight_decay"], group["maximize"])
