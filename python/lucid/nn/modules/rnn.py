"""RNN, LSTM, GRU and their cells, as torch.nn: the same parameter names
(weight_ih_l0, weight_hh_l1_reverse, weight_hr_l0 ...), shapes and initialisation,
so state dicts transfer.

How a layer runs: the input projection of every time step is one gemm
(x @ W_ih^T + b over [T * B, F]); each step is then one addmm (h @ W_hh^T added to
that step's projection) and one fused engine op for the cell's pointwise part
(_C._lstm_cell_fused / _C._gru_cell_fused: gates -> states and their backward), so a
step records three nodes instead of a dozen. An LSTM (no projection) or GRU direction
without packed-sequence masks is one engine node (_C._lstm_layer / _gru_layer: the loop in
C++, and a backward that forms d W_hh as one gemm over all steps). Packed sequences run padded with a
per-step mask that freezes the state of finished sequences (so h_n is each
sequence's last state and the reverse direction starts at each sequence's end)."""

import math
import warnings

from ... import _C
from ...amp._autocast import run_by_policy as _run_by_policy  # Note [Autocast]
from .. import init
from ..parameter import Parameter
from ..utils.rnn import PackedSequence, _padded_from_packed
from .module import Module

__all__ = ["RNNBase", "RNN", "LSTM", "GRU", "RNNCellBase", "RNNCell", "LSTMCell", "GRUCell"]

_GATES = {"LSTM": 4, "GRU": 3, "RNN_TANH": 1, "RNN_RELU": 1}
_POLICY_NAMES = {"LSTM": "lstm", "GRU": "gru", "RNN_TANH": "rnn_tanh", "RNN_RELU": "rnn_relu"}


def _L():
    import lucid
    return lucid


