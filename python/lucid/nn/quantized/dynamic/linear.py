"""Dynamically quantized Linear: int8 per-output-channel weight; each forward measures the
input's range, rounds the input onto a per-tensor affine quint8 grid, and runs the float
matmul; the output is left in float (as torch's dynamic Linear returns float)."""

import lucid
import lucid.nn as nn
import lucid.nn.functional as F
from lucid.quantization._functional import dequantize, fake_quantize, quantize
from lucid.quantization._qparams import calculate_qparams
from lucid.quantization._qscheme import QDtype, per_channel_symmetric, per_tensor_affine, qint8, quint8

from .._utils import check_positive_int

__all__ = ["Linear"]


class Linear(nn.Module):
    def __init__(self, in_features, out_features, bias=True):
        super().__init__()
        self.in_features = check_positive_int(in_features, "in_features", "dynamic Linear")
        self.out_features = check_positive_int(out_features, "out_features", "dynamic Linear")
        self.weight_ch_axis = 0
        self.act_qdtype = quint8
        self.register_buffer("weight_int8", lucid.zeros((out_features, in_features), dtype=lucid.int8))
        self.register_buffer("weight_scale", lucid.ones(out_features))
        self.register_buffer("weight_zero_point", lucid.zeros(out_features))
        if bias:
            self.register_buffer("bias", lucid.zeros(out_features))
        else:
            self.bias = None

    def weight(self):
        return dequantize(self.weight_int8, self.weight_scale, self.weight_zero_point, ch_axis=0)

    def forward(self, input):
        if input.shape[-1] != self.in_features:
            raise ValueError(f"dynamic Linear: expected input with last dimension {self.in_features}, "
                             f"got shape {tuple(input.shape)}")
        if not input.dtype.is_floating_point:
            raise TypeError(f"dynamic Linear: input must be floating point, got {input.dtype}")
        x = input.detach()
        scale, zero_point = calculate_qparams(x.min().to(lucid.float32), x.max().to(lucid.float32),
                                              per_tensor_affine, self.act_qdtype)
        x_q = fake_quantize(input, scale, zero_point, self.act_qdtype.quant_min, self.act_qdtype.quant_max)
        bias = None if self.bias is None else self.bias.to(input.dtype)
        return F.linear(x_q, self.weight().to(input.dtype), bias)

    @classmethod
    def from_float(cls, mod, dtype=qint8):
        from lucid.quantization.observer import PerChannelMinMaxObserver
        if not isinstance(mod, nn.Linear):
            raise TypeError(f"dynamic Linear.from_float expects nn.Linear, got {type(mod).__name__}")
        if not isinstance(dtype, QDtype) or not dtype.signed or dtype.bits > 8:
            raise ValueError(f"dynamic Linear: weight dtype must be qint8 or qint4, got {dtype!r}")
        q = cls(mod.in_features, mod.out_features, bias=mod.bias is not None)
        observer = PerChannelMinMaxObserver(ch_axis=0, qscheme=per_channel_symmetric, qdtype=dtype)
        weight = mod.weight.detach()
        observer(weight)
        scale, zero_point = observer.calculate_qparams()
        q.weight_int8 = quantize(weight, scale, zero_point, dtype, ch_axis=0)
        q.weight_scale, q.weight_zero_point = scale, zero_point
        if mod.bias is not None:
            q.bias = mod.bias.detach().clone()
        return q

    def extra_repr(self):
        return f"in_features={self.in_features}, out_features={self.out_features}, dynamic=True"
