"""The activation modules (torch.nn.modules.activation), MultiheadAttention included: each
stores its constructor arguments and calls the function of the same name in nn.functional;
extra_repr prints what torch prints."""

from .. import functional as F
from .. import init
from .._functional_seq import multi_head_attention_forward
from ..parameter import Parameter
from .linear import NonDynamicallyQuantizableLinear
from .module import Module

__all__ = ["ReLU", "LeakyReLU", "GELU", "SiLU", "Sigmoid", "Tanh", "Softmax", "LogSoftmax", "MultiheadAttention",
           "ReLU6", "ELU", "SELU", "CELU", "Mish", "Softplus", "Softsign", "Softshrink", "Hardshrink", "Hardtanh",
           "Hardswish", "Hardsigmoid", "Tanhshrink", "Threshold", "LogSigmoid", "Softmin", "Softmax2d", "GLU",
           "PReLU", "RReLU"]


def _activation(name, fn, params, repr_fn=None):
    """A Module class whose __init__ takes `params` [(name, default)] like torch's."""

    def __init__(self, *args, **kwargs):
        Module.__init__(self)
        names = [p for p, _ in params]
        if len(args) > len(names):
            raise TypeError(f"{name}.__init__() takes at most {len(names)} arguments ({len(args)} given)")
        values = dict(params)
        values.update(zip(names, args))
        for k, v in kwargs.items():
            if k not in values:
                raise TypeError(f"{name}.__init__() got an unexpected keyword argument '{k}'")
            values[k] = v
        for k in names:
            setattr(self, k, values[k])

    def forward(self, input):
        kwargs = {p: getattr(self, p) for p, _ in params}
        if "training" in fn.__code__.co_varnames:
            kwargs["training"] = self.training
        return fn(input, **kwargs)

    def extra_repr(self):
        if repr_fn is not None:
            return repr_fn(self)
        parts = [f"{p}={getattr(self, p)}" for p, _ in params if p != "inplace"]
        if getattr(self, "inplace", False):
            parts.append("inplace=True")
        return ", ".join(parts)

    return type(name, (Module,), {"__init__": __init__, "forward": forward, "extra_repr": extra_repr,
                                  "__module__": __name__})


def _inplace_only(self):
    return "inplace=True" if self.inplace else ""


ReLU6 = _activation("ReLU6", F.relu6, [("inplace", False)], _inplace_only)
ELU = _activation("ELU", F.elu, [("alpha", 1.0), ("inplace", False)])
SELU = _activation("SELU", F.selu, [("inplace", False)], _inplace_only)
CELU = _activation("CELU", F.celu, [("alpha", 1.0), ("inplace", False)])
Mish = _activation("Mish", F.mish, [("inplace", False)], _inplace_only)
Softplus = _activation("Softplus", F.softplus, [("beta", 1.0), ("threshold", 20.0)])
Softsign = _activation("Softsign", F.softsign, [])
Softshrink = _activation("Softshrink", F.softshrink, [("lambd", 0.5)], lambda s: str(s.lambd))
Hardshrink = _activation("Hardshrink", F.hardshrink, [("lambd", 0.5)], lambda s: str(s.lambd))
Hardtanh = _activation("Hardtanh", F.hardtanh, [("min_val", -1.0), ("max_val", 1.0), ("inplace", False)])
Hardswish = _activation("Hardswish", F.hardswish, [("inplace", False)], _inplace_only)
Hardsigmoid = _activation("Hardsigmoid", F.hardsigmoid, [("inplace", False)], _inplace_only)
Tanhshrink = _activation("Tanhshrink", F.tanhshrink, [])
Threshold = _activation("Threshold", F.threshold, [("threshold", 0.0), ("value", 0.0), ("inplace", False)])
LogSigmoid = _activation("LogSigmoid", F.logsigmoid, [])
Softmin = _activation("Softmin", F.softmin, [("dim", None)])
GLU = _activation("GLU", F.glu, [("dim", -1)])
RReLU = _activation("RReLU", F.rrelu, [("lower", 1.0 / 8), ("upper", 1.0 / 3), ("inplace", False)])


class Softmax2d(Module):
    """Softmax over the channel dimension of [C, H, W] or [N, C, H, W] input."""

    def forward(self, input):
        if input.dim() not in (3, 4):
            raise ValueError(f"Softmax2d: expected input to be 3D or 4D, got {input.dim()}D instead")
        return F.softmax(input, -3)


class PReLU(Module):
    def __init__(self, num_parameters=1, init=0.25, device=None, dtype=None):
        super().__init__()
        from ..._creation import full
        self.num_parameters = num_parameters
        self.init = init
        self.weight = Parameter(full((num_parameters,), init, device=device, dtype=dtype))

    def forward(self, input):
        return F.prelu(input, self.weight)

    def extra_repr(self):
        return f"num_parameters={self.num_parameters}"


class _Activation(Module):
    _fn = None

    def __init__(self, inplace=False):
        super().__init__()
        self.inplace = inplace

    def forward(self, input):
        return type(self)._fn(input)

    def extra_repr(self):
        return "inplace=True" if self.inplace else ""


class ReLU(_Activation):
    def forward(self, input):
        return F.relu(input, self.inplace)


class SiLU(_Activation):
    def forward(self, input):
        return F.silu(input, self.inplace)


