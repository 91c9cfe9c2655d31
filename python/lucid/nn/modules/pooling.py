"""Pooling layers, as torch.nn (same constructor arguments, stored
attributes and repr); thin Modules over nn.functional."""

from .. import functional as F
from .module import Module

__all__ = ["MaxPool1d", "MaxPool2d", "MaxPool3d", "AvgPool1d", "AvgPool2d", "AvgPool3d", "AdaptiveAvgPool1d",
           "AdaptiveAvgPool2d", "AdaptiveAvgPool3d", "AdaptiveMaxPool1d", "AdaptiveMaxPool2d", "AdaptiveMaxPool3d",
           "LPPool1d", "LPPool2d", "LPPool3d", "MaxUnpool1d", "MaxUnpool2d", "MaxUnpool3d", "FractionalMaxPool2d",
           "FractionalMaxPool3d"]


def _tup(v, n):
    return tuple(v) if isinstance(v, (list, tuple)) else (v,) * n


class _MaxPoolNd(Module):
    def __init__(self, kernel_size, stride=None, padding=0, dilation=1, return_indices=False, ceil_mode=False):
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if (stride is not None) else kernel_size
        self.padding = padding
        self.dilation = dilation
        self.return_indices = return_indices
        self.ceil_mode = ceil_mode

    def extra_repr(self):
        return (f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}, "
                f"dilation={self.dilation}, ceil_mode={self.ceil_mode}")

    def forward(self, input):
        fn = (F.max_pool1d, F.max_pool2d, F.max_pool3d)[self._nsp - 1]
        return fn(input, self.kernel_size, self.stride, self.padding, self.dilation, ceil_mode=self.ceil_mode,
                  return_indices=self.return_indices)


class MaxPool1d(_MaxPoolNd):
    _nsp = 1


class MaxPool2d(_MaxPoolNd):
    _nsp = 2


class MaxPool3d(_MaxPoolNd):
    _nsp = 3


class AvgPool1d(Module):
    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True):
        super().__init__()
        self.kernel_size = _tup(kernel_size, 1)
        self.stride = _tup(stride if stride is not None else kernel_size, 1)
        self.padding = _tup(padding, 1)
        self.ceil_mode = ceil_mode
        self.count_include_pad = count_include_pad

    def extra_repr(self):
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"

    def forward(self, input):
        return F.avg_pool1d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                            self.count_include_pad)


class _AvgPoolNd(Module):
    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
                 divisor_override=None):
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if (stride is not None) else kernel_size
        self.padding = padding
        self.ceil_mode = ceil_mode
        self.count_include_pad = count_include_pad
        self.divisor_override = divisor_override

    def extra_repr(self):
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"

    def forward(self, input):
        fn = F.avg_pool2d if self._nsp == 2 else F.avg_pool3d
        return fn(input, self.kernel_size, self.stride, self.padding, self.ceil_mode, self.count_include_pad,
                  self.divisor_override)


class AvgPool2d(_AvgPoolNd):
    _nsp = 2


class AvgPool3d(_AvgPoolNd):
    _nsp = 3


class _AdaptiveAvgPoolNd(Module):
    def __init__(self, output_size):
        super().__init__()
        self.output_size = output_size

    def extra_repr(self):
        return f"output_size={self.output_size}"

    def forward(self, input):
        fn = (F.adaptive_avg_pool1d, F.adaptive_avg_pool2d, F.adaptive_avg_pool3d)[self._nsp - 1]
        return fn(input, self.output_size)


class AdaptiveAvgPool1d(_AdaptiveAvgPoolNd):
    _nsp = 1


class AdaptiveAvgPool2d(_AdaptiveAvgPoolNd):
    _nsp = 2


class AdaptiveAvgPool3d(_AdaptiveAvgPoolNd):
    _nsp = 3


