"""InstanceNorm1d/2d/3d and their lazy forms (torch.nn.modules.instancenorm): per-sample,
per-channel normalisation with batch norm's optional running statistics."""

import warnings

from .. import _functional_batchnorm as F
from .batchnorm import _LazyNormBase, _NormBase

__all__ = ["InstanceNorm1d", "InstanceNorm2d", "InstanceNorm3d", "LazyInstanceNorm1d", "LazyInstanceNorm2d",
           "LazyInstanceNorm3d"]


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


class _LazyInstanceNorm(_LazyNormBase, _InstanceNorm):
    """An instance norm whose num_features is its first input's channel dim (dim 1, or
    dim 0 unbatched). (affine and track_running_stats default to True, as torch's lazy
    instance norms, unlike the eager ones.)"""

    def _feature_dim(self, input):
        return input.dim() - self._no_batch_dim


class LazyInstanceNorm1d(_LazyInstanceNorm):
    cls_to_become = InstanceNorm1d
    _no_batch_dim = 2


class LazyInstanceNorm2d(_LazyInstanceNorm):
    cls_to_become = InstanceNorm2d
    _no_batch_dim = 3


class LazyInstanceNorm3d(_LazyInstanceNorm):
    cls_to_become = InstanceNorm3d
    _no_batch_dim = 4
