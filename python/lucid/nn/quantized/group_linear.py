"""QuantizedLinearMLX: weight-only, group-wise quantized Linear.

Upstream runs this on Apple's MLX quantized_matmul. The scheme is kept: the weight is cut
into groups of group_size consecutive input features per output row, each group stored as
unsigned bits-bit codes with its own scale and offset (w ~ code * scale + offset);
activations stay float (W8A16 / W4A16). On lucid the forward dequantizes the weight and
runs an ordinary float matmul, on CPU or CUDA. Codes are kept one per uint8 element,
not bit-packed into uint32 words as MLX does.
"""

import lucid
import lucid.nn as nn
import lucid.nn.functional as F

from ._utils import check_positive_int

__all__ = ["QuantizedLinearMLX"]


class QuantizedLinearMLX(nn.Module):
    def __init__(self, in_features, out_features, bias=True, bits=8, group_size=64, relu=False):
        super().__init__()
        name = "QuantizedLinearMLX"
        self.in_features = check_positive_int(in_features, "in_features", name)
        self.out_features = check_positive_int(out_features, "out_features", name)
        if bits not in (2, 3, 4, 6, 8):
            raise ValueError(f"{name}: bits must be one of 2, 3, 4, 6, 8, got {bits!r}")
        check_positive_int(group_size, "group_size", name)
        if in_features % group_size:
            raise ValueError(f"{name}: in_features ({in_features}) must be a multiple of group_size "
                             f"({group_size})")
        self.bits, self.group_size, self.relu = bits, group_size, bool(relu)
        groups = in_features // group_size
        self.register_buffer("packed_weight", lucid.zeros((out_features, in_features), dtype=lucid.uint8))
        self.register_buffer("scales", lucid.ones((out_features, groups)))
        self.register_buffer("biases", lucid.zeros((out_features, groups)))
        if bias:
            self.register_buffer("bias", lucid.zeros(out_features))
        else:
            self.bias = None

    def _grouped(self, t):
        return t.reshape(self.out_features, self.in_features // self.group_size, self.group_size)

    def weight(self):
        codes = self._grouped(self.packed_weight.to(lucid.float32))
        w = codes * self.scales.unsqueeze(-1) + self.biases.unsqueeze(-1)
        return w.reshape(self.out_features, self.in_features)

    def forward(self, input):
        if input.shape[-1] != self.in_features:
            raise ValueError(f"QuantizedLinearMLX: expected input with last dimension {self.in_features}, "
                             f"got shape {tuple(input.shape)}")
        bias = None if self.bias is None else self.bias.to(input.dtype)
        y = F.linear(input, self.weight().to(input.dtype), bias)
        return F.relu(y) if self.relu else y

    @classmethod
    def from_float(cls, mod, bits=8, group_size=64, relu=False):
        if not isinstance(mod, nn.Linear):
            raise TypeError(f"QuantizedLinearMLX.from_float expects nn.Linear, got {type(mod).__name__}")
        q = cls(mod.in_features, mod.out_features, bias=mod.bias is not None, bits=bits,
                group_size=group_size, relu=relu)
        w = q._grouped(mod.weight.detach().to(lucid.float32))
        lo, hi = lucid.amin(w, dim=-1, keepdim=True), lucid.amax(w, dim=-1, keepdim=True)
        levels = 2 ** bits - 1
        scale = lucid.clamp((hi - lo) / levels, min=1e-8)
        codes = lucid.clip(lucid.round((w - lo) / scale), 0, levels)
        q.packed_weight = codes.reshape(mod.out_features, mod.in_features).to(lucid.uint8)
        q.scales, q.biases = scale.squeeze(-1), lo.squeeze(-1)
        if mod.bias is not None:
            q.bias = mod.bias.detach().to(lucid.float32).clone()
        return q

    def extra_repr(self):
        return (f"in_features={self.in_features}, out_features={self.out_features}, bits={self.bits}, "
                f"group_size={self.group_size}, relu={self.relu}")
