"""QAT Conv1d/2d/3d and their fused Conv+ReLU forms."""

import lucid.nn as nn
import lucid.nn.functional as F

from ._common import adopt_parameters, attach_fake_quants, float_source, require_qconfig

__all__ = ["Conv1d", "Conv2d", "Conv3d", "ConvReLU1d", "ConvReLU2d", "ConvReLU3d"]


class _QATConvMixin:
    """forward / from_float shared by the three ranks; the float base class supplies
    _conv_forward (which honours padding_mode)."""

    _relu = False
    _float_type = None
    _fused_name = None

    def _init_qat(self, qconfig):
        attach_fake_quants(self, qconfig)

    def forward(self, input):
        y = self._conv_forward(input, self.weight_fake_quant(self.weight), self.bias)
        if self._relu:
            y = F.relu(y)
        return self.activation_post_process(y)

    @classmethod
    def from_float(cls, mod):
        import lucid.nn.intrinsic as nni
        fused = getattr(nni, cls._fused_name) if cls._relu else None
        source, _ = float_source(mod, cls._float_type, fused, cls.__name__)
        qconfig = getattr(mod, "qconfig", None) or getattr(source, "qconfig", None)
        qat = cls(source.in_channels, source.out_channels, source.kernel_size, stride=source.stride,
                  padding=source.padding, dilation=source.dilation, groups=source.groups,
                  bias=source.bias is not None, padding_mode=source.padding_mode,
                  qconfig=require_qconfig(qconfig, f"{cls.__name__}.from_float (mod.qconfig)"),
                  device=source.weight.device, dtype=source.weight.dtype)
        adopt_parameters(qat, source)
        return qat


def _make(name, float_type, relu, fused_name):
    def __init__(self, *args, qconfig=None, **kwargs):
        require_qconfig(qconfig, type(self).__name__)
        float_type.__init__(self, *args, **kwargs)
        self._init_qat(qconfig)

    return type(name, (_QATConvMixin, float_type), {
        "__init__": __init__, "_relu": relu, "_float_type": float_type, "_fused_name": fused_name,
        "__module__": __name__,
        "__doc__": f"QAT {float_type.__name__}: fake-quantized weight"
                   + (", ReLU" if relu else "") + ", FakeQuantize on the output.",
    })


Conv1d = _make("Conv1d", nn.Conv1d, False, "ConvReLU1d")
Conv2d = _make("Conv2d", nn.Conv2d, False, "ConvReLU2d")
Conv3d = _make("Conv3d", nn.Conv3d, False, "ConvReLU3d")
ConvReLU1d = _make("ConvReLU1d", nn.Conv1d, True, "ConvReLU1d")
ConvReLU2d = _make("ConvReLU2d", nn.Conv2d, True, "ConvReLU2d")
ConvReLU3d = _make("ConvReLU3d", nn.Conv3d, True, "ConvReLU3d")
