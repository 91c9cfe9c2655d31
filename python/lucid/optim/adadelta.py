"""Adadelta (torch.optim.Adadelta)."""

from .. import _C
from ._checks import check_eps, check_lr, check_no_capturable, check_weight_decay
from .optimizer import Optimizer, _fused_step, _scalar_state
from .sgd import _closure_loss

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
        loss = _closure_loss(closure)
        import lucid

        for group in self.param_groups:
            params, grads = self._grads(group)
            if not params:
                continue
            square_avgs, acc_deltas, steps = [], [], []
            for p in params:
                state = self.state[p]
                if not state:
                    state["step"] = _scalar_state(0)
                    state["square_avg"] = lucid.zeros(p.shape, dtype=p.dtype, device=p.device)
                    state["acc_delta"] = lucid.zeros(p.shape, dtype=p.dtype, device=p.device)
                square_avgs.append(state["square_avg"])
                acc_deltas.append(state["acc_delta"])
                steps.append(state["step"])
            _fused_step(_C._adadelta_step, params, grads, [square_avgs, acc_deltas], [steps], group["lr"],
                        group["rho"], group["eps"], group["weight_decay"], group["maximize"])
        return loss
