"""Quantized Conv1d/2d/3d and Conv+ReLU (int8 per-output-channel weight)."""

import lucid.nn as nn
import lucid.nn.functional as F

from ._utils import check_conv_channels
from ._weighted import QuantizedWeighted

__all__ = ["Conv1d", "Conv2d", "Conv3d", "ConvReLU1d", "ConvReLU2d", "ConvReLU3d"]

_CONV_FN = {1: F.conv1d, 2: F.conv2d, 3: F.conv3d}
_FLOAT_CONV = {1: nn.Conv1d, 2: nn.Conv2d, 3: nn.Conv3d}


def _tuple(value, n, name, where):
    if isinstance(value, int):
        return (value,) * n
    value = tuple(value)
    if len(value) != n or not all(isinstance(v, int) for v in value):
        raise ValueError(f"{where}: {name} must be an int or {n} ints, got {value!r}")
    return value


def _pad_list(padding, kernel_size, dilation):
    """F.pad's list (last dim first, left/right each) for the non-zero padding modes."""
    if padding == "valid":
        return [0, 0] * len(kernel_size)
    if padding == "same":
        pads = []
        for d, k in zip(reversed(dilation), reversed(kernel_size)):
            total = d * (k - 1)
            pads += [total // 2, total - total // 2]
        return pads
    return [p for p in reversed(padding) for _ in range(2)]


class _QuantizedConvNd(QuantizedWeighted):
    _rank = 2

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1,
                 groups=1, bias=True, padding_mode="zeros"):
        super().__init__()
        name, n = type(self).__name__, self._rank
        check_conv_channels(self, in_channels, out_channels, groups, name)
        self.kernel_size = _tuple(kernel_size, n, "kernel_size", name)
        self.stride = _tuple(stride, n, "stride", name)
        self.dilation = _tuple(dilation, n, "dilation", name)
        if isinstance(padding, str):
            if padding not in ("same", "valid"):
                raise ValueError(f"{name}: padding string must be 'same' or 'valid', got {padding!r}")
            self.padding = padding
        else:
            self.padding = _tuple(padding, n, "padding", name)
        self.padding_mode = padding_mode
        self._reversed_padding_repeated_twice = _pad_list(self.padding, self.kernel_size, self.dilation)
        weight_shape = (out_channels, in_channels // groups, *self.kernel_size)
        self._init_buffers(weight_shape, out_channels, out_channels if bias else None)

    def _float_op(self, x, weight):
        if x.ndim not in (self._rank + 1, self._rank + 2):
            raise ValueError(f"{type(self).__name__}: expected a {self._rank + 1}-d or {self._rank + 2}-d "
                             f"input, got shape {tuple(x.shape)}")
        conv = _CONV_FN[self._rank]
        bias = None if self.bias is None else self.bias.to(x.dtype)
        weight = weight.to(x.dtype)
        if self.padding_mode != "zeros":
            padded = F.pad(x, self._reversed_padding_repeated_twice, mode=self.padding_mode)
            return conv(padded, weight, bias, self.stride, 0, self.dilation, self.groups)
        return conv(x, weight, bias, self.stride, self.padding, self.dilation, self.groups)

    @classmethod
    def from_float(cls, mod):
        """From a calibrated float conv (or nn.intrinsic ConvReLU), a trained nn.qat conv,
        or a trained nn.intrinsic.qat ConvBn (BatchNorm folded into the weight)."""
        import lucid.nn.intrinsic as nni
        import lucid.nn.intrinsic.qat as nniqat
        import lucid.nn.qat as nnqat
        n = cls._rank
        suffix = f"{n}d"
        if cls._relu:
            accepted = (getattr(nni, "ConvReLU" + suffix), getattr(nnqat, "ConvReLU" + suffix),
                        getattr(nniqat, "ConvBnReLU" + suffix))
        else:
            accepted = (_FLOAT_CONV[n], getattr(nnqat, "Conv" + suffix), getattr(nniqat, "ConvBn" + suffix))
        if type(mod) not in accepted:
            raise TypeError(f"quantized {cls.__name__}.from_float expects one of "
                            f"{[t.__name__ for t in accepted]}, got {type(mod).__name__}")
        from lucid.nn.intrinsic.qat.modules import _ConvBnNd
        if isinstance(mod, _ConvBnNd):  # BatchNorm disappears into the quantized weight
            conv = mod.conv
            weight, bias = mod.folded_weight_and_bias()
        else:
            conv = mod[0] if isinstance(mod, nn.Sequential) else mod
            weight, bias = conv.weight, conv.bias
        q = cls(conv.in_channels, conv.out_channels, conv.kernel_size, stride=conv.stride,
                padding=conv.padding, dilation=conv.dilation, groups=conv.groups,
                bias=bias is not None, padding_mode=conv.padding_mode)
        q._load_quantized(mod, weight, bias)
        return q

    def extra_repr(self):
        return (f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, "
                f"stride={self.stride}, padding={self.padding}, qdtype={self.out_qdtype.name}")


def _make(name, rank, relu):
    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1,
                 groups=1, bias=True, padding_mode="zeros"):
        _QuantizedConvNd.__init__(self, in_channels, out_channels, kernel_size, stride, padding,
                                  dilation, groups, bias, padding_mode)
    doc = f"Quantized Conv{rank}d{' + ReLU' if relu else ''}: int8 weight, output on the calibrated grid."
    return type(name, (_QuantizedConvNd,), {"__init__": __init__, "_rank": rank, "_relu": relu,
                                            "__module__": __name__, "__doc__": doc})


Conv1d = _make("Conv1d", 1, False)
Conv2d = _make("Conv2d", 2, False)
Conv3d = _make("Conv3d", 3, False)
ConvReLU1d = _make("ConvReLU1d", 1, True)
ConvReLU2d = _make("ConvReLU2d", 2, True)
ConvReLU3d = _make("ConvReLU3d", 3, True)
