"""Channel-wise and alpha dropout: dropout1d/2d/3d, alpha_dropout, feature_alpha_dropout.
The masks come from lucid's generator (lucid.rand). As ATen: feature dropout draws one
Bernoulli(1 - p) per (sample, channel) and broadcasts it over the spatial dims; alpha
dropout keeps the self-normalising mean and variance (SELU's alpha) with the affine
map a * x * mask + b."""

import math
import warnings

__all__ = ["dropout1d", "dropout2d", "dropout3d", "alpha_dropout", "feature_alpha_dropout"]

_SELU_ALPHA = 1.7580993408473766


def _check_p(p):
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")


def _dropout_impl(input, p, train, inplace, feature, alpha):
    if p == 0 or not train or input.numel() == 0:
        return input
    if feature and input.dim() < 2:
        raise RuntimeError("Feature dropout requires at least 2 dimensions in the input")
    if p == 1:
        return input.mul_(0.0) if inplace else input * 0.0
    from .._random import rand
    shape = list(input.shape[:2]) + [1] * (input.dim() - 2) if feature else list(input.shape)
    keep = (rand(*shape, dtype=input.dtype, device=input.device) >= p).to(input.dtype)  # Bernoulli(1 - p)
    # The gradient needs only the mask (a multiplier), so the in-place forms are mul_
    # (and add_), as ATen's: nothing saved reads input.
    if alpha:
        a = 1.0 / math.sqrt((_SELU_ALPHA * _SELU_ALPHA * p + 1) * (1 - p))
        b = (keep - 1) * (_SELU_ALPHA * a) + _SELU_ALPHA * a * p
        return input.mul_(keep * a).add_(b) if inplace else input * (keep * a) + b
    noise = keep / (1 - p)
    return input.mul_(noise) if inplace else input * noise


def dropout1d(input, p=0.5, training=True, inplace=False):
    """Zeroes whole channels of [N, C, L] (or [C, L]) inputs with probability p."""
    _check_p(p)
    d = input.dim()
    if d not in (2, 3):
        raise RuntimeError(f"dropout1d: Expected 2D or 3D input, but received a {d}D input. Note that dropout1d "
                           "exists to provide channel-wise dropout on inputs with 1 spatial dimension, a channel "
                           "dimension, and an optional batch dimension (i.e. 2D or 3D inputs).")
    if d == 3:
        return _dropout_impl(input, p, training, inplace, True, False)
    out = _dropout_impl(input.unsqueeze(0), p, training, inplace, True, False)  # in place: writes input
    return input if inplace else out.squeeze(0)


def dropout2d(input, p=0.5, training=True, inplace=False):
    """Zeroes whole channels of [N, C, H, W] inputs with probability p (a 3-D input is
    taken as [N, C, L], as torch does, with a warning)."""
    _check_p(p)
    d = input.dim()
    if d not in (3, 4):
        warnings.warn(f"dropout2d: Received a {d}-D input to dropout2d, which is deprecated and will result in an "
                      "error in a future release. To retain the behavior and silence this warning, please use "
                      "dropout instead. Note that dropout2d exists to provide channel-wise dropout on inputs with "
                      "2 spatial dimensions, a channel dimension, and an optional batch dimension (i.e. 3D or 4D "
                      "inputs).", stacklevel=2)
    if d == 3:
        warnings.warn("dropout2d: Received a 3D input to dropout2d and assuming that channel-wise 1D dropout "
                      "behavior is desired - input is interpreted as shape (N, C, L), where C is the channel dim. "
                      "This behavior will change in a future release to interpret the input as one without a "
                      "batch dimension, i.e. shape (C, H, W). To maintain the 1D channel-wise dropout behavior, "
                      "please switch to using dropout1d instead.", stacklevel=2)
    return _dropout_impl(input, p, training, inplace, True, False)


def dropout3d(input, p=0.5, training=True, inplace=False):
    """Zeroes whole channels of [N, C, D, H, W] (or [C, D, H, W]) inputs with probability p."""
    _check_p(p)
    d = input.dim()
    if d not in (4, 5):
        warnings.warn(f"dropout3d: Received a {d}-D input to dropout3d, which is deprecated and will result in an "
                      "error in a future release. To retain the behavior and silence this warning, please use "
                      "dropout instead. Note that dropout3d exists to provide channel-wise dropout on inputs with "
                      "3 spatial dimensions, a channel dimension, and an optional batch dimension (i.e. 4D or 5D "
                      "inputs).", stacklevel=2)
    if d == 5:
        return _dropout_impl(input, p, training, inplace, True, False)
    out = _dropout_impl(input.unsqueeze(0), p, training, inplace, True, False)  # in place: writes input
    return input if inplace else out.squeeze(0)


def alpha_dropout(input, p=0.5, training=False, inplace=False):
    """Dropout for SELU networks: dropped elements take SELU's negative saturation value
    and the result is rescaled so mean and variance are kept."""
    _check_p(p)
    return _dropout_impl(input, p, training, inplace, False, True)


def feature_alpha_dropout(input, p=0.5, training=False, inplace=False):
    """alpha_dropout with one mask value per (sample, channel)."""
    _check_p(p)
    return _dropout_impl(input, p, training, inplace, True, True)
