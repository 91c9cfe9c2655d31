"""Dynamically quantized LSTM: every weight_ih_l* / weight_hh_l* is stored as int8 with one
scale per row; biases stay float. The float nn.LSTM it came from (the "shell") does the
recurrence: each forward loads the dequantized weights into it. The shell is kept out of
the module tree so its float weights never reach state_dict."""

import lucid.nn as nn
from lucid.quantization._functional import dequantize, quantize
from lucid.quantization._qscheme import QDtype, per_channel_symmetric, qint8

__all__ = ["LSTM"]


class LSTM(nn.Module):
    def __init__(self, shell):
        super().__init__()
        if type(shell) is not nn.LSTM:
            raise TypeError(f"dynamic LSTM wraps an nn.LSTM, got {type(shell).__name__}")
        object.__setattr__(self, "_shell", shell)
        names = [n for n, _ in shell.named_parameters()]
        self._weight_names = [n for n in names if n.startswith("weight")]
        self._bias_names = [n for n in names if n.startswith("bias")]

    def _load_shell(self):
        shell = object.__getattribute__(self, "_shell")
        for name in self._weight_names:
            weight = dequantize(getattr(self, name + "_int8"), getattr(self, name + "_scale"), 0.0, ch_axis=0)
            shell._parameters[name] = nn.Parameter(weight, requires_grad=False)
        for name in self._bias_names:
            shell._parameters[name] = nn.Parameter(getattr(self, name), requires_grad=False)
        if hasattr(shell, "flatten_parameters"):
            shell.flatten_parameters()
        return shell

    def forward(self, input, hx=None):
        shell = self._load_shell()
        shell.train(False)
        return shell(input, hx)

    @classmethod
    def from_float(cls, mod, dtype=qint8):
        from lucid.quantization.observer import PerChannelMinMaxObserver
        if not isinstance(dtype, QDtype) or not dtype.signed or dtype.bits > 8:
            raise ValueError(f"dynamic LSTM: weight dtype must be qint8 or qint4, got {dtype!r}")
        if type(mod) is not nn.LSTM:
            raise TypeError(f"dynamic LSTM.from_float expects nn.LSTM, got {type(mod).__name__}")
        if getattr(mod, "proj_size", 0):
            raise ValueError("dynamic LSTM: proj_size > 0 is not supported")
        import copy
        q = cls(copy.deepcopy(mod))  # its own shell: forward overwrites the shell's weights
        for name, param in mod.named_parameters():
            value = param.detach()
            if name.startswith("weight"):
                observer = PerChannelMinMaxObserver(ch_axis=0, qscheme=per_channel_symmetric, qdtype=dtype)
                observer(value)
                scale, zero_point = observer.calculate_qparams()
                q.register_buffer(name + "_int8", quantize(value, scale, zero_point, dtype, ch_axis=0))
                q.register_buffer(name + "_scale", scale)
            else:
                q.register_buffer(name, value.clone())
        return q

    def extra_repr(self):
        shell = object.__getattribute__(self, "_shell")
        return f"{shell.input_size}, {shell.hidden_size}, num_layers={shell.num_layers}, dynamic=True"
