"""Muon (torch.optim.Muon; Keller Jordan, 2024): SGD momentum for the 2-D weights of hidden
layers, each step's update replaced by an approximately orthogonal matrix with the same
singular vectors, found by a few Newton-Schulz iterations in bfloat16.

torch's algorithm step for step (its quintic coefficients, the bfloat16 iteration, the
learning-rate adjustments for rectangular matrices, decoupled weight decay), with lucid
tensor ops, so it runs wherever the parameters live. State is torch's "momentum_buffer"."""

import math

from .. import _dtype as D
from .._tensor import Tensor
from ..autograd import no_grad
from ._working_copies import as_float32, float32_working_copies
from .optimizer import Optimizer, _zeros

__all__ = ["Muon"]

EPS = 1e-7
# The quintic's coefficients: chosen to make its slope at zero as steep as possible, so
# that five steps push every singular value into roughly [0.5, 1.5].
DEFAULT_A = 3.4445
DEFAULT_B = -4.7750
DEFAULT_C = 2.0315
DEFAULT_NS_STEPS = 5

_ADJUST_LR_FNS = ("original", "match_rms_adamw", "spectral_unclamped")


def _zeropower_via_newtonschulz(grad, ns_coefficients, ns_steps, eps):
    """An approximation of U V^T for grad = U S V^T: grad scaled to spectral norm <= 1 (by
    its Frobenius norm), then ns_steps of X <- a X + (b G + c G^2) X with G = X X^T, in
    bfloat16. The wide orientation (rows <= cols) keeps the Gram matrix the small one."""
    if ns_steps >= 100:
        raise ValueError("Number of steps must be less than 100 for computational efficiency")
    if len(grad.shape) != 2:
        raise ValueError("Input tensor gradient must be a 2D matrix")
    if len(ns_coefficients) != 3:
        raise ValueError("Coefficients must be a tuple of exactly 3 values")
    import lucid

    a, b, c = ns_coefficients
    tall = grad.shape[0] > grad.shape[1]
    ortho = grad.to(D.bfloat16)
    if tall:
        ortho = ortho.T
    ortho = ortho / ortho.norm().clamp(min=eps)
    for _ in range(ns_steps):
        gram = ortho @ ortho.T
        poly = lucid.addmm(gram, gram, gram, beta=b, alpha=c)  # b G + c G^2
        ortho = lucid.addmm(ortho, poly, ortho, beta=a)
    return ortho.T if tall else ortho


def _adjust_lr(lr, adjust_lr_fn, param_shape):
    """lr scaled for a fan_out x fan_in matrix: "original" (the default) sqrt(max(1, A/B)),
    "match_rms_adamw" 0.2 sqrt(max(A, B)) (AdamW's update RMS), "spectral_unclamped" sqrt(A/B)."""
    rows, cols = param_shape[:2]
    if adjust_lr_fn is None or adjust_lr_fn == "original":
        ratio = math.sqrt(max(1, rows / cols))
    elif adjust_lr_fn == "match_rms_adamw":
        ratio = 0.2 * math.sqrt(max(rows, cols))
    elif adjust_lr_fn == "spectral_unclamped":
        ratio = math.sqrt(rows / cols)
    else:
        ratio = 1.0
    return lr * ratio


class Muon(Optimizer):
    def __init__(self, params, lr=1e-3, weight_decay=0.1, momentum=0.95, nesterov=True,
                 ns_coefficients=(DEFAULT_A, DEFAULT_B, DEFAULT_C), eps=EPS, ns_steps=DEFAULT_NS_STEPS,
                 adjust_lr_fn=None):
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 <= lr:
            raise ValueError(f"Learning rate should be >= 0 but is: {lr}")
        if not 0.0 <= momentum:
            raise ValueError(f"momentum should be >= 0 but is: {momentum}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"weight decay should be >= 0 but is: {weight_decay}")
        if adjust_lr_fn is not None and adjust_lr_fn not in _ADJUST_LR_FNS:
            raise ValueError(f"Adjust learning rate function {adjust_lr_fn} is not supported")
        defaults = dict(lr=lr, weight_decay=weight_decay, momentum=momentum, nesterov=nesterov,
                        ns_coefficients=ns_coefficients, eps=eps, ns_steps=ns_steps, adjust_lr_fn=adjust_lr_fn)
        super().__init__(params, defaults)
        for group in self.param_groups:
            for p in group["params"]:
                if p.ndim != 2:
                    raise ValueError(f"Muon only supports 2D parameters whereas we found a parameter with size: "
                                     f"{p.size()}")

    def step(self, closure=None):
        return self._step_groups(closure, self._step_group)

    def _step_group(self, group, params, grads):
        for p in params:
            if p.is_complex():
                raise RuntimeError("Muon does not support complex parameters")

        def init(p, state):
            state["momentum_buffer"] = _zeros(p)

        (bufs,) = self._states(params, init, "momentum_buffer")
        lr = group["lr"].item() if isinstance(group["lr"], Tensor) else group["lr"]
        momentum = group["momentum"]
        with no_grad():
            for p, grad, buf in zip(params, grads, bufs):
                if grad.ndim != 2:
                    raise ValueError("Param gradient must be a 2D matrix")
                grad = as_float32(grad)
                with float32_working_copies(p, buf) as (p, buf):
                    buf.lerp_(grad, 1 - momentum)
                    update = grad.lerp(buf, momentum) if group["nesterov"] else buf
                    update = _zeropower_via_newtonschulz(update, group["ns_coefficients"], group["ns_steps"],
                                                         group["eps"])
                    p.mul_(1 - lr * group["weight_decay"])
                    # The bfloat16 update is widened first: torch scales it by the step size
                    # in the parameter's dtype, while lucid's mixed-dtype add_ would scale it
                    # in bfloat16 and round the step away.
                    p.add_(update.to(p.dtype), alpha=-_adjust_lr(lr, group["adjust_lr_fn"], p.shape))
