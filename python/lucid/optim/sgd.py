"""SGD with momentum, dampening, Nesterov momentum and weight decay (torch.optim.SGD)."""

from .. import _C
from ._checks import check_lr, check_no_capturable, check_weight_decay
from .optimizer import Optimizer, _fused_step, _zeros

__all__ = ["SGD"]


class SGD(Optimizer):
    def __init__(self, params, lr=1e-3, momentum=0, dampening=0, weight_decay=0, nesterov=False, *,
                 maximize=False, foreach=None, differentiable=False, fused=None):
        check_lr(lr)
        if momentum < 0.0:
            raise ValueError(f"Invalid momentum value: {momentum}")
        check_weight_decay(weight_decay)
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        check_no_capturable("SGD", differentiable=differentiable)
        defaults = dict(lr=lr, momentum=momentum, dampening=dampening, weight_decay=weight_decay,
                        nesterov=nesterov, maximize=maximize, foreach=foreach, differentiable=differentiable,
                        fused=fused)
        super().__init__(params, defaults)

    def step(self, closure=None):
        return self._step_groups(closure, self._step_group)

    def _step_group(self, group, params, grads):
        bufs, fresh = [], []
        if group["momentum"] != 0:  # a buffer's first step stores the gradient itself
            for p in params:
                state = self.state[p]
                fresh.append(state.get("momentum_buffer") is None)  # (older torch state_dicts hold None)
                if fresh[-1]:
                    state["momentum_buffer"] = _zeros(p)
                bufs.append(state["momentum_buffer"])
        _fused_step(_C._sgd_step, params, grads, [bufs], [fresh], group["lr"], group["momentum"],
                    group["dampening"], group["weight_decay"], group["nesterov"], group["maximize"])
