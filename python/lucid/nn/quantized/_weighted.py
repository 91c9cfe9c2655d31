"""Base of the quantized layers that hold an integer weight.

Sidecar representation, as upstream: buffers weight_int8 (integer codes), weight_scale /
weight_zero_point (per channel along weight_ch_axis), a float bias, and the output scale /
zero_point. forward dequantizes the weight, runs the float op, and fake-quantizes the
output onto the calibrated activation grid, so results carry int8 numerics while the
arithmetic stays on ordinary float kernels (CPU and GPU alike).
"""

import lucid
import lucid.nn as nn
from lucid.quantization._functional import dequantize, fake_quantize
from lucid.quantization._qscheme import quint8

from ._utils import activation_qparams, quantize_weight


class QuantizedWeighted(nn.Module):
    _relu = False

    def _init_buffers(self, weight_shape, channels, bias_size, weight_ch_axis=0):
        self.weight_ch_axis = weight_ch_axis
        self.out_qdtype = quint8
        self.register_buffer("weight_int8", lucid.zeros(weight_shape, dtype=lucid.int8))
        self.register_buffer("weight_scale", lucid.ones(channels))
        self.register_buffer("weight_zero_point", lucid.zeros(channels))
        if bias_size is None:
            self.bias = None
        else:
            self.register_buffer("bias", lucid.zeros(bias_size))
        self.register_buffer("scale", lucid.tensor(1.0))
        self.register_buffer("zero_point", lucid.tensor(0.0))

    def weight(self):
        """The dequantized float weight."""
        return dequantize(self.weight_int8, self.weight_scale, self.weight_zero_point,
                          ch_axis=self.weight_ch_axis if self.weight_scale.numel() > 1 else None)

    def _float_op(self, x, weight):
        raise NotImplementedError

    def forward(self, input):
        y = self._float_op(input, self.weight())
        if self._relu:
            y = lucid.relu(y)
        return fake_quantize(y, self.scale, self.zero_point, self.out_qdtype.quant_min,
                             self.out_qdtype.quant_max)

    def _load_quantized(self, mod, weight, bias, default_ch_axis=0):
        """Fill the buffers from mod (the prepared / QAT module: it holds the qconfig or
        weight_fake_quant and the activation observer) and its float weight and bias."""
        codes, w_scale, w_zp, ch_axis = quantize_weight(mod, weight, default_ch_axis)
        self.weight_int8 = codes
        self.weight_scale, self.weight_zero_point = w_scale.reshape(-1), w_zp.reshape(-1)
        self.weight_ch_axis = ch_axis if ch_axis is not None else default_ch_axis
        if bias is not None:
            self.bias = bias.detach().clone()
        self.scale, self.zero_point, self.out_qdtype = activation_qparams(mod)

    def _load_from_state_dict(self, state_dict, prefix, *args, **kwargs):
        # A per-tensor weight observer gives one scale instead of one per channel.
        for name in ("weight_scale", "weight_zero_point"):
            saved = state_dict.get(prefix + name)
            if saved is not None and tuple(saved.shape) != tuple(self._buffers[name].shape):
                self._buffers[name] = lucid.empty(tuple(saved.shape), device=self._buffers[name].device)
        super()._load_from_state_dict(state_dict, prefix, *args, **kwargs)
