"""Rprop: sign-based steps with per-element step sizes (torch.optim.Rprop)."""

from .. import _C
from ._checks import check_lr, check_no_capturable
from .optimizer import Optimizer, _fused_step, _scalar_state, _zeros

__all__ = ["Rprop"]


class Rprop(Optimizer):
    def __init__(self, params, lr=1e-2, etas=(0.5, 1.2), step_sizes=(1e-6, 50), *, capturable=False,
                 foreach=None, maximize=False, differentiable=False):
        check_lr(lr)
        if not 0.0 < etas[0] < 1.0 < etas[1]:
            raise ValueError(f"Invalid eta values: {etas[0]}, {etas[1]}")
        check_no_capturable("Rprop", capturable, differentiable)
        defaults = dict(lr=lr, etas=tuple(etas), step_sizes=tuple(step_sizes), foreach=foreach,
                        maximize=maximize, differentiable=differentiable, capturable=capturable)
        super().__init__(params, defaults)

    def step(self, closure=None):
        return self._step_groups(closure, self._step_group)

    def _step_group(self, group, params, grads):
        import lucid

        def init(p, state):
            state["step"] = _scalar_state(0)
            state["prev"] = _zeros(p)
            state["step_size"] = lucid.full(p.shape, float(group["lr"]), dtype=p.dtype, device=p.device)

        prevs, step_sizes, steps = self._states(params, init, "prev", "step_size", "step")
        eta_minus, eta_plus = group["etas"]
        step_min, step_max = group["step_sizes"]
        _fused_step(_C._rprop_step, params, grads, [prevs, step_sizes], [steps], eta_minus, eta_plus, step_min,
                    step_max, group["maximize"])
