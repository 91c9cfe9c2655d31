"""Quantized activations: the float activation, then its output put on the calibrated
grid. Sigmoid / Hardsigmoid / Tanh have known output ranges, so they pair naturally with
FixedQParamsObserver; ELU / LeakyReLU / Hardswish are calibrated."""

import lucid.nn.functional as F
import lucid.nn as nn
from lucid.quantization._functional import fake_quantize
from lucid.quantization._qscheme import check_qdtype, quint8

from ._utils import activation_qparams

__all__ = ["Sigmoid", "Tanh", "Hardsigmoid", "Hardswish", "ELU", "LeakyReLU"]


class _QuantizedActivation(nn.Module):
    _float_type = None

    def __init__(self, scale, zero_point, qdtype=quint8):
        super().__init__()
        import lucid
        self.qdtype = check_qdtype(qdtype, type(self).__name__)
        self.register_buffer("scale", lucid.as_tensor(scale, dtype=lucid.float32).reshape(()))
        self.register_buffer("zero_point", lucid.as_tensor(zero_point, dtype=lucid.float32).reshape(()))

    def _activation(self, x):
        raise NotImplementedError

    def forward(self, input):
        return fake_quantize(self._activation(input), self.scale, self.zero_point, self.qdtype.quant_min,
                             self.qdtype.quant_max)

    def _copy_settings(self, mod):
        """Copy the float module's hyper-parameters (alpha, negative_slope)."""

    @classmethod
    def from_float(cls, mod):
        if type(mod) is not cls._float_type:
            raise TypeError(f"quantized {cls.__name__}.from_float expects nn.{cls._float_type.__name__}, "
                            f"got {type(mod).__name__}")
        scale, zero_point, qdtype = activation_qparams(mod)
        q = cls(scale, zero_point, qdtype)
        q._copy_settings(mod)
        return q

    def extra_repr(self):
        return f"scale={float(self.scale.item()):.6g}, zero_point={int(self.zero_point.item())}, qdtype={self.qdtype.name}"


class Sigmoid(_QuantizedActivation):
    _float_type = nn.Sigmoid

    def _activation(self, x):
        return F.sigmoid(x)


class Tanh(_QuantizedActivation):
    _float_type = nn.Tanh

    def _activation(self, x):
        return F.tanh(x)


class Hardsigmoid(_QuantizedActivation):
    _float_type = nn.Hardsigmoid

    def _activation(self, x):
        return F.hardsigmoid(x)


class Hardswish(_QuantizedActivation):
    _float_type = nn.Hardswish

    def _activation(self, x):
        return F.hardswish(x)


class ELU(_QuantizedActivation):
    _float_type = nn.ELU

    def __init__(self, scale, zero_point, qdtype=quint8):
        super().__init__(scale, zero_point, qdtype)
        self.alpha = 1.0

    def _copy_settings(self, mod):
        self.alpha = float(mod.alpha)

    def _activation(self, x):
        return F.elu(x, self.alpha)


class LeakyReLU(_QuantizedActivation):
    _float_type = nn.LeakyReLU

    def __init__(self, scale, zero_point, qdtype=quint8):
        super().__init__(scale, zero_point, qdtype)
        self.negative_slope = 0.01

    def _copy_settings(self, mod):
        self.negative_slope = float(mod.negative_slope)

    def _activation(self, x):
        return F.leaky_relu(x, self.negative_slope)