class Sigmoid(Module):
    def forward(self, input):
        return F.sigmoid(input)


class Tanh(Module):
    def forward(self, input):
        return F.tanh(input)


class LeakyReLU(Module):
    def __init__(self, negative_slope=0.01, inplace=False):
        super().__init__()
        self.negative_slope, self.inplace = negative_slope, inplace

    def forward(self, input):
        return F.leaky_relu(input, self.negative_slope, self.inplace)

    def extra_repr(self):
        return f"negative_slope={self.negative_slope}" + (", inplace=True" if self.inplace else "")


class GELU(Module):
    def __init__(self, approximate="none"):
        super().__init__()
        self.approximate = approximate

    def forward(self, input):
        return F.gelu(input, approximate=self.approximate)

    def extra_repr(self):
        return f"approximate={self.approximate!r}"


class Softmax(Module):
    def __init__(self, dim=None):
        super().__init__()
        self.dim = dim

    def forward(self, input):
        return F.softmax(input, self.dim, _stacklevel=5)

    def extra_repr(self):
        return f"dim={self.dim}"


class LogSoftmax(Softmax):
    def forward(self, input):
        return F.log_softmax(input, self.dim, _stacklevel=5)


class MultiheadAttention(Module):
    def __init__(self, embed_dim, num_heads, dropout=0.0, bias=True, add_bias_kv=False, add_zero_attn=False,
                 kdim=None, vdim=None, batch_first=False, device=None, dtype=None):
        if embed_dim <= 0 or num_heads <= 0:
            raise ValueError(f"embed_dim and num_heads must be greater than 0, got embed_dim={embed_dim} and "
                             f"num_heads={num_heads} instead")
        super().__init__()
        from ..._creation import empty
        self.embed_dim = embed_dim
        self.kdim = kdim if kdim is not None else embed_dim
        self.vdim = vdim if vdim is not None else embed_dim
        self._qkv_same_embed_dim = self.kdim == embed_dim and self.vdim == embed_dim
        self.num_heads = num_heads
        self.dropout = dropout
        self.batch_first = batch_first
        self.head_dim = embed_dim // num_heads
        if self.head_dim * num_heads != embed_dim:
            raise AssertionError(f"MultiheadAttention: embed_dim ({embed_dim}) must be divisible by num_heads "
                                 f"({num_heads})")
        kw = dict(device=device, dtype=dtype)
        if not self._qkv_same_embed_dim:
            self.q_proj_weight = Parameter(empty(embed_dim, embed_dim, **kw))
            self.k_proj_weight = Parameter(empty(embed_dim, self.kdim, **kw))
            self.v_proj_weight = Parameter(empty(embed_dim, self.vdim, **kw))
            self.register_parameter("in_proj_weight", None)
        else:
            self.in_proj_weight = Parameter(empty(3 * embed_dim, embed_dim, **kw))
            self.register_parameter("q_proj_weight", None)
            self.register_parameter("k_proj_weight", None)
            self.register_parameter("v_proj_weight", None)
        if bias:
            self.in_proj_bias = Parameter(empty(3 * embed_dim, **kw))
        else:
            self.register_parameter("in_proj_bias", None)
        self.out_proj = NonDynamicallyQuantizableLinear(embed_dim, embed_dim, bias=bias, **kw)
        if add_bias_kv:
            self.bias_k = Parameter(empty(1, 1, embed_dim, **kw))
            self.bias_v = Parameter(empty(1, 1, embed_dim, **kw))
        else:
            self.bias_k = self.bias_v = None
        self.add_zero_attn = add_zero_attn
        self._reset_parameters()

    def _reset_parameters(self):
        if self._qkv_same_embed_dim:
            init.xavier_uniform_(self.in_proj_weight)
        else:
            init.xavier_uniform_(self.q_proj_weight)
            init.xavier_uniform_(self.k_proj_weight)
            init.xavier_uniform_(self.v_proj_weight)
        if self.in_proj_bias is not None:
            init.constant_(self.in_proj_bias, 0.0)
            init.constant_(self.out_proj.bias, 0.0)
        if self.bias_k is not None:
            init.xavier_normal_(self.bias_k)
        if self.bias_v is not None:
            init.xavier_normal_(self.bias_v)

    def forward(self, query, key, value, key_padding_mask=None, need_weights=True, attn_mask=None,
                average_attn_weights=True, is_causal=False):
        batched = query.ndim == 3
        if self.batch_first and batched:
            same_kv = key is value
            same_qk = query is key
            query = query.transpose(0, 1)
            key = query if same_qk else key.transpose(0, 1)
            value = key if same_kv else value.transpose(0, 1)
        out, weights = multi_head_attention_forward(
            query, key, value, self.embed_dim, self.num_heads, self.in_proj_weight, self.in_proj_bias,
            self.bias_k, self.bias_v, self.add_zero_attn, self.dropout, self.out_proj.weight, self.out_proj.bias,
            training=self.training, key_padding_mask=key_padding_mask, need_weights=need_weights,
            attn_mask=attn_mask, use_separate_proj_weight=not self._qkv_same_embed_dim,
            q_proj_weight=self.q_proj_weight, k_proj_weight=self.k_proj_weight, v_proj_weight=self.v_proj_weight,
            average_attn_weights=average_attn_weights, is_causal=is_causal)
        if self.batch_first and batched:
            out = out.transpose(0, 1)
        return out, weights
