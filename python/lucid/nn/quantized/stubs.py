"""Boundaries of the quantized region.

QuantStub / DeQuantStub mark, in a float model, where quantization starts and ends.
prepare observes what enters a QuantStub; prepare_qat gives it a FakeQuantize; convert
turns it into Quantize, which puts incoming floats on the calibrated grid. As upstream,
activations stay float tensors carrying quantized values, so DeQuantize is the identity.
"""

import lucid
import lucid.nn as nn
from lucid.quantization._fake_quantize import FakeQuantize
from lucid.quantization._functional import fake_quantize
from lucid.quantization._qscheme import check_qdtype, quint8

__all__ = ["QuantStub", "DeQuantStub", "Quantize", "DeQuantize", "QuantWrapper"]


class QuantStub(nn.Module):
    def __init__(self, qconfig=None):
        super().__init__()
        if qconfig is not None:
            from lucid.quantization.qconfig import check_qconfig
            self.qconfig = check_qconfig(qconfig, "QuantStub")

    def forward(self, x):
        fake_quant = getattr(self, "activation_post_process", None)
        if isinstance(fake_quant, FakeQuantize) and x.dtype.is_floating_point:
            return fake_quant(x)
        return x  # a plain observer is fed by prepare()'s forward hook instead


class DeQuantStub(nn.Module):
    def __init__(self, qconfig=None):
        super().__init__()
        if qconfig is not None:
            from lucid.quantization.qconfig import check_qconfig
            self.qconfig = check_qconfig(qconfig, "DeQuantStub")

    def forward(self, x):
        return x


class Quantize(nn.Module):
    """Puts floating-point input on the (scale, zero_point) grid of qdtype; integer input
    (token ids) passes through."""

    def __init__(self, scale, zero_point, qdtype=quint8):
        super().__init__()
        self.qdtype = check_qdtype(qdtype, "Quantize")
        self.register_buffer("scale", lucid.as_tensor(scale, dtype=lucid.float32).reshape(()))
        self.register_buffer("zero_point", lucid.as_tensor(zero_point, dtype=lucid.float32).reshape(()))

    def forward(self, x):
        if not x.dtype.is_floating_point:
            return x
        return fake_quantize(x, self.scale, self.zero_point, self.qdtype.quant_min, self.qdtype.quant_max)

    @classmethod
    def from_float(cls, mod):
        from ._utils import activation_qparams
        scale, zero_point, qdtype = activation_qparams(mod)
        return cls(scale, zero_point, qdtype)

    def extra_repr(self):
        return f"scale={float(self.scale.item()):.6g}, zero_point={int(self.zero_point.item())}, qdtype={self.qdtype.name}"


class DeQuantize(nn.Module):
    def forward(self, x):
        return x

    @classmethod
    def from_float(cls, mod):
        return cls()


class QuantWrapper(nn.Module):
    """module between a QuantStub and a DeQuantStub, for models written without stubs."""

    def __init__(self, module):
        super().__init__()
        if not isinstance(module, nn.Module):
            raise TypeError(f"QuantWrapper wraps an nn.Module, got {type(module).__name__}")
        qconfig = getattr(module, "qconfig", None)
        self.add_module("quant", QuantStub(qconfig))
        self.add_module("dequant", DeQuantStub(qconfig))
        self.add_module("module", module)
        if qconfig is not None:
            self.qconfig = qconfig

    def forward(self, *args, **kwargs):
        args = tuple(self.quant(a) if isinstance(a, lucid.Tensor) else a for a in args)
        return self.dequant(self.module(*args, **kwargs))
