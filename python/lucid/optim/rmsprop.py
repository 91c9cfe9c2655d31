"""RMSprop, plain or centered, with momentum (torch.optim.RMSprop)."""

from .. import _C
from ._checks import check_eps, check_lr, check_no_capturable, check_weight_decay
from .optimizer import Optimizer, _fused_step, _scalar_state, _zeros

__all__ = ["RMSprop"]


class RMSprop(Optimizer):
    def __init__(self, params, lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0, momentum=0, centered=False,
                 capturable=False, foreach=None, maximize=False, differentiable=False):
        check_lr(lr)
        check_eps(eps)
        if not 0.0 <= momentum:
            raise ValueError(f"Invalid momentum value: {momentum}")
        check_weight_decay(weight_decay)
        if not 0.0 <= alpha:
            raise ValueError(f"Invalid alpha value: {alpha}")
        check_no_capturable("RMSprop", capturable, differentiable)
        defaults = dict(lr=lr, momentum=momentum, alpha=alpha, eps=eps, centered=centered,
                        weight_decay=weight_decay, capturable=capturable, foreach=foreach, maximize=maximize,
                        differentiable=differentiable)
        super().__init__(params, defaults)

    def step(self, closure=None):
        return self._step_groups(closure, self._step_group)

    def _step_group(self, group, params, grads):
        momentum, centered = group["momentum"], group["centered"]

        def init(p, state):
            state["step"] = _scalar_state(0)
            state["square_avg"] = _zeros(p)
            if momentum > 0:
                state["momentum_buffer"] = _zeros(p)
            if centered:
                state["grad_avg"] = _zeros(p)

        square_avgs, steps = self._states(params, init, "square_avg", "step")
        (grad_avgs,) = self._states(params, init, "grad_avg") if centered else ([],)
        (bufs,) = self._states(params, init, "momentum_buffer") if momentum > 0 else ([],)
        _fused_step(_C._rmsprop_step, params, grads, [square_avgs, grad_avgs, bufs], [steps], group["lr"],
                    group["alpha"], group["eps"], group["weight_decay"], momentum, centered, group["maximize"])
