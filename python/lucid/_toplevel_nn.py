"""torch's top-level aliases of its neural-network functions (torch.conv2d, torch.batch_norm,
torch.kl_div, ...), with their top-level signatures, which are ATen's and not always
torch.nn.functional's: losses take reduction as an int (0 none, 1 mean, 2 sum; ATen
reduces nothing for any other value), batch_norm / instance_norm put weight and bias
before the running statistics and take every argument, embedding takes the weight
first, and the pooling functions' stride defaults to () (the kernel size). Each one is
lucid.nn.functional's function, or the engine op under it, so gradients and devices are
theirs.

Left out: torch.embedding_bag, whose three extra results (offset2bag, bag_size,
max_indices) are ATen's per-kernel bookkeeping (offset2bag is empty on the CPU's sum
fast path, bag_size is zeros for sums) rather than values with a meaning to match.
"""

import builtins

from . import _C
from .nn import functional as F
from .nn import _functional_dropout as _dropout
from .nn import _functional_embedding as _embedding

# ATen's at::Reduction enum as the strings nn.functional takes
_REDUCTIONS = {1: "mean", 2: "sum"}


def _reduction(value):
    """The string form of a top-level loss's int reduction: ATen's apply_loss_reduction
    takes the mean for 1, the sum for 2 and leaves the loss unreduced for anything else."""
    if isinstance(value, builtins.bool) or not isinstance(value, builtins.int):
        raise TypeError(f"reduction must be an int (0: none, 1: mean, 2: sum), not {type(value).__name__}")
    return _REDUCTIONS.get(value, "none")


def _int_list(value, n, name, fn):
    """A sequence argument of convolution (a single value stands for all n dims)."""
    if not isinstance(value, (list, tuple)):
        raise TypeError(f"{fn}(): argument '{name}' must be tuple of ints, not {type(value).__name__}")
    v = [builtins.int(x) for x in value]
    if len(v) == 1:
        v = v * n
    if len(v) != n:
        raise RuntimeError(f"expected {name} to be a single integer value or a list of {n} values to match the "
                           f"convolution dimensions, but got {name}={list(value)}")
    return v


def convolution(input, weight, bias, stride, padding, dilation, transposed, output_padding, groups):
    """torch.convolution: the convolution (or transposed one) of as many spatial dims as
    weight has beyond its first two; every argument is required, the sizes as sequences."""
    if isinstance(groups, builtins.bool) or not isinstance(groups, builtins.int):
        raise TypeError(f"convolution(): argument 'groups' (position 9) must be int, not {type(groups).__name__}")
    n = weight.dim() - 2
    if n not in (1, 2, 3):
        raise RuntimeError(f"convolution(): expected a 3-D, 4-D or 5-D weight, but got weight of size "
                           f"{list(weight.shape)}")
    name = f"conv_transpose{n}d" if transposed else f"conv{n}d"
    args = [_int_list(v, n, k, "convolution") for v, k in
            ((stride, "stride"), (padding, "padding"), (dilation, "dilation"), (output_padding, "output_padding"))]
    return _C._convolution(name, input, weight, bias, args[0], args[1], args[2], builtins.bool(transposed),
                           args[3] if transposed else [0] * n, groups)


def _stride(stride):
    return None if isinstance(stride, (list, tuple)) and len(stride) == 0 else stride


def avg_pool1d(input, kernel_size, stride=(), padding=0, ceil_mode=False, count_include_pad=True):
    return F.avg_pool1d(input, kernel_size, _stride(stride), padding, ceil_mode, count_include_pad)


def max_pool1d(input, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False):
    return F.max_pool1d(input, kernel_size, _stride(stride), padding, dilation, ceil_mode)


def max_pool2d(input, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False):
    return F.max_pool2d(input, kernel_size, _stride(stride), padding, dilation, ceil_mode)


def max_pool3d(input, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False):
    return F.max_pool3d(input, kernel_size, _stride(stride), padding, dilation, ceil_mode)


def max_pool1d_with_indices(input, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False):
    """(values, indices) of max_pool1d."""
    return tuple(F.max_pool1d(input, kernel_size, _stride(stride), padding, dilation, ceil_mode, True))


def adaptive_max_pool1d(input, output_size):
    """(values, indices): the top-level form always returns the indices."""
    return tuple(F.adaptive_max_pool1d(input, output_size, True))


def batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps, cudnn_enabled):
    """ATen's batch_norm (the engine op itself): unlike nn.functional's, it does not
    refuse a training batch with one value per channel."""
    return _C._batch_norm(input, weight, bias, running_mean, running_var, builtins.bool(training),
                          0.0 if momentum is None else builtins.float(momentum), builtins.float(eps))


def instance_norm(input, weight, bias, running_mean, running_var, use_input_stats, momentum, eps, cudnn_enabled):
    """ATen's instance_norm: batch_norm of input viewed as [1, N*C, *], the running
    statistics averaged over the batch; unlike nn.functional's, it does not refuse one
    spatial element."""
    if input.dim() < 2:
        raise RuntimeError(f"instance_norm(): expected an input with at least 2 dimensions [N, C, *], got "
                           f"{input.dim()}-D input")
    n, c = input.shape[0], input.shape[1]
    per_sample = [None if t is None else t.repeat(n) for t in (weight, bias, running_mean, running_var)]
    out = batch_norm(input.reshape(1, n * c, *input.shape[2:]), *per_sample, use_input_stats, momentum, eps, False)
    if use_input_stats:
        from .autograd import no_grad
        with no_grad():
            for running, repeated in zip((running_mean, running_var), per_sample[2:]):
                if running is not None:
                    running.copy_(repeated.view(n, c).mean(0))
    return out.view(input.shape)


def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-05, cudnn_enable=True):
    return F.layer_norm(input, normalized_shape, weight, bias, eps)


def group_norm(input, num_groups, weight=None, bias=None, eps=1e-05, cudnn_enabled=True):
    """ATen's group_norm: nn.functional's without its check of the values per group."""
    if input.dim() < 2:
        raise RuntimeError(f"Expected at least 2 dimensions for input tensor but received {input.dim()}")
    if num_groups <= 0 or input.shape[1] % num_groups != 0:
        raise RuntimeError(f"Expected number of channels in input to be divisible by num_groups, but got input "
                           f"of shape {list(input.shape)} and num_groups={num_groups}")
    return _C._group_norm(input, builtins.int(num_groups), weight, bias, builtins.float(eps))


def rms_norm(input, normalized_shape, weight=None, eps=None):
    return F.rms_norm(input, normalized_shape, weight, eps)


def _dropout_fn(name, inplace, feature, alpha):
    def fn(input, p, train):
        if p < 0.0 or p > 1.0:  # (RuntimeError here, ValueError in nn.functional, as torch)
            raise RuntimeError(f"dropout probability has to be between 0 and 1, but got {p}")
        return _dropout._dropout_impl(input, p, train, inplace, feature, alpha)
    fn.__name__ = fn.__qualname__ = name
    kind = ("feature " if feature else "") + ("alpha " if alpha else "")
    fn.__doc__ = (f"torch.{name}(input, p, train): {kind}dropout{' in place' if inplace else ''}; input itself "
                  "when not training or p is 0.")
    return fn


_DROPOUTS = [_dropout_fn(base + suffix, suffix == "_", base.startswith("feature"), "alpha" in base)
             for base in ("dropout", "alpha_dropout", "feature_dropout", "feature_alpha_dropout")
             for suffix in ("", "_")]


def embedding(weight, indices, padding_idx=-1, scale_grad_by_freq=False, sparse=False):
    """weight[indices]. A padding_idx >= 0 keeps that row out of the gradient; a negative
    one (the default) means none, as ATen's (not nn.functional's counting from the end)."""
    if sparse:
        raise NotImplementedError("embedding(): sparse=True (sparse gradients) is not supported by lucid; "
                                  "use sparse=False (dense gradients)")
    _embedding._check_indices("embedding", indices)
    if weight.dim() != 2:
        raise RuntimeError(f"embedding(): 'weight' must be 2-D, got a {weight.dim()}-D tensor")
    num = weight.shape[0]
    pad = padding_idx if 0 <= padding_idx < num else None  # (an index past the table matches no row)
    return F.embedding(indices, weight, pad, None, 2.0, scale_grad_by_freq)


def embedding_renorm_(input, indices, max_norm, norm_type):
    """Scales, in place and outside autograd, the rows of input that indices looks up and
    whose norm exceeds max_norm, to max_norm / (norm + 1e-7); returns input."""
    _embedding._check_indices("embedding_renorm_", indices)
    if input.dim() != 2:
        raise RuntimeError(f"embedding_renorm_(): 'input' must be 2-D, got a {input.dim()}-D tensor")
    _embedding._renorm_(input, indices.reshape(-1), max_norm, norm_type)
    return input


