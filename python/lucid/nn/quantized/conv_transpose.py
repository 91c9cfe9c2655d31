"""Quantized ConvTranspose1d/2d/3d. The transposed weight is (in, out/groups, *k), so the
output channels are on axis 1 and the weight is quantized per channel there (one scale
per out/groups slice, shared by the groups), as upstream does."""

import lucid.nn as nn
import lucid.nn.functional as F

from ._utils import check_conv_channels
from ._weighted import QuantizedWeighted
from .conv import _tuple

__all__ = ["ConvTranspose1d", "ConvTranspose2d", "ConvTranspose3d"]

_FN = {1: F.conv_transpose1d, 2: F.conv_transpose2d, 3: F.conv_transpose3d}
_FLOAT = {1: nn.ConvTranspose1d, 2: nn.ConvTranspose2d, 3: nn.ConvTranspose3d}


class _QuantizedConvTransposeNd(QuantizedWeighted):
    _rank = 2

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, output_padding=0,
                 dilation=1, groups=1, bias=True):
        super().__init__()
        name, n = type(self).__name__, self._rank
        check_conv_channels(self, in_channels, out_channels, groups, name)
        self.kernel_size = _tuple(kernel_size, n, "kernel_size", name)
        self.stride = _tuple(stride, n, "stride", name)
        self.padding = _tuple(padding, n, "padding", name)
        self.output_padding = _tuple(output_padding, n, "output_padding", name)
        self.dilation = _tuple(dilation, n, "dilation", name)
        per_group = out_channels // groups
        self._init_buffers((in_channels, per_group, *self.kernel_size), per_group,
                           out_channels if bias else None, weight_ch_axis=1)

    def _float_op(self, x, weight):
        bias = None if self.bias is None else self.bias.to(x.dtype)
        return _FN[self._rank](x, weight.to(x.dtype), bias, self.stride, self.padding,
                               self.output_padding, self.groups, self.dilation)

    @classmethod
    def from_float(cls, mod):
        if type(mod) is not _FLOAT[cls._rank]:
            raise TypeError(f"quantized {cls.__name__}.from_float expects nn.{_FLOAT[cls._rank].__name__}, "
                            f"got {type(mod).__name__}")
        if mod.padding_mode != "zeros":
            raise ValueError(f"quantized {cls.__name__}: only padding_mode='zeros' exists for transposed "
                             f"convolutions, got {mod.padding_mode!r}")
        q = cls(mod.in_channels, mod.out_channels, mod.kernel_size, stride=mod.stride, padding=mod.padding,
                output_padding=mod.output_padding, dilation=mod.dilation, groups=mod.groups,
                bias=mod.bias is not None)
        # Always per channel on axis 1 (the qconfig's weight observer assumes axis 0).
        weight_only = _AxisOneWeight(mod)
        q._load_quantized(weight_only, mod.weight, mod.bias, default_ch_axis=1)
        return q

    def extra_repr(self):
        return (f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, "
                f"stride={self.stride}, qdtype={self.out_qdtype.name}")


class _AxisOneWeight:
    """Presents mod to the conversion helpers without its qconfig, so the weight gets the
    per-channel axis-1 default observer, while keeping its activation observer."""

    def __init__(self, mod):
        self.activation_post_process = mod.activation_post_process if hasattr(
            mod, "activation_post_process") else None
        self._mod = mod

    def parameters(self):
        return self._mod.parameters()

    def buffers(self):
        return self._mod.buffers()


def _make(name, rank):
    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, output_padding=0,
                 dilation=1, groups=1, bias=True):
        _QuantizedConvTransposeNd.__init__(self, in_channels, out_channels, kernel_size, stride, padding,
                                           output_padding, dilation, groups, bias)
    return type(name, (_QuantizedConvTransposeNd,), {
        "__init__": __init__, "_rank": rank, "__module__": __name__,
        "__doc__": f"Quantized ConvTranspose{rank}d: int8 weight (per channel on axis 1), output on the "
                   "calibrated grid."})


ConvTranspose1d = _make("ConvTranspose1d", 1)
ConvTranspose2d = _make("ConvTranspose2d", 2)
ConvTranspose3d = _make("ConvTranspose3d", 3)
