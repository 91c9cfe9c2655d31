"""QAT Linear and fused Linear+ReLU."""

import lucid.nn as nn
import lucid.nn.functional as F

from ._common import adopt_parameters, attach_fake_quants, float_source, require_qconfig

__all__ = ["Linear", "LinearReLU"]


class Linear(nn.Linear):
    """nn.Linear with a fake-quantized weight and a FakeQuantize on the output."""

    _relu = False

    def __init__(self, in_features, out_features, bias=True, qconfig=None, device=None, dtype=None):
        require_qconfig(qconfig, type(self).__name__)
        super().__init__(in_features, out_features, bias=bias, device=device, dtype=dtype)
        attach_fake_quants(self, qconfig)

    def forward(self, input):
        y = F.linear(input, self.weight_fake_quant(self.weight), self.bias)
        if self._relu:
            y = F.relu(y)
        return self.activation_post_process(y)

    @classmethod
    def from_float(cls, mod):
        import lucid.nn.intrinsic as nni
        fused = nni.LinearReLU if cls._relu else None
        source, _ = float_source(mod, nn.Linear, fused, cls.__name__)
        qconfig = getattr(mod, "qconfig", None) or getattr(source, "qconfig", None)
        qat = cls(source.in_features, source.out_features, bias=source.bias is not None,
                  qconfig=require_qconfig(qconfig, f"{cls.__name__}.from_float (mod.qconfig)"),
                  device=source.weight.device, dtype=source.weight.dtype)
        adopt_parameters(qat, source)
        return qat

    def to_float(self):
        """The plain float layer (nn.Linear, or nn.intrinsic.LinearReLU when fused)."""
        import lucid.nn.intrinsic as nni
        linear = nn.Linear(self.in_features, self.out_features, bias=self.bias is not None,
                           device=self.weight.device, dtype=self.weight.dtype)
        linear.weight, linear.bias = self.weight, self.bias
        return nni.LinearReLU(linear, nn.ReLU()) if self._relu else linear


class LinearReLU(Linear):
    """QAT Linear followed by ReLU before the output fake-quant."""

    _relu = True
