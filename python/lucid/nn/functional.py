"""lucid.nn.functional: stateless neural-network functions, as torch.nn.functional."""

from .. import _C

__all__ = ["linear"]


def linear(input, weight, bias=None):
    """input @ weight.T + bias (weight is [out_features, in_features] or 1-D)."""
    return _C._linear(input, weight, bias)
