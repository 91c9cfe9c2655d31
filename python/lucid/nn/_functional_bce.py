"""binary_cross_entropy and binary_cross_entropy_with_logits, with torch's own
backward formulas (ATen's binary_cross_entropy_backward and its double backward).

Note [BCE gradient at 0 and 1]
The forward clamps each log at -100 so that 0 * log(0) stays finite. Differentiating
that composition gives d/dp log(1 - p) = -1 / (1 - p) = -inf at p = 1, times the
clamp's zero gradient: 0 * inf = NaN. PyTorch does not differentiate the clamped
logs; it uses grad * (p - t) / max(p (1 - p), 1e-12), which is 0 where the input
matches the target and large but finite where it does not. So both losses here are
lucid.autograd.Functions whose backward is torch's formula, written with lucid ops so
that create_graph works; binary_cross_entropy's backward is itself a Function with
torch's double-backward formulas (which put the epsilon elsewhere), so second
derivatives match torch's at the boundary too."""

from ._reduction import legacy_reduction as _legacy_reduction
from ..autograd.function import Function
from ..amp._autocast import policy as _autocast_policy  # Note [Autocast]

__all__ = ["binary_cross_entropy", "binary_cross_entropy_with_logits"]

_EPSILON = 1e-12  # ATen's EPSILON for binary_cross_entropy_backward


def _check_reduction(reduction):
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(f"{reduction} is not a valid value for reduction")


def _reduce(loss, reduction):
    if reduction == "none":
        return loss
    return loss.sum() if reduction == "sum" else loss.mean()


def _scaled(g, weight, reduction, n):
    """A pointwise gradient times the weight, over numel for mean (as ATen)."""
    if weight is not None:
        g = g * weight
    return g / n if reduction == "mean" else g


def _sum_to(g, like):
    """Sums a gradient down to the shape of a 0-d grad_output (mean/sum)."""
    return g.sum() if like.dim() == 0 and g.dim() else g


def _check_not_differentiable(fn, **tensors):
    from .. import is_grad_enabled
    for name, t in tensors.items():
        if t is not None and t.requires_grad and is_grad_enabled():
            raise RuntimeError(f"The function '{fn}' is not differentiable with respect to argument '{name}'. "
                               "This input cannot have requires_grad True.")


def _expand_weight(weight, target):
    # torch expands the weight to the target's size (it may not enlarge the target)
    if weight is None or tuple(weight.shape) == tuple(target.shape):
        return weight
    try:
        return weight.expand(target.shape)
    except RuntimeError:
        raise RuntimeError(f"The size of tensor a ({list(weight.shape)}) must match the size of tensor b "
                           f"({list(target.shape)})") from None


class _BinaryCrossEntropyBackward(Function):
    """ATen's binary_cross_entropy_backward; its backward is torch's double backward."""

    _node_name = "BinaryCrossEntropyBackwardBackward0"

    @staticmethod
    def forward(ctx, grad, input, target, weight, reduction):
        ctx.save_for_backward(grad, input, target, weight)
        ctx.reduction = reduction
        g = grad * (input - target) / (input * (1 - input)).clamp(min=_EPSILON)
        return _scaled(g, weight, reduction, input.numel())

    @staticmethod
    def backward(ctx, ggi):
        grad, x, t, w = ctx.saved_tensors
        r, n = ctx.reduction, x.numel()
        need_grad, need_input, need_target = ctx.needs_input_grad[:3]
        d_grad = d_input = d_target = None
        if need_grad:  # binary_cross_entropy_double_backward_grad_output
            d_grad = _sum_to(_scaled(ggi * (x - t) / ((x + _EPSILON) * (1 - x + _EPSILON)), w, r, n), grad)
        if need_input:  # binary_cross_entropy_double_backward
            num = x * x - 2 * x * t + t
            den = (x + _EPSILON) ** 2 * (1 - x + _EPSILON) ** 2
            d_input = _scaled(num / den * (ggi * grad), w, r, n)
        if need_target:  # binary_cross_entropy_double_backward_target
            d_target = _scaled(-ggi * grad / ((1 - x) * x).clamp(min=_EPSILON), w, r, n)
        return d_grad, d_input, d_target, None, None


