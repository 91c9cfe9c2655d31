"""Functional normalisation layers: batch_norm, instance_norm, group_norm
(C++ kernels in csrc/ops/norm.cpp) and local_response_norm (a composition)."""


from .. import _C
from ..amp._autocast import policy as _autocast_policy  # Note [Autocast]

__all__ = ["batch_norm", "instance_norm", "group_norm", "local_response_norm"]


def _verify_batch_size(size):
    n = size[0]
    for s in size[2:]:
        n *= s
    if n == 1:
        raise ValueError(f"Expected more than 1 value per channel when training, got input size {_size(size)}")


def _verify_spatial_size(size):
    n = 1
    for s in size[2:]:
        n *= s
    if n == 1:
        raise ValueError(f"Expected more than 1 spatial element when training, got input size {_size(size)}")


def _size(size):
    from .._size import Size
    return Size(size)


def batch_norm(input, running_mean, running_var, weight=None, bias=None, training=False, momentum=0.1,
               eps=1e-05):
    """Normalises over every dim but dim 1 of input [N, C, *]. In training mode the batch
    statistics are used and running_mean / running_var (when given) are updated in place
    with `momentum` (unbiased variance); otherwise the running statistics are used."""
    if training:
        _verify_batch_size(list(input.shape))
    return _C._batch_norm(input, weight, bias, running_mean, running_var, bool(training),
                          0.0 if momentum is None else float(momentum), float(eps))


def instance_norm(input, running_mean=None, running_var=None, weight=None, bias=None, use_input_stats=True,
                  momentum=0.1, eps=1e-05):
    """Normalises each (sample, channel) over its spatial dims: batch_norm of input viewed
    as [1, N*C, *] (as torch does), with the running statistics averaged over the batch."""
    if use_input_stats:
        _verify_spatial_size(list(input.shape))
    if input.dim() < 2:
        raise ValueError(f"instance_norm(): expected an input with at least 2 dimensions [N, C, *], got "
                         f"{input.dim()}-D input")
    n, c = input.shape[0], input.shape[1]
    x = input.reshape(1, n * c, *input.shape[2:])
    w = weight.repeat(n) if weight is not None else None
    b = bias.repeat(n) if bias is not None else None
    rm = running_mean.repeat(n) if running_mean is not None else None
    rv = running_var.repeat(n) if running_var is not None else None
    out = _C._batch_norm(x, w, b, rm, rv, bool(use_input_stats), 0.0 if momentum is None else float(momentum),
                         float(eps))
    if use_input_stats and (running_mean is not None or running_var is not None):
        from ..autograd import no_grad
        with no_grad():
            if running_mean is not None:
                running_mean.copy_(rm.view(n, c).mean(0))
            if running_var is not None:
                running_var.copy_(rv.view(n, c).mean(0))
    return out.view(input.shape)


@_autocast_policy("group_norm")
def group_norm(input, num_groups, weight=None, bias=None, eps=1e-05):
    """Normalises each sample over groups of C / num_groups channels (and all spatial dims)."""
    if input.dim() < 2:
        raise RuntimeError(f"Expected at least 2 dimensions for input tensor but received {input.dim()}")
    if num_groups <= 0 or input.shape[1] % num_groups != 0:
        raise RuntimeError(f"Expected number of channels in input to be divisible by num_groups, but got input "
                           f"of shape {list(input.shape)} and num_groups={num_groups}")
    _verify_batch_size([input.shape[0] * input.shape[1] // num_groups, num_groups] + list(input.shape[2:]))
    return _C._group_norm(input, int(num_groups), weight, bias, float(eps))


def local_response_norm(input, size, alpha=1e-4, beta=0.75, k=1.0):
    """input / (k + alpha / size * sum of squares over `size` neighbouring channels)^beta,
    the window zero-padded at the channel ends (size // 2 before, (size - 1) // 2 after)."""
    dim = input.dim()
    if dim < 3:
        raise ValueError(f"Expected 3D or higher dimensionality input (got {dim} dimensions)")
    if input.numel() == 0:
        return input
    from .. import cat, zeros
    c = input.shape[1]
    sq = input * input
    before, after = size // 2, (size - 1) // 2
    parts = []
    if before:
        parts.append(zeros(input.shape[0], before, *input.shape[2:], dtype=input.dtype, device=input.device))
    parts.append(sq)
    if after:
        parts.append(zeros(input.shape[0], after, *input.shape[2:], dtype=input.dtype, device=input.device))
    padded = cat(parts, 1) if len(parts) > 1 else sq
    acc = padded.narrow(1, 0, c)
    for j in range(1, size):
        acc = acc + padded.narrow(1, j, c)
    div = (acc * (alpha / size) + k) ** beta
    return input / div