class RNNBase(Module):
    def __init__(self, mode, input_size, hidden_size, num_layers=1, bias=True, batch_first=False, dropout=0.0,
                 bidirectional=False, proj_size=0, device=None, dtype=None):
        super().__init__()
        from ..._creation import empty
        name = {"RNN_TANH": "RNN", "RNN_RELU": "RNN"}.get(mode, mode)
        if not isinstance(dropout, (int, float)) or isinstance(dropout, bool) or not 0 <= dropout <= 1:
            raise ValueError("dropout should be a number in range [0, 1] representing the probability of an "
                             f"element being zeroed, got {dropout}")
        if not isinstance(hidden_size, int) or hidden_size <= 0:
            raise ValueError(f"{name}: hidden_size must be a positive integer, got {hidden_size}")
        if not isinstance(num_layers, int) or num_layers <= 0:
            raise ValueError(f"{name}: num_layers must be a positive integer, got {num_layers}")
        if proj_size < 0:
            raise ValueError("proj_size should be a positive integer or zero to disable projections")
        if proj_size >= hidden_size and proj_size:
            raise ValueError(f"proj_size ({proj_size}) has to be smaller than hidden_size ({hidden_size})")
        if proj_size and mode != "LSTM":
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        if dropout > 0 and num_layers == 1:
            warnings.warn("dropout option adds dropout after all but last recurrent layer, so non-zero dropout "
                          f"expects num_layers greater than 1, but got dropout={dropout} and num_layers=1")
        self.mode, self.input_size, self.hidden_size = mode, input_size, hidden_size
        self.num_layers, self.bias, self.batch_first = num_layers, bias, batch_first
        self.dropout, self.bidirectional, self.proj_size = float(dropout), bidirectional, proj_size
        gate_size = _GATES[mode] * hidden_size
        dirs = 2 if bidirectional else 1
        real_hidden = proj_size if proj_size > 0 else hidden_size
        self._flat_weights_names = []
        kw = dict(device=device, dtype=dtype)
        for layer in range(num_layers):
            for d in range(dirs):
                in_size = input_size if layer == 0 else real_hidden * dirs
                sfx = "_reverse" if d == 1 else ""
                params = [(f"weight_ih_l{layer}{sfx}", (gate_size, in_size)),
                          (f"weight_hh_l{layer}{sfx}", (gate_size, real_hidden))]
                if bias:
                    params += [(f"bias_ih_l{layer}{sfx}", (gate_size,)), (f"bias_hh_l{layer}{sfx}", (gate_size,))]
                if proj_size > 0:
                    params.append((f"weight_hr_l{layer}{sfx}", (proj_size, hidden_size)))
                for pname, shape in params:
                    setattr(self, pname, Parameter(empty(*shape, **kw)))
                    self._flat_weights_names.append(pname)
        self.reset_parameters()

    def reset_parameters(self):
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for w in self.parameters():
            init.uniform_(w, -stdv, stdv)

    @property
    def _flat_weights(self):
        return [getattr(self, n) for n in self._flat_weights_names]

    @property
    def all_weights(self):
        dirs = 2 if self.bidirectional else 1
        per = len(self._flat_weights_names) // (self.num_layers * dirs)
        w = self._flat_weights
        return [w[i * per:(i + 1) * per] for i in range(self.num_layers * dirs)]

    def flatten_parameters(self):
        pass

    def extra_repr(self):
        s = f"{self.input_size}, {self.hidden_size}"
        if self.proj_size != 0:
            s += f", proj_size={self.proj_size}"
        if self.num_layers != 1:
            s += f", num_layers={self.num_layers}"
        if self.bias is not True:
            s += f", bias={self.bias}"
        if self.batch_first is not False:
            s += f", batch_first={self.batch_first}"
        if self.dropout != 0:
            s += f", dropout={self.dropout}"
        if self.bidirectional is not False:
            s += f", bidirectional={self.bidirectional}"
        return s

    # ---- forward ---------------------------------------------------------------------------------
    def _name(self):
        return type(self).__name__

    def forward(self, input, hx=None):
        L = _L()
        is_lstm = self.mode == "LSTM"
        dirs = 2 if self.bidirectional else 1
        real_hidden = self.proj_size if self.proj_size > 0 else self.hidden_size
        packed = isinstance(input, PackedSequence)
        sorted_indices = unsorted_indices = None
        lengths = None
        if packed:
            data, batch_sizes, sorted_indices, unsorted_indices = input
            x, lengths = _padded_from_packed(data, batch_sizes, 0.0, None)
            batched = True
            if data.ndim != 2:
                raise ValueError(f"{self._name()}: packed input data must be 2-D, got {data.ndim}-D")
        else:
            if input.ndim not in (2, 3):
                raise ValueError(f"{self._name()}: Expected input to be 2D or 3D, got {input.ndim}D instead")
            batched = input.ndim == 3
            x = input if batched else input.unsqueeze(1)
            if batched and self.batch_first:
                x = x.transpose(0, 1)
        if x.shape[-1] != self.input_size:
            raise RuntimeError(f"input.size(-1) must be equal to input_size. Expected {self.input_size}, "
                               f"got {x.shape[-1]}")
        T, B = x.shape[0], x.shape[1]
        if hx is None:
            h0 = L.zeros(self.num_layers * dirs, B, real_hidden, dtype=x.dtype, device=x.device)
            c0 = (L.zeros(self.num_layers * dirs, B, self.hidden_size, dtype=x.dtype, device=x.device) if is_lstm
                  else None)
        else:
            if is_lstm:
                if not isinstance(hx, (tuple, list)) or len(hx) != 2:
                    raise RuntimeError("LSTM: hx must be a tuple (h_0, c_0)")
                h0, c0 = hx
            else:
                h0, c0 = hx, None
            if not batched:
                for t, what in ((h0, "hx"), (c0, "cx")):
                    if t is not None and t.ndim != 2:
                        raise RuntimeError(f"For unbatched 2-D input, {what} should also be 2-D but got "
                                           f"{t.ndim}-D tensor")
                h0 = h0.unsqueeze(1)
                c0 = c0.unsqueeze(1) if c0 is not None else None
            else:
                for t, what in ((h0, "hx"), (c0, "cx")):
                    if t is not None and t.ndim != 3:
                        raise RuntimeError(f"For batched 3-D input, {what} should also be 3-D but got "
                                           f"{t.ndim}-D tensor")
            if sorted_indices is not None:
                h0 = h0.index_select(1, sorted_indices)
                c0 = c0.index_select(1, sorted_indices) if c0 is not None else None
            expect = (self.num_layers * dirs, B, real_hidden)
            if tuple(h0.shape) != expect:
                raise RuntimeError(f"Expected hidden size {expect}, got {list(h0.shape)}")
            if c0 is not None and tuple(c0.shape) != (self.num_layers * dirs, B, self.hidden_size):
                raise RuntimeError(f"Expected hidden[1] size {(self.num_layers * dirs, B, self.hidden_size)}, "
                                   f"got {list(c0.shape)}")
        masks = None
        if lengths is not None and min(lengths) < T:
            ln = L.tensor(lengths, dtype=L.int64, device=x.device)
            masks = [(ln > t).unsqueeze(1) for t in range(T)]
        # Under autocast the layers run by the module's policy (torch's: lowered, or float32
        # for the CPU's GRU), all their tensors cast alike, with autocast off inside.
        output, h_n, c_n = _run_by_policy(_POLICY_NAMES[self.mode], self._run_layers, x, h0, c0, masks,
                                          *self._flat_weights)
        if packed:
            from ..utils.rnn import _pack_index
            bs = [int(v) for v in batch_sizes.tolist()]
            data_out = output.reshape(T * B, output.shape[2]).index_select(
                0, L.tensor(_pack_index(bs, B), dtype=L.int64, device=output.device))
            output = PackedSequence(data_out, batch_sizes, sorted_indices, unsorted_indices)
            if unsorted_indices is not None:
                h_n = h_n.index_select(1, unsorted_indices)
                c_n = c_n.index_select(1, unsorted_indices) if c_n is not None else None
        else:
            if not batched:
                output = output.squeeze(1)
                h_n = h_n.squeeze(1)
                c_n = c_n.squeeze(1) if c_n is not None else None
            elif self.batch_first:
                output = output.transpose(0, 1)
        return output, ((h_n, c_n) if is_lstm else h_n)

    def _run_layers(self, x, h0, c0, masks, *weights):
        """Every layer and direction over x (T, B, F): (output, h_n, c_n)."""
        L = _L()
        is_lstm = self.mode == "LSTM"
        dirs = 2 if self.bidirectional else 1
        h_n, c_n = [], []
        layer_in = x
        per = len(weights) // (self.num_layers * dirs)
        for layer in range(self.num_layers):
            outs = []
            for d in range(dirs):
                idx = layer * dirs + d
                w = weights[idx * per:(idx + 1) * per]
                out, h, c = self._run_direction(layer_in, w, h0[idx], c0[idx] if c0 is not None else None,
                                                d == 1, masks)
                outs.append(out)
                h_n.append(h)
                if c is not None:
                    c_n.append(c)
            layer_in = outs[0] if dirs == 1 else L.cat(outs, dim=2)
            if self.dropout > 0 and self.training and layer < self.num_layers - 1:
                from .. import functional as F
                layer_in = F.dropout(layer_in, self.dropout, True)
        output = layer_in
        h_n = L.stack(h_n)
        c_n = L.stack(c_n) if is_lstm else None
        return output, h_n, c_n

    def _run_direction(self, x, w, h, c, reverse, masks):
        """One layer, one direction over x (T, B, F): (outputs (T, B, H), h_T, c_T)."""
        L = _L()
        from .. import functional as F
        w_ih, w_hh = w[0], w[1]
        b_ih = w[2] if self.bias else None
        b_hh = w[3] if self.bias else None
        w_hr = w[-1] if self.proj_size > 0 else None
        T, B = x.shape[0], x.shape[1]
        mode = self.mode
        # biases that are simply added go into the one big projection
        b_in = b_ih
        if self.bias and mode != "GRU":
            b_in = b_ih + b_hh
        gx = F.linear(x.reshape(T * B, x.shape[2]), w_ih, b_in).reshape(T, B, w_ih.shape[0])
        if (mode == "LSTM" and w_hr is None and masks is None and T > 0 and _same_float(gx, h, c, w_hh)):
            # the whole direction as one engine node (ops/seq_lstm_layer.cpp)
            return _C._lstm_layer(gx, h, c, w_hh, reverse)
        if mode == "GRU" and masks is None and T > 0 and _same_float(gx, h, w_hh):
            out, h_n = _C._gru_layer(gx, h, w_hh, b_hh, reverse)
            return out, h_n, None
        steps = gx.unbind(0)
        w_hh_t = w_hh.t()
        w_hr_t = w_hr.t() if w_hr is not None else None
        outs = [None] * T
        order = range(T - 1, -1, -1) if reverse else range(T)
        for t in order:
            if mode == "LSTM":
                gates = L.addmm(steps[t], h, w_hh_t)
                h_new, c_new = _C._lstm_cell_fused(gates, c)
                if w_hr_t is not None:
                    h_new = h_new.mm(w_hr_t)
            elif mode == "GRU":
                gh = L.addmm(b_hh, h, w_hh_t) if b_hh is not None else h.mm(w_hh_t)
                h_new = _C._gru_cell_fused(steps[t], gh, h)
                c_new = None
            else:
                pre = L.addmm(steps[t], h, w_hh_t)
                h_new = pre.tanh() if mode == "RNN_TANH" else pre.relu()
                c_new = None
            if masks is not None:
                m = masks[t]
                outs[t] = h_new * m
                h_new = L.where(m, h_new, h)
                if c_new is not None:
                    c_new = L.where(m, c_new, c)
            else:
                outs[t] = h_new
            h, c = h_new, c_new
        return L.stack(outs), h, c


