"""Adam and AdamW (torch.optim.Adam, torch.optim.AdamW): one fused pass per parameter."""

from .. import _C
from ._checks import check_betas, check_eps, check_lr, check_no_capturable, check_weight_decay
from .optimizer import Optimizer, _fused_step, _scalar_state
from .sgd import _closure_loss

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
        check_no_capturable(type(self).__name__, capturable, differentiable, fused)
        if decoupled_weight_decay is None:
            decoupled_weight_decay = self._decoupled_default
        defaults = dict(lr=lr, betas=tuple(betas), eps=eps, weight_decay=weight_decay, amsgrad=amsgrad,
                        maximize=maximize, foreach=foreach, capturable=capturable, differentiable=differentiable,
                        fused=fused, decoupled_weight_decay=decoupled_weight_decay)
        super().__init__(params, defaults)

    def step(self, closure=None):
        loss = _closure_loss(closure)
        import lucid

        for group in self.param_groups:
            params, grads = self._grads(group)
            if not params:
                continue
            amsgrad = group["amsgrad"]
            m1, m2, vmax, steps = [], [], [], []
            for p in params:
                state = self.state[p]
                if not state:
                    state["step"] = _scalar_state(0)
                    state["exp_avg"] = lucid.zeros(p.shape, dtype=p.dtype, device=p.device)
                    state["exp_avg_sq"] = lucid.zeros(p.shape, dtype=p.dtype, device=p.device)
                    if amsgrad:
                        state["max_exp_avg_sq"] = lucid.zeros(p.shape, dtype=p.dtype, device=p.device)
                m1.append(state["exp_avg"])
                m2.append(state["exp_avg_sq"])
                if amsgrad:
                    vmax.append(state["max_exp_avg_sq"])
                steps.append(state["step"])
            beta1, beta2 = group["betas"]
            _fused_step(_C._adam_step, params, grads, [m1, m2, vmax], [steps], group["lr"], beta1, beta2,
                        group["eps"], group["weight_decay"], amsgrad, group["maximize"],
                        group["decoupled_weight_decay"])
        return loss


class AdamW(Adam):
    """Adam with decoupled weight decay (the parameter shrinks by lr * weight_decay)."""

    _decoupled_default = True

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2, amsgrad=False, *,
                 maximize=False, foreach=None, capturable=False, differentiable=False, fused=None):
        super().__init__(params, lr, betas, eps, weight_decay, amsgrad, foreach=foreach, maximize=maximize,
                         capturable=capturable, differentiable=differentiable, fused=fused,
                         decoupled_weight_decay=True)