class _AdaptiveMaxPoolNd(Module):
    def __init__(self, output_size, return_indices=False):
        super().__init__()
        self.output_size = output_size
        self.return_indices = return_indices

    def extra_repr(self):
        return f"output_size={self.output_size}"

    def forward(self, input):
        fn = (F.adaptive_max_pool1d, F.adaptive_max_pool2d, F.adaptive_max_pool3d)[self._nsp - 1]
        return fn(input, self.output_size, self.return_indices)


class AdaptiveMaxPool1d(_AdaptiveMaxPoolNd):
    _nsp = 1


class AdaptiveMaxPool2d(_AdaptiveMaxPoolNd):
    _nsp = 2


class AdaptiveMaxPool3d(_AdaptiveMaxPoolNd):
    _nsp = 3


class _LPPoolNd(Module):
    def __init__(self, norm_type, kernel_size, stride=None, ceil_mode=False):
        super().__init__()
        self.norm_type = norm_type
        self.kernel_size = kernel_size
        self.stride = stride
        self.ceil_mode = ceil_mode

    def extra_repr(self):
        return (f"norm_type={self.norm_type}, kernel_size={self.kernel_size}, stride={self.stride}, "
                f"ceil_mode={self.ceil_mode}")

    def forward(self, input):
        fn = (F.lp_pool1d, F.lp_pool2d, F.lp_pool3d)[self._nsp - 1]
        return fn(input, float(self.norm_type), self.kernel_size, self.stride, self.ceil_mode)


class LPPool1d(_LPPoolNd):
    _nsp = 1


class LPPool2d(_LPPoolNd):
    _nsp = 2


class LPPool3d(_LPPoolNd):
    _nsp = 3


class _MaxUnpoolNd(Module):
    def __init__(self, kernel_size, stride=None, padding=0):
        super().__init__()
        n = self._nsp
        self.kernel_size = _tup(kernel_size, n)
        self.stride = _tup(stride if stride is not None else kernel_size, n)
        self.padding = _tup(padding, n)

    def extra_repr(self):
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"

    def forward(self, input, indices, output_size=None):
        fn = (F.max_unpool1d, F.max_unpool2d, F.max_unpool3d)[self._nsp - 1]
        return fn(input, indices, self.kernel_size, self.stride, self.padding, output_size)


class MaxUnpool1d(_MaxUnpoolNd):
    _nsp = 1


class MaxUnpool2d(_MaxUnpoolNd):
    _nsp = 2


class MaxUnpool3d(_MaxUnpoolNd):
    _nsp = 3


class _FractionalMaxPoolNd(Module):
    """Fractional max pooling (nn.functional.fractional_max_pool2d / 3d): `output_size`
    or `output_ratio` (in (0, 1)), one of them; `_random_samples` (a buffer) fixes the
    windows, as torch's."""

    def __init__(self, kernel_size, output_size=None, output_ratio=None, return_indices=False, _random_samples=None):
        super().__init__()
        n, name = self._nsp, type(self).__name__
        self.kernel_size = _tup(kernel_size, n)
        self.return_indices = return_indices
        self.register_buffer("_random_samples", _random_samples)
        self.output_size = _tup(output_size, n) if output_size is not None else None
        self.output_ratio = _tup(output_ratio, n) if output_ratio is not None else None
        if output_size is None and output_ratio is None:
            raise ValueError(f"{name} requires specifying either an output size, or a pooling ratio")
        if output_size is not None and output_ratio is not None:
            raise ValueError("only one of output_size and output_ratio may be specified")
        if self.output_ratio is not None and not all(0 < r < 1 for r in self.output_ratio):
            raise ValueError(f"output_ratio must be between 0 and 1 (got {output_ratio})")

    def forward(self, input):
        fn = F.fractional_max_pool2d if self._nsp == 2 else F.fractional_max_pool3d
        return fn(input, self.kernel_size, self.output_size, self.output_ratio, self.return_indices,
                  _random_samples=self._random_samples)


class FractionalMaxPool2d(_FractionalMaxPoolNd):
    _nsp = 2


class FractionalMaxPool3d(_FractionalMaxPoolNd):
    _nsp = 3
