"""The rest of PyTorch's losses (nn.functional forms), composed from engine ops.
Each takes reduction='mean' | 'sum' | 'none' as torch does."""

import math

from .. import _C
from ._functional_misc import cosine_similarity, pairwise_distance

__all__ = ["binary_cross_entropy", "binary_cross_entropy_with_logits", "kl_div", "huber_loss", "smooth_l1_loss",
           "soft_margin_loss", "multilabel_soft_margin_loss", "multilabel_margin_loss", "multi_margin_loss",
           "cosine_embedding_loss", "margin_ranking_loss", "hinge_embedding_loss", "triplet_margin_loss",
           "poisson_nll_loss", "gaussian_nll_loss"]


def _reduce(loss, reduction):
    if reduction == "none":
        return loss
    if reduction == "sum":
        return loss.sum()
    if reduction == "mean":
        return loss.mean()
    raise ValueError(f"{reduction} is not a valid value for reduction")


def _check_same_size(input, target, what):
    if tuple(input.shape) != tuple(target.shape):
        raise ValueError(f"Using a target size ({target.shape}) that is different to the input size "
                         f"({input.shape}) is deprecated. Please ensure they have the same size.")


def _where(c, a, b):
    return _C.where(c, a, b)


def binary_cross_entropy(input, target, weight=None, size_average=None, reduce=None, reduction="mean"):
    _check_same_size(input, target, "binary_cross_entropy")
    # torch clamps the logs at -100 so that 0 * log(0) stays finite
    loss = -(target * input.log().clamp(min=-100) + (1 - target) * (1 - input).log().clamp(min=-100))
    if weight is not None:
        loss = loss * weight
    return _reduce(loss, reduction)


def binary_cross_entropy_with_logits(input, target, weight=None, size_average=None, reduce=None, reduction="mean",
                                     pos_weight=None):
    _check_same_size(input, target, "binary_cross_entropy_with_logits")
    log_sig = -_softplus(-input)           # log(sigmoid(x))
    log_one_minus = -_softplus(input)      # log(1 - sigmoid(x))
    if pos_weight is not None:
        loss = -(pos_weight * target * log_sig + (1 - target) * log_one_minus)
    else:
        loss = -(target * log_sig + (1 - target) * log_one_minus)
    if weight is not None:
        loss = loss * weight
    return _reduce(loss, reduction)


def _softplus(x):
    # log(1 + exp(x)) = max(x, 0) + log(1 + exp(-|x|)): stable everywhere
    return x.clamp(min=0) + ((-x.abs()).exp() + 1).log()


def kl_div(input, target, size_average=None, reduce=None, reduction="mean", log_target=False):
    if log_target:
        loss = target.exp() * (target - input)
    else:
        loss = _C.xlogy(target, target) - target * input
    if reduction == "batchmean":
        return loss.sum() / input.shape[0] if input.dim() else loss.sum()
    return _reduce(loss, reduction)


def huber_loss(input, target, reduction="mean", delta=1.0, weight=None):
    d = (input - target).abs()
    loss = _where(d < delta, 0.5 * d * d, delta * (d - 0.5 * delta))
    if weight is not None:
        loss = loss * weight
    return _reduce(loss, reduction)


def smooth_l1_loss(input, target, size_average=None, reduce=None, reduction="mean", beta=1.0):
    d = (input - target).abs()
    if beta == 0:
        return _reduce(d, reduction)
    return _reduce(_where(d < beta, 0.5 * d * d / beta, d - 0.5 * beta), reduction)


def soft_margin_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    return _reduce(_softplus(-target * input), reduction)


def multilabel_soft_margin_loss(input, target, weight=None, size_average=None, reduce=None, reduction="mean"):
    loss = -(target * (-_softplus(-input)) + (1 - target) * (-_softplus(input)))
    if weight is not None:
        loss = loss * weight
    loss = loss.mean(dim=-1)
    return _reduce(loss, reduction)


