"""ASGD: averaged SGD (torch.optim.ASGD); `ax` holds the running average."""

from .. import _C
from ._checks import check_lr, check_no_capturable, check_weight_decay
from .optimizer import Optimizer, _fused_step, _scalar_state, _zeros

__all__ = ["ASGD"]


class ASGD(Optimizer):
    def __init__(self, params, lr=1e-2, lambd=1e-4, alpha=0.75, t0=1e6, weight_decay=0, foreach=None,
                 maximize=False, differentiable=False, capturable=False):
        check_lr(lr)
        check_weight_decay(weight_decay)
        check_no_capturable("ASGD", capturable, differentiable)
        defaults = dict(lr=lr, lambd=lambd, alpha=alpha, t0=t0, weight_decay=weight_decay, foreach=foreach,
                        maximize=maximize, differentiable=differentiable, capturable=capturable)
        super().__init__(params, defaults)

    def step(self, closure=None):
        return self._step_groups(closure, self._step_group)

    def _step_group(self, group, params, grads):
        def init(p, state):
            state["step"], state["eta"], state["mu"] = _scalar_state(0), _scalar_state(group["lr"]), _scalar_state(1)
            state["ax"] = _zeros(p)

        axs, etas, mus, steps = self._states(params, init, "ax", "eta", "mu", "step")
        _fused_step(_C._asgd_step, params, grads, [axs], [etas, mus, steps], group["lr"], group["lambd"],
                    group["alpha"], group["t0"], group["weight_decay"], group["maximize"])
