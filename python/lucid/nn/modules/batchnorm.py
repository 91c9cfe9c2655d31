"""Normalisation layers over batches and groups, as torch.nn: BatchNorm1d/2d/3d,
InstanceNorm1d/2d/3d, GroupNorm, LocalResponseNorm (nn/_functional_batchnorm.py)."""

import warnings

from .. import _functional_batchnorm as F
from .. import init
from ..parameter import Parameter
from .module import Module

__all__ = ["BatchNorm1d", "BatchNorm2d", "BatchNorm3d", "InstanceNorm1d", "InstanceNorm2d", "InstanceNorm3d",
           "GroupNorm", "LocalResponseNorm"]


def register_affine(module, shape, affine, bias=True, device=None, dtype=None):
    """A normalisation layer's affine map, named as torch's: `weight` and `bias`, each of
    `shape`, registered as None when the layer is not affine (bias also when bias=False).
    bias=None: the layer has no bias at all (RMSNorm)."""
    from ... import empty
    make = lambda: Parameter(empty(*shape, device=device, dtype=dtype))  # noqa: E731
    module.register_parameter("weight", make() if affine else None)
    if bias is not None:
        module.register_parameter("bias", make() if affine and bias else None)


def reset_affine(module):
    """weight = 1, bias = 0 (those that exist)."""
    if module.weight is not None:
        init.ones_(module.weight)
    if getattr(module, "bias", None) is not None:
        init.zeros_(module.bias)


class _NormBase(Module):
    """Parameters (weight = 1, bias = 0 when affine) and buffers (running_mean = 0,
    running_var = 1, num_batches_tracked = 0 when track_running_stats), named as torch's
    so state_dicts are interchangeable."""

    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=True, track_running_stats=True, device=None,
                 dtype=None, *, bias=True):
        super().__init__()
        from ... import ones, tensor, zeros
        from ... import long as _long
        self.num_features = num_features
        self.eps = eps
        self.momentum = momentum
        self.affine = affine
        self.track_running_stats = track_running_stats
        register_affine(self, (num_features,), affine, bias, device, dtype)  # bias=False: a scale only (recent torch)
        if track_running_stats:
            self.register_buffer("running_mean", zeros(num_features, device=device, dtype=dtype))
            self.register_buffer("running_var", ones(num_features, device=device, dtype=dtype))
            self.register_buffer("num_batches_tracked", tensor(0, dtype=_long, device=device))
        else:
            self.register_buffer("running_mean", None)
            self.register_buffer("running_var", None)
            self.register_buffer("num_batches_tracked", None)
        self.reset_parameters()

    def reset_running_stats(self):
        if self.track_running_stats:
            self.running_mean.zero_()
            self.running_var.fill_(1)
            self.num_batches_tracked.zero_()

    def reset_parameters(self):
        self.reset_running_stats()
        reset_affine(self)

    def _check_input_dim(self, input):
        raise NotImplementedError

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                              error_msgs, assign=False):
        # As torch for a state_dict without version metadata (saved before num_batches_tracked
        # existed): a missing num_batches_tracked loads as the current value (or 0).
        if local_metadata.get("version", None) is None and self.track_running_stats:
            key = prefix + "num_batches_tracked"
            if key not in state_dict:
                from ... import tensor, long
                cur = self.num_batches_tracked
                state_dict[key] = cur if cur is not None else tensor(0, dtype=long)
        super()._load_from_state_dict(state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                                      error_msgs, assign)

    def extra_repr(self):
        return (f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, affine={self.affine}, "
                f"bias={self.bias is not None}, track_running_stats={self.track_running_stats}")


class _BatchNorm(_NormBase):
    def forward(self, input):
        self._check_input_dim(input)
        # momentum=None: a cumulative moving average (factor 1 / batches seen so far)
        factor = 0.0 if self.momentum is None else self.momentum
        if self.training and self.track_running_stats and self.num_batches_tracked is not None:
            self.num_batches_tracked.add_(1)
            factor = 1.0 / float(self.num_batches_tracked.item()) if self.momentum is None else self.momentum
        bn_training = self.training or (self.running_mean is None and self.running_var is None)
        use_running = not self.training or self.track_running_stats
        return F.batch_norm(input, self.running_mean if use_running else None,
                            self.running_var if use_running else None, self.weight, self.bias, bn_training,
                            factor, self.eps)