def multilabel_margin_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    """target holds class indices, -1 ends the list of each row."""
    from .._creation import zeros
    x = input if input.dim() == 2 else input.unsqueeze(0)
    t = target if target.dim() == 2 else target.unsqueeze(0)
    n, c = x.shape
    rows = []
    for i in range(n):
        labels = []
        for j in t[i].tolist():
            if j < 0:
                break
            labels.append(j)
        is_target = zeros(c, dtype=x.dtype)
        for j in labels:
            is_target[j] = 1.0
        total = x[i].sum() * 0
        for j in labels:
            total = total + ((1 - (x[i][j] - x[i])).clamp(min=0) * (1 - is_target)).sum()
        rows.append(total / c)
    from .._shape import stack
    loss = stack(rows)
    if input.dim() == 1:
        loss = loss.squeeze(0)
    return _reduce(loss, reduction)


def multi_margin_loss(input, target, p=1, margin=1.0, weight=None, size_average=None, reduce=None,
                      reduction="mean"):
    if p not in (1, 2):
        raise ValueError("only p == 1 and p == 2 supported")
    x = input if input.dim() == 2 else input.unsqueeze(0)
    t = target if target.dim() == 1 else target.unsqueeze(0)
    c = x.shape[1]
    picked = x.gather(1, t.unsqueeze(1))
    margins = (margin - picked + x).clamp(min=0)
    if p == 2:
        margins = margins * margins
    if weight is not None:
        margins = margins * weight[t].unsqueeze(1)
    from .._creation import arange
    not_target = arange(c).unsqueeze(0) != t.unsqueeze(1)
    loss = (margins * not_target).sum(dim=1) / c
    if input.dim() == 1:
        loss = loss.squeeze(0)
    return _reduce(loss, reduction)


def cosine_embedding_loss(input1, input2, target, margin=0.0, size_average=None, reduce=None, reduction="mean"):
    cos = cosine_similarity(input1, input2, dim=-1, eps=1e-12)
    loss = _where(target == 1, 1 - cos, (cos - margin).clamp(min=0))
    return _reduce(loss, reduction)


def margin_ranking_loss(input1, input2, target, margin=0.0, size_average=None, reduce=None, reduction="mean"):
    return _reduce((-target * (input1 - input2) + margin).clamp(min=0), reduction)


def hinge_embedding_loss(input, target, margin=1.0, size_average=None, reduce=None, reduction="mean"):
    loss = _where(target == 1, input, input * 0) + _where(target == -1, (margin - input).clamp(min=0), input * 0)
    return _reduce(loss, reduction)


def triplet_margin_loss(anchor, positive, negative, margin=1.0, p=2, eps=1e-6, swap=False, size_average=None,
                        reduce=None, reduction="mean"):
    d_pos = pairwise_distance(anchor, positive, p, eps)
    d_neg = pairwise_distance(anchor, negative, p, eps)
    if swap:
        d_neg = _C.minimum(d_neg, pairwise_distance(positive, negative, p, eps))
    return _reduce((d_pos - d_neg + margin).clamp(min=0), reduction)


def poisson_nll_loss(input, target, log_input=True, full=False, size_average=None, eps=1e-8, reduce=None,
                     reduction="mean"):
    if log_input:
        loss = input.exp() - target * input
    else:
        loss = input - target * (input + eps).log()
    if full:
        stirling = target * target.log() - target + 0.5 * (2 * math.pi * target).log()
        loss = loss + _where(target > 1, stirling, stirling * 0)
    return _reduce(loss, reduction)


def gaussian_nll_loss(input, target, var, full=False, eps=1e-6, reduction="mean"):
    if var.dim() == input.dim() - 1 or (var.shape != input.shape and var.shape[-1:] != (1,) and var.dim() < input.dim()):
        var = var.unsqueeze(-1)
    if (var < 0).any().item():
        raise ValueError("var has negative entry/entries")
    var = var.clamp(min=eps)
    loss = 0.5 * (var.log() + (input - target) ** 2 / var)
    if full:
        loss = loss + 0.5 * math.log(2 * math.pi)
    return _reduce(loss, reduction)