def _same_float(*ts):
    d = ts[0].dtype
    return str(d) in ("lucid.float32", "lucid.float64") and all(t.dtype == d for t in ts)


class RNN(RNNBase):
    def __init__(self, *args, **kwargs):
        nonlinearity = kwargs.pop("nonlinearity", "tanh")
        if len(args) > 3:  # (input_size, hidden_size, num_layers, nonlinearity, ...)
            nonlinearity = args[3]
            args = args[:3] + args[4:]
        if nonlinearity == "tanh":
            mode = "RNN_TANH"
        elif nonlinearity == "relu":
            mode = "RNN_RELU"
        else:
            raise ValueError(f"Unknown nonlinearity '{nonlinearity}'. Select from 'tanh' or 'relu'.")
        self.nonlinearity = nonlinearity
        super().__init__(mode, *args, **kwargs)
        self.nonlinearity = nonlinearity


class LSTM(RNNBase):
    def __init__(self, *args, **kwargs):
        super().__init__("LSTM", *args, **kwargs)


class GRU(RNNBase):
    def __init__(self, *args, **kwargs):
        if "proj_size" in kwargs:
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        super().__init__("GRU", *args, **kwargs)


# ---- cells ----------------------------------------------------------------------------------------
class RNNCellBase(Module):
    def __init__(self, input_size, hidden_size, bias, num_chunks, device=None, dtype=None):
        super().__init__()
        from ..._creation import empty
        self.input_size, self.hidden_size, self.bias = input_size, hidden_size, bias
        kw = dict(device=device, dtype=dtype)
        self.weight_ih = Parameter(empty(num_chunks * hidden_size, input_size, **kw))
        self.weight_hh = Parameter(empty(num_chunks * hidden_size, hidden_size, **kw))
        if bias:
            self.bias_ih = Parameter(empty(num_chunks * hidden_size, **kw))
            self.bias_hh = Parameter(empty(num_chunks * hidden_size, **kw))
        else:
            self.register_parameter("bias_ih", None)
            self.register_parameter("bias_hh", None)
        self.reset_parameters()

    def reset_parameters(self):
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for w in self.parameters():
            init.uniform_(w, -stdv, stdv)

    def extra_repr(self):
        s = f"{self.input_size}, {self.hidden_size}"
        if self.bias is not True:
            s += f", bias={self.bias}"
        if getattr(self, "nonlinearity", "tanh") != "tanh":
            s += f", nonlinearity={self.nonlinearity}"
        return s

    def _prepare(self, input, hx, n_states):
        L = _L()
        name = type(self).__name__
        if input.ndim not in (1, 2):
            raise ValueError(f"{name}: Expected input to be 1D or 2D, got {input.ndim}D instead")
        if input.shape[-1] != self.input_size:
            raise RuntimeError(f"input has inconsistent input_size: got {input.shape[-1]} expected {self.input_size}")
        batched = input.ndim == 2
        x = input if batched else input.unsqueeze(0)
        if hx is None:
            hx = [L.zeros(x.shape[0], self.hidden_size, dtype=x.dtype, device=x.device) for _ in range(n_states)]
        else:
            hx = list(hx) if n_states == 2 else [hx]
            for t in hx:
                if t.ndim != input.ndim:
                    raise RuntimeError(f"{name}: Expected hidden to be {input.ndim}D, got {t.ndim}D instead")
            if not batched:
                hx = [t.unsqueeze(0) for t in hx]
            for t in hx:
                if tuple(t.shape) != (x.shape[0], self.hidden_size):
                    raise RuntimeError(f"hidden{'' if n_states == 1 else '[0]'} has inconsistent hidden_size or "
                                       f"batch: got {list(t.shape)}, expected [{x.shape[0]}, {self.hidden_size}]")
        return x, hx, batched

    def _run(self, policy, *tensors):
        """self._step(*tensors, weights and biases), under autocast by op `policy`'s rule
        (torch's: lowered on the GPU; on the CPU lowered for the plain RNN cells and float32
        for LSTMCell / GRUCell, whose float32 state promotes the lowered products back)."""
        weights = (self.weight_ih, self.weight_hh, self.bias_ih, self.bias_hh)
        return _run_by_policy(policy, self._step, *tensors, *weights)

    @staticmethod
    def _projections(x, h, w_ih, w_hh, b_ih, b_hh):
        from .. import functional as F
        return F.linear(x, w_ih, b_ih), F.linear(h, w_hh, b_hh)


