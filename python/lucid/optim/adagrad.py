"""Adagrad (torch.optim.Adagrad). Its state is made up front, as torch makes it."""

from .. import _C
from ._checks import check_eps, check_lr, check_no_capturable, check_weight_decay
from .optimizer import Optimizer, _fused_step, _scalar_state

__all__ = ["Adagrad"]


class Adagrad(Optimizer):
    def __init__(self, params, lr=1e-2, lr_decay=0, weight_decay=0, initial_accumulator_value=0, eps=1e-10,
                 foreach=None, *, maximize=False, differentiable=False, fused=None):
        check_lr(lr)
        if not 0.0 <= lr_decay:
            raise ValueError(f"Invalid lr_decay value: {lr_decay}")
        check_weight_decay(weight_decay)
        if not 0.0 <= initial_accumulator_value:
            raise ValueError(f"Invalid initial_accumulator_value value: {initial_accumulator_value}")
        check_eps(eps)
        check_no_capturable("Adagrad", differentiable=differentiable)
        defaults = dict(lr=lr, lr_decay=lr_decay, eps=eps, weight_decay=weight_decay,
                        initial_accumulator_value=initial_accumulator_value, foreach=foreach, maximize=maximize,
                        differentiable=differentiable, fused=fused)
        super().__init__(params, defaults)
        import lucid

        for group in self.param_groups:
            for p in group["params"]:
                state = self.state[p]
                state["step"] = _scalar_state(0)
                state["sum"] = lucid.full(p.shape, float(group["initial_accumulator_value"]), dtype=p.dtype,
                                          device=p.device)

    def step(self, closure=None):
        return self._step_groups(closure, self._step_group)

    def _step_group(self, group, params, grads):
        sums, steps = self._states(params, None, "sum", "step")  # made in __init__
        _fused_step(_C._adagrad_step, params, grads, [sums], [steps], group["lr"], group["lr_decay"],
                    group["weight_decay"], group["eps"], group["maximize"])
