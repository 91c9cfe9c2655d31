"""Adam and AdamW (torch.optim.Adam, torch.optim.AdamW): one fused pass per parameter."""

from .. import _C
from ._checks import check_betas, check_eps, check_lr, check_no_capturable, check_weight_decay
from .optimizer import Optimizer, _fused_step, _scalar_state, _zeros

__all__ = ["Adam", "AdamW"]


class Adam(Optimizer):
    _decoupled_default = False

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, amsgrad=False, *,
                 foreach=None, maximize=False, capturable=False, differentiable=False, fused=None,
                 decoupled_weight_decay=None):
        check_lr(lr)
        check_eps(eps)
        check_betas(betas)
        check_weight_decay(weight_decay)
        check_no_capturable(type(self).__name__, capturable, differentiable)
        if decoupled_weight_decay is None:
            decoupled_weight_decay = self._decoupled_default
        defaults = dict(lr=lr, betas=tuple(betas), eps=eps, weight_decay=weight_decay, amsgrad=amsgrad,
                        maximize=maximize, foreach=foreach, capturable=capturable, differentiable=differentiable,
                        fused=fused, decoupled_weight_decay=decoupled_weight_decay)
        super().__init__(params, defaults)

    def step(self, closure=None):
        return self._step_groups(closure, self._step_group)

    def _step_group(self, group, params, grads):
        amsgrad = group["amsgrad"]

        def init(p, state):
            state["step"] = _scalar_state(0)
            state["exp_avg"], state["exp_avg_sq"] = _zeros(p), _zeros(p)
            if amsgrad:
                state["max_exp_avg_sq"] = _zeros(p)

        m1, m2, steps = self._states(params, init, "exp_avg", "exp_avg_sq", "step")
        (vmax,) = self._states(params, init, "max_exp_avg_sq") if amsgrad else ([],)
        beta1, beta2 = group["betas"]
        _fused_step(_C._adam_step, params, grads, [m1, m2, vmax], [steps], group["lr"], beta1, beta2, group["eps"],
                    group["weight_decay"], amsgrad, group["maximize"], group["decoupled_weight_decay"])

class AdamW(Adam):
    """Adam with decoupled weight decay (the parameter shrinks by lr * weight_decay)."""

    _decoupled_default = True

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2, amsgrad=False, *,
                 maximize=False, foreach=None, capturable=False, differentiable=False, fused=None):
        super().__init__(params, lr, betas, eps, weight_decay, amsgrad, foreach=foreach, maximize=maximize,
                         capturable=capturable, differentiable=differentiable, fused=fused,
                         decoupled_weight_decay=True)