class BatchNorm1d(_BatchNorm):
    """Batch normalisation of [N, C] or [N, C, L] inputs."""

    def _check_input_dim(self, input):
        if input.dim() != 2 and input.dim() != 3:
            raise ValueError(f"expected 2D or 3D input (got {input.dim()}D input)")


class BatchNorm2d(_BatchNorm):
    """Batch normalisation of [N, C, H, W] inputs."""

    def _check_input_dim(self, input):
        if input.dim() != 4:
            raise ValueError(f"expected 4D input (got {input.dim()}D input)")


class BatchNorm3d(_BatchNorm):
    """Batch normalisation of [N, C, D, H, W] inputs."""

    def _check_input_dim(self, input):
        if input.dim() != 5:
            raise ValueError(f"expected 5D input (got {input.dim()}D input)")


class _InstanceNorm(_NormBase):
    _no_batch_dim = 0

    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=False, track_running_stats=False, device=None,
                 dtype=None, *, bias=True):
        super().__init__(num_features, eps, momentum, affine, track_running_stats, device, dtype, bias=bias)

    def _check_input_dim(self, input):
        lo = self._no_batch_dim
        if input.dim() not in (lo, lo + 1):
            raise ValueError(f"expected {lo}D or {lo + 1}D input (got {input.dim()}D input)")

    def forward(self, input):
        self._check_input_dim(input)
        feature_dim = input.dim() - self._no_batch_dim
        if input.shape[feature_dim] != self.num_features:
            if self.affine:
                raise ValueError(f"expected input's size at dim={feature_dim} to match num_features "
                                 f"({self.num_features}), but got: {input.shape[feature_dim]}.")
            warnings.warn(f"input's size at dim={feature_dim} does not match num_features. You can silence this "
                          "warning by not passing in num_features, which is not used because affine=False")
        if input.dim() == self._no_batch_dim:
            return self._apply_norm(input.unsqueeze(0)).squeeze(0)
        return self._apply_norm(input)

    def _apply_norm(self, input):
        return F.instance_norm(input, self.running_mean, self.running_var, self.weight, self.bias,
                               self.training or not self.track_running_stats, self.momentum, self.eps)


class InstanceNorm1d(_InstanceNorm):
    """Instance normalisation of [N, C, L] or [C, L] inputs."""
    _no_batch_dim = 2


class InstanceNorm2d(_InstanceNorm):
    """Instance normalisation of [N, C, H, W] or [C, H, W] inputs."""
    _no_batch_dim = 3


class InstanceNorm3d(_InstanceNorm):
    """Instance normalisation of [N, C, D, H, W] or [C, D, H, W] inputs."""
    _no_batch_dim = 4


class GroupNorm(Module):
    """Normalises each sample over groups of num_channels / num_groups channels."""

    def __init__(self, num_groups, num_channels, eps=1e-5, affine=True, device=None, dtype=None, *, bias=True):
        super().__init__()
        if num_channels % num_groups != 0:
            raise ValueError("num_channels must be divisible by num_groups")
        self.num_groups = num_groups
        self.num_channels = num_channels
        self.eps = eps
        self.affine = affine
        register_affine(self, (num_channels,), affine, bias, device, dtype)
        self.reset_parameters()

    def reset_parameters(self):
        reset_affine(self)

    def forward(self, input):
        return F.group_norm(input, self.num_groups, self.weight, self.bias, self.eps)

    def extra_repr(self):
        return (f"{self.num_groups}, {self.num_channels}, eps={self.eps}, affine={self.affine}, "
                f"bias={self.bias is not None}")


class LocalResponseNorm(Module):
    """Normalises each element by the squares of its `size` neighbouring channels."""

    def __init__(self, size, alpha=1e-4, beta=0.75, k=1.0):
        super().__init__()
        self.size, self.alpha, self.beta, self.k = size, alpha, beta, k

    def forward(self, input):
        return F.local_response_norm(input, self.size, self.alpha, self.beta, self.k)

    def extra_repr(self):
        return f"{self.size}, alpha={self.alpha}, beta={self.beta}, k={self.k}"