def cosine_embedding_loss(input1, input2, target, margin=0.0, reduction=1):
    return F.cosine_embedding_loss(input1, input2, target, margin, reduction=_reduction(reduction))


def hinge_embedding_loss(input, target, margin=1.0, reduction=1):
    return F.hinge_embedding_loss(input, target, margin, reduction=_reduction(reduction))


def kl_div(input, target, reduction=1, *, log_target=False):
    """reduction 1 is the mean over every element (there is no 'batchmean' here)."""
    return F.kl_div(input, target, reduction=_reduction(reduction), log_target=log_target)


def margin_ranking_loss(input1, input2, target, margin=0.0, reduction=1):
    return F.margin_ranking_loss(input1, input2, target, margin, reduction=_reduction(reduction))


def poisson_nll_loss(input, target, log_input, full, eps, reduction):
    return F.poisson_nll_loss(input, target, log_input, full, eps=eps, reduction=_reduction(reduction))


def triplet_margin_loss(anchor, positive, negative, margin=1.0, p=2, eps=1e-06, swap=False, reduction=1):
    return F.triplet_margin_loss(anchor, positive, negative, margin, p, eps, swap, reduction=_reduction(reduction))


def ctc_loss(log_probs, targets, input_lengths, target_lengths, blank=0, reduction=1, zero_infinity=False):
    return F.ctc_loss(log_probs, targets, input_lengths, target_lengths, blank, _reduction(reduction), zero_infinity)


def binary_cross_entropy_with_logits(input, target, weight=None, pos_weight=None, reduction=1):
    return F.binary_cross_entropy_with_logits(input, target, weight, reduction=_reduction(reduction),
                                              pos_weight=pos_weight)


def constant_pad_nd(input, pad, value=0):
    """Pads (or, for negative amounts, crops) the last len(pad) // 2 dims with value."""
    pad = list(pad)
    if len(pad) % 2:
        raise RuntimeError(f"Length of pad must be even but instead it equals {len(pad)}")
    if len(pad) > 2 * input.dim():
        raise RuntimeError(f"Length of pad should be no more than twice the number of dimensions of the input. "
                           f"Pad length is {len(pad)} while the input has {input.dim()} dimensions.")
    return F.pad(input, pad, "constant", value)


# ATen's GridSamplerInterpolation and GridSamplerPadding enums
_GRID_MODES = ("bilinear", "nearest", "bicubic")
_GRID_PADDINGS = ("zeros", "border", "reflection")


def grid_sampler(input, grid, interpolation_mode, padding_mode, align_corners):
    """grid_sample with ATen's int modes: interpolation 0 bilinear, 1 nearest, 2 bicubic;
    padding 0 zeros, 1 border, 2 reflection."""
    if not (0 <= interpolation_mode < 3):
        raise RuntimeError(f"grid_sampler(): interpolation_mode must be 0 (bilinear), 1 (nearest) or 2 (bicubic), "
                           f"but got {interpolation_mode}")
    if not (0 <= padding_mode < 3):
        raise RuntimeError(f"grid_sampler(): padding_mode must be 0 (zeros), 1 (border) or 2 (reflection), "
                           f"but got {padding_mode}")
    return F.grid_sample(input, grid, _GRID_MODES[interpolation_mode], _GRID_PADDINGS[padding_mode],
                         builtins.bool(align_corners))


def affine_grid_generator(theta, size, align_corners):
    return F.affine_grid(theta, list(size), builtins.bool(align_corners))


# nn.functional's own function where the top-level signature is the same
_SAME = ("conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d",
         "adaptive_avg_pool1d", "bilinear", "pixel_shuffle", "pixel_unshuffle", "channel_shuffle",
         "native_channel_shuffle", "cosine_similarity", "pairwise_distance", "pdist")

_OWN = (convolution, avg_pool1d, max_pool1d, max_pool2d, max_pool3d, max_pool1d_with_indices, adaptive_max_pool1d,
        batch_norm, instance_norm, layer_norm, group_norm, rms_norm, embedding, embedding_renorm_,
        cosine_embedding_loss, hinge_embedding_loss, kl_div, margin_ranking_loss, poisson_nll_loss,
        triplet_margin_loss, ctc_loss, binary_cross_entropy_with_logits, constant_pad_nd, grid_sampler,
        affine_grid_generator, *_DROPOUTS)


def install(namespace):
    """Adds the functions to `namespace` (lucid's globals), leaving any name lucid has."""
    for name in _SAME:
        namespace.setdefault(name, getattr(F, name))
    for fn in _OWN:
        namespace.setdefault(fn.__name__, fn)