class RNNCell(RNNCellBase):
    def __init__(self, input_size, hidden_size, bias=True, nonlinearity="tanh", device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, 1, device, dtype)
        if nonlinearity not in ("tanh", "relu"):
            raise ValueError(f"Unknown nonlinearity: {nonlinearity}")
        self.nonlinearity = nonlinearity

    def forward(self, input, hx=None):
        x, (h,), batched = self._prepare(input, hx, 1)
        out = self._run(f"rnn_{self.nonlinearity}_cell", x, h)
        return out if batched else out.squeeze(0)

    def _step(self, x, h, *weights):
        gx, gh = self._projections(x, h, *weights)
        return (gx + gh).tanh() if self.nonlinearity == "tanh" else (gx + gh).relu()


class LSTMCell(RNNCellBase):
    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, 4, device, dtype)

    def forward(self, input, hx=None):
        x, (h, c), batched = self._prepare(input, hx, 2)
        h, c = self._run("lstm_cell", x, h, c)
        return (h, c) if batched else (h.squeeze(0), c.squeeze(0))

    def _step(self, x, h, c, *weights):
        gx, gh = self._projections(x, h, *weights)
        return _C._lstm_cell_fused(gx + gh, c)


class GRUCell(RNNCellBase):
    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, 3, device, dtype)

    def forward(self, input, hx=None):
        x, (h,), batched = self._prepare(input, hx, 1)
        out = self._run("gru_cell", x, h)
        return out if batched else out.squeeze(0)

    def _step(self, x, h, *weights):
        gx, gh = self._projections(x, h, *weights)
        return _C._gru_cell_fused(gx, gh, h)
