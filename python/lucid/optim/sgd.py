"""SGD with momentum, dampening, Nesterov momentum and weight decay (torch.optim.SGD)."""

from .. import _C
from ._checks import check_lr, check_no_capturable, check_weight_decay
from .optimizer import Optimizer, _fused_step

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
        check_no_capturable("SGD", differentiable=differentiable, fused=fused)
        defaults = dict(lr=lr, momentum=momentum, dampening=dampening, weight_decay=weight_decay,
                        nesterov=nesterov, maximize=maximize, foreach=foreach, differentiable=differentiable,
                        fused=fused)
        super().__init__(params, defaults)

    def step(self, closure=None):
        loss = _closure_loss(closure)
        import lucid

        for group in self.param_groups:
            params, grads = self._grads(group)
            if not params:
                continue
            bufs, fresh = [], []
            if group["momentum"] != 0:
                for p in params:
                    state = self.state[p]
                    buf = state.get("momentum_buffer")
                    fresh.append(buf is None)
                    if buf is None:
                        buf = state["momentum_buffer"] = lucid.zeros(p.shape, dtype=p.dtype, device=p.device)
                    bufs.append(buf)
            _fused_step(_C._sgd_step, params, grads, [bufs], [fresh], group["lr"], group["momentum"],
                        group["dampening"], group["weight_decay"], group["nesterov"], group["maximize"])
        return loss


def _closure_loss(closure):
    """closure() re-evaluated with grad enabled, as torch's optimizers do."""
    if closure is None:
        return None
    import lucid

    with lucid.enable_grad():
        return closure()
