"""Adadelta (torch.optim.Adadelta)."""

from .. import _C
from ._checks import check_eps, check_lr, check_no_capturable, check_weight_decay
from .optimizer import Optimizer, _fused_step, _scalar_state, _zeros

__all__ = ["Adadelta"]


class Adadelta(Optimizer):
    def __init__(self, params, lr=1.0, rho=0.9, eps=1e-6, weight_decay=0, foreach=None, *, capturable=False,
                 maximize=False, differentiable=False):
        check_lr(lr)
        if not 0.0 <= rho <= 1.0:
            raise ValueError(f"Invalid rho value: {rho}")
        check_eps(eps)
        check_weight_decay(weight_decay)
        check_no_capturable("Adadelta", capturable, differentiable)
        defaults = dict(lr=lr, rho=rho, eps=eps, weight_decay=weight_decay, maximize=maximize,
                        capturable=capturable, foreach=foreach, differentiable=differentiable)
        super().__init__(params, defaults)

    def step(self, closure=None):
        return self._step_groups(closure, self._step_group)

    def _step_group(self, group, params, grads):
        def init(p, state):
            state["step"] = _scalar_state(0)
            state["square_avg"], state["acc_delta"] = _zeros(p), _zeros(p)

        square_avgs, acc_deltas, steps = self._states(params, init, "square_avg", "acc_delta", "step")
        _fused_step(_C._adadelta_step, params, grads, [square_avgs, acc_deltas], [steps], group["lr"], group["rho"],
                    group["eps"], group["weight_decay"], group["maximize"])
