"""The rest of PyTorch's losses (nn.functional forms), composed from engine ops.
Each takes reduction='mean' | 'sum' | 'none' as torch does."""

import math

from ._reduction import legacy_reduction as _legacy_reduction
from .. import _C
from ..autograd.function import Function
from ._functional_bce import binary_cross_entropy, binary_cross_entropy_with_logits
from ._functional_misc import pairwise_distance
from ..amp._autocast import policy as _autocast_policy  # Note [Autocast]

__all__ = ["binary_cross_entropy", "binary_cross_entropy_with_logits", "kl_div", "huber_loss", "smooth_l1_loss",
           "soft_margin_loss", "multilabel_soft_margin_loss", "multilabel_margin_loss", "multi_margin_loss",
           "cosine_embedding_loss", "margin_ranking_loss", "hinge_embedding_loss", "triplet_margin_loss",
           "triplet_margin_with_distance_loss", "poisson_nll_loss", "gaussian_nll_loss"]


def _reduce(loss, reduction):
    if reduction == "none":
        return loss
    if reduction == "sum":
        return loss.sum()
    if reduction == "mean":
        return loss.mean()
    raise ValueError(f"{reduction} is not a valid value for reduction")


def _where(c, a, b):
    return _C.where(c, a, b)


class _Softplus(Function):
    """log(1 + e^x) without overflow, with torch's gradient sigmoid(x) everywhere: a
    composition through max(x, 0) and |x| has no gradient exactly at 0, and the
    second derivative of logaddexp's gradient is 0 * inf = NaN at x = -inf, where
    sigmoid's (torch's) is 0."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return _C.logaddexp(x, x.new_zeros(()))

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad * x.sigmoid()


def _softplus(x):
    return _Softplus.apply(x)


@_legacy_reduction
@_autocast_policy("kl_div")
def kl_div(input, target, size_average=None, reduce=None, reduction="mean", log_target=False):
    if log_target:
        loss = target.exp() * (target - input)
    else:
        loss = _C.xlogy(target, target) - target * input
    if reduction == "batchmean":
        return loss.sum() / input.shape[0] if input.dim() else loss.sum()
    return _reduce(loss, reduction)


@_autocast_policy("huber_loss")
def _huber(input, target, delta):
    d = (input - target).abs()
    return _where(d < delta, 0.5 * d * d, delta * (d - 0.5 * delta))


def _smooth_l1(input, target, beta):
    d = (input - target).abs()
    return _where(d < beta, 0.5 * d * d / beta, d - 0.5 * beta)


class _PiecewiseQuadraticLoss(Function):
    """smooth_l1_loss and huber_loss (input and target of one shape, no weight) with
    torch's backward formulas: the gradient is clamp((x - t) / beta, -1, 1) (smooth L1)
    or clamp(x - t, -delta, delta) (Huber), torch's three cases, times the output's
    gradient, over numel for mean. Three passes where differentiating the forward's
    composite took twelve (smooth L1 forward + backward of 4M: 5.6x torch's time)."""

    @staticmethod
    def forward(ctx, input, target, kind, width, reduction):
        ctx.save_for_backward(input, target)
        ctx.kind, ctx.width, ctx.reduction = kind, width, reduction
        loss = _smooth_l1(input, target, width) if kind == "smooth_l1" else _huber(input, target, width)
        return _reduce(loss, reduction)

    @staticmethod
    def backward(ctx, grad):
        x, t = ctx.saved_tensors
        g = grad / x.numel() if ctx.reduction == "mean" else grad
        if ctx.kind == "smooth_l1":
            dx = ((x - t) / ctx.width).clamp(-1, 1) * g
        else:
            dx = (x - t).clamp(-ctx.width, ctx.width) * g
        return (dx if ctx.needs_input_grad[0] else None, -dx if ctx.needs_input_grad[1] else None, None, None, None)


class _HuberLoss(_PiecewiseQuadraticLoss):
    _node_name = "HuberLossBackward0"


class _SmoothL1Loss(_PiecewiseQuadraticLoss):
    _node_name = "SmoothL1LossBackward0"


def huber_loss(input, target, reduction="mean", delta=1.0, weight=None):
    if weight is None and reduction in ("none", "sum", "mean") and tuple(input.shape) == tuple(target.shape):
        return _HuberLoss.apply(input, target, "huber", delta, reduction)
    loss = _huber(input, target, delta)
    if weight is not None:
        loss = loss * weight
    return _reduce(loss, reduction)


@_legacy_reduction
@_autocast_policy("smooth_l1_loss")
def smooth_l1_loss(input, target, size_average=None, reduce=None, reduction="mean", beta=1.0):
    if beta == 0:
        return _reduce((input - target).abs(), reduction)
    if reduction in ("none", "sum", "mean") and tuple(input.shape) == tuple(target.shape):
        return _SmoothL1Loss.apply(input, target, "smooth_l1", beta, reduction)
    return _reduce(_smooth_l1(input, target, beta), reduction)


@_legacy_reduction
@_autocast_policy("soft_margin_loss")
def soft_margin_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    return _reduce(_softplus(-target * input), reduction)


@_legacy_reduction
def multilabel_soft_margin_loss(input, target, weight=None, size_average=None, reduce=None, reduction="mean"):
    loss = -(target * (-_softplus(-input)) + (1 - target) * (-_softplus(input)))
    if weight is not None:
        loss = loss * weight
    loss = loss.mean(dim=-1)
    return _reduce(loss, reduction)


@_legacy_reduction
@_autocast_policy("multilabel_margin_loss")
def multilabel_margin_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    """target holds class indices; a -1 ends the list of each row. Per row:
    sum over its labels j and its other classes c of max(0, 1 - (x[j] - x[c])), over C;
    only z > 0 counts (ATen's kernel): no gradient exactly at the margin."""
    from .._creation import arange
    x = input if input.dim() == 2 else input.unsqueeze(0)
    t = target if target.dim() == 2 else target.unsqueeze(0)
    if tuple(t.shape) != tuple(x.shape):
        raise RuntimeError(f"inconsistent target size: {list(target.shape)} for input of size: {list(input.shape)}")
    c = x.shape[1]
    if t.numel() and bool(((t < -1) | (t >= c)).any()):
        raise RuntimeError("argument #2 'target' is out of range")
    listed = (t >= 0).to(x.dtype).cumprod(1) > 0          # [N, K]: before the first -1
    labels = _where(listed, t, 0)
    one_hot = (labels.unsqueeze(2) == arange(c, device=labels.device)) & listed.unsqueeze(2)  # [N, K, C]
    is_target = one_hot.any(1)                            # [N, C]
    z = 1 - (x.gather(1, labels).unsqueeze(2) - x.unsqueeze(1))        # [N, K, C]
    counted = listed.unsqueeze(2) & ~is_target.unsqueeze(1) & (z > 0)
    loss = _where(counted, z, 0.0).sum((1, 2)) / c
    if input.dim() == 1:
        loss = loss.squeeze(0)
    return _reduce(loss, reduction)


@_legacy_reduction
@_autocast_policy("multi_margin_loss")
def multi_margin_loss(input, target, p=1, margin=1.0, weight=None, size_average=None, reduce=None,
                      reduction="mean"):
    if p not in (1, 2):
        raise ValueError("only p == 1 and p == 2 supported")
    x = input if input.dim() == 2 else input.unsqueeze(0)
    t = target if target.dim() == 1 else target.unsqueeze(0)
    c = x.shape[1]
    picked = x.gather(1, t.unsqueeze(1))
    z = margin - picked + x
    margins = _where(z > 0, z, 0.0)  # only z > 0 counts (ATen's kernel): no gradient exactly at the margin
    if p == 2:
        margins = margins * margins
    if weight is not None:
        margins = margins * weight[t].unsqueeze(1)
    from .._creation import arange
    not_target = arange(c, device=t.device).unsqueeze(0) != t.unsqueeze(1)
    loss = (margins * not_target).sum(dim=1) / c
    if input.dim() == 1:
        loss = loss.squeeze(0)
    return _reduce(loss, reduction)


@_legacy_reduction
@_autocast_policy("cosine_embedding_loss")
def cosine_embedding_loss(input1, input2, target, margin=0.0, size_average=None, reduce=None, reduction="mean"):
    # ATen's form: eps inside each squared norm, so a zero vector gives cos = 0 and a
    # zero gradient (not 0 / 0); a target other than +-1 contributes 0
    eps = 1e-12
    prod = (input1 * input2).sum(-1)
    cos = prod / (((input1 * input1).sum(-1) + eps) * ((input2 * input2).sum(-1) + eps)).sqrt()
    zero = cos.new_zeros(())
    loss = _where(target == 1, 1 - cos, zero) + _where(target == -1, (cos - margin).clamp(min=0), zero)
    return _reduce(loss, reduction)


@_legacy_reduction
@_autocast_policy("margin_ranking_loss")
def margin_ranking_loss(input1, input2, target, margin=0.0, size_average=None, reduce=None, reduction="mean"):
    return _reduce((-target * (input1 - input2) + margin).clamp(min=0), reduction)


@_legacy_reduction
@_autocast_policy("hinge_embedding_loss")
def hinge_embedding_loss(input, target, margin=1.0, size_average=None, reduce=None, reduction="mean"):
    # ATen's form: the margin term wherever target != 1 and the input wherever target != -1
    zero = input.new_zeros(())
    loss = _where(target != 1, (margin - input).clamp(min=0), zero) + _where(target != -1, input, zero)
    return _reduce(loss, reduction)


@_legacy_reduction
@_autocast_policy("triplet_margin_loss")
def triplet_margin_loss(anchor, positive, negative, margin=1.0, p=2, eps=1e-6, swap=False, size_average=None,
                        reduce=None, reduction="mean"):
    d_pos = pairwise_distance(anchor, positive, p, eps)
    d_neg = pairwise_distance(anchor, negative, p, eps)
    if swap:
        d_neg = _C.minimum(d_neg, pairwise_distance(positive, negative, p, eps))
    return _reduce((d_pos - d_neg + margin).clamp(min=0), reduction)


def triplet_margin_with_distance_loss(anchor, positive, negative, *, distance_function=None, margin=1.0, swap=False,
                                      reduction="mean"):
    """triplet_margin_loss with any distance (pairwise_distance by default)."""
    if reduction not in ("mean", "sum", "none"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    if margin <= 0:
        raise ValueError(f"margin must be greater than 0, got {margin}")
    if not anchor.ndim == positive.ndim == negative.ndim:
        raise RuntimeError(f"The anchor, positive, and negative tensors are expected to have the same number of "
                           f"dimensions, but got: anchor {anchor.ndim}D, positive {positive.ndim}D, and negative "
                           f"{negative.ndim}D inputs")
    distance = distance_function if distance_function is not None else pairwise_distance
    d_pos, d_neg = distance(anchor, positive), distance(anchor, negative)
    if swap:
        d_neg = _C.minimum(d_neg, distance(positive, negative))
    loss = (margin + d_pos - d_neg).clamp(min=0)
    return loss.sum() if reduction == "sum" else loss.mean() if reduction == "mean" else loss


@_legacy_reduction
@_autocast_policy("poisson_nll_loss")
def poisson_nll_loss(input, target, log_input=True, full=False, size_average=None, eps=1e-8, reduce=None,
                     reduction="mean"):
    if log_input:
        loss = input.exp() - target * input
    else:
        loss = input - target * (input + eps).log()
    if full:  # Stirling's term where target > 1 (torch's masked_fill: 0, not 0 * nan, at target 0)
        stirling = target * target.log() - target + 0.5 * (2 * math.pi * target).log()
        loss = loss + _where(target <= 1, 0.0, stirling)
    return _reduce(loss, reduction)


def gaussian_nll_loss(input, target, var, full=False, eps=1e-6, reduction="mean"):
    """torch's gaussian_nll_loss; var is clamped at eps for the value only: the clamp
    runs without recording (torch's no_grad clamp_ on a clone), so the gradient
    reaches var as if it had not been clamped."""
    from .. import no_grad
    if isinstance(var, float):
        if var < 0:
            raise ValueError("var has negative entry/entries")
        var = var * input.new_ones(input.shape)
    elif bool((var < 0).any()):
        raise ValueError("var has negative entry/entries")
    if tuple(var.shape) != tuple(input.shape):
        if tuple(input.shape[:-1]) == tuple(var.shape):
            var = var.unsqueeze(-1)
        elif not (input.dim() == var.dim() and sum(y for x, y in zip(input.shape, var.shape) if x != y) == 1):
            raise ValueError("var is of incorrect size")
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(reduction + " is not valid")
    var = var.clone()
    with no_grad():
        var.clamp_(min=eps)
    loss = 0.5 * (var.log() + (input - target) ** 2 / var)
    if full:
        loss = loss + 0.5 * math.log(2 * math.pi)
    return _reduce(loss, reduction)