class _BinaryCrossEntropy(Function):
    _node_name = "BinaryCrossEntropyBackward0"

    @staticmethod
    def forward(ctx, input, target, weight, reduction):
        ctx.save_for_backward(input, target, weight)
        ctx.reduction = reduction
        # ATen: (t - 1) max(log1p(-p), -100) - t max(log(p), -100)
        loss = (target - 1) * (-input).log1p().clamp(min=-100) - target * input.log().clamp(min=-100)
        if weight is not None:
            loss = loss * weight
        return _reduce(loss, reduction)

    @staticmethod
    def backward(ctx, grad):
        input, target, weight = ctx.saved_tensors
        r = ctx.reduction
        d_input = d_target = None
        if ctx.needs_input_grad[0]:
            d_input = _BinaryCrossEntropyBackward.apply(grad, input, target, weight, r)
        if ctx.needs_input_grad[1]:  # binary_cross_entropy_target_backward: -logit(p)
            d_target = _scaled(-input.logit() * grad, weight, r, target.numel())
        return d_input, d_target, None, None


@_legacy_reduction
@_autocast_policy("binary_cross_entropy")
def binary_cross_entropy(input, target, weight=None, size_average=None, reduce=None, reduction="mean"):
    """torch.nn.functional.binary_cross_entropy (see Note [BCE gradient at 0 and 1])."""
    _check_reduction(reduction)
    if tuple(input.shape) != tuple(target.shape):
        raise ValueError(f"Using a target size ({target.shape}) that is different to the input size "
                         f"({input.shape}) is deprecated. Please ensure they have the same size.")
    _check_not_differentiable("binary_cross_entropy", weight=weight)
    if input.numel():
        if not bool(((input >= 0) & (input <= 1)).all()):
            raise RuntimeError("all elements of input should be between 0 and 1")
        if not bool(((target >= 0) & (target <= 1)).all()):
            raise RuntimeError("all elements of target should be between 0 and 1")
    return _BinaryCrossEntropy.apply(input, target, _expand_weight(weight, target), reduction)


class _BinaryCrossEntropyWithLogits(Function):
    """ATen's forward, (1 - t) x - (1 + (pos_weight - 1) t) log_sigmoid(x), and its
    backward formulas, composed of differentiable ops (as torch's are), so double
    backward is the derivative of those formulas, as in torch."""

    _node_name = "BinaryCrossEntropyWithLogitsBackward0"

    @staticmethod
    def forward(ctx, input, target, weight, pos_weight, reduction):
        from .functional import logsigmoid
        ctx.save_for_backward(input, target, weight, pos_weight)
        ctx.reduction = reduction
        if pos_weight is not None:
            loss = (1 - target) * input - ((pos_weight - 1) * target + 1) * logsigmoid(input)
        else:
            loss = (1 - target) * input - logsigmoid(input)
        if weight is not None:
            loss = loss * weight
        return _reduce(loss, reduction)

    @staticmethod
    def backward(ctx, grad):
        from .functional import logsigmoid
        x, t, w, pw = ctx.saved_tensors
        r = ctx.reduction
        d_input = d_target = None
        if ctx.needs_input_grad[0]:  # binary_cross_entropy_with_logits_backward
            if pw is not None:
                tp = pw * t
                g = (tp + 1 - t) * x.sigmoid() - tp
            else:
                g = x.sigmoid() - t
            d_input = _scaled(g * grad, w, r, x.numel())
        if ctx.needs_input_grad[1]:  # binary_cross_entropy_with_logits_target_backward
            g = logsigmoid(-x) - logsigmoid(x) * pw if pw is not None else -x
            d_target = _scaled(g * grad, w, r, t.numel())
        return d_input, d_target, None, None, None


@_legacy_reduction
@_autocast_policy("binary_cross_entropy_with_logits")
def binary_cross_entropy_with_logits(input, target, weight=None, size_average=None, reduce=None, reduction="mean",
                                     pos_weight=None):
    """torch.nn.functional.binary_cross_entropy_with_logits."""
    _check_reduction(reduction)
    if tuple(input.shape) != tuple(target.shape):
        raise ValueError(f"Target size ({target.shape}) must be the same as input size ({input.shape})")
    _check_not_differentiable("binary_cross_entropy_with_logits", weight=weight, pos_weight=pos_weight)
    return _BinaryCrossEntropyWithLogits.apply(input, target, weight, pos_weight, reduction)
