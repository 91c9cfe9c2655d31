"""ONNX forms of lucid's native operations (the trace of _graph.py calls them).

emit(g, out, *args) receives the graph, the call's real result and the call's own
arguments, and binds each result tensor to the ONNX value computing it. Dims are made
non-negative against the real shapes. Sizes read from the traced shapes (a reshape's
target, a split's sizes) go through g.sizes(), which computes those that follow a
dynamic axis from the inputs' shapes (Note [Dynamic sizes], lucid/onnx/__init__.py)."""

import numpy as np

from ._graph import UnsupportedOperatorError, numpy_dtype

EMITTERS = {}


def emits(*names):
    def register(fn):
        for n in names:
            EMITTERS[n] = fn
        return fn
    return register


def _dim(d, rank):
    return d + rank if d < 0 else d


def _operand(g, x, like):
    """A tensor's value, or a Python number as a constant of `like`'s dtype."""
    from .. import Tensor

    return g.value(x) if isinstance(x, Tensor) else g.scalar_like(x, like)


# ---- elementwise -------------------------------------------------------------------------------

_UNARY = {"relu": "Relu", "sigmoid": "Sigmoid", "tanh": "Tanh", "exp": "Exp", "log": "Log", "sqrt": "Sqrt",
          "erf": "Erf", "abs": "Abs", "absolute": "Abs", "neg": "Neg", "negative": "Neg", "sin": "Sin", "cos": "Cos",
          "tan": "Tan", "reciprocal": "Reciprocal", "floor": "Floor", "ceil": "Ceil", "sign": "Sign",
          "round": "Round", "logical_not": "Not", "isnan": "IsNaN"}


def _unary(op):
    def emit(g, out, x, *rest, **kw):
        g.bind(out, g.node(op, [g.value(x)])[0])
    return emit


# Each op as lucid's function (_C.exp), as a Tensor method (exp) and in place (exp_: the
# result is the tensor itself, rebound to the new value).
for _name, _op in _UNARY.items():
    for _key in ("_C." + _name, _name, _name + "_"):
        EMITTERS[_key] = _unary(_op)
EMITTERS["__neg__"] = _unary("Neg")
EMITTERS["__invert__"] = _unary("Not")


def _gelu_of(tanh_form):
    """gelu as ONNX's arithmetic (its Gelu op needs opset 20): x/2 (1 + erf(x / sqrt 2)), or
    x/2 (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))."""
    def emit(g, out, x):
        v = g.value(x)
        mul = lambda a, b: g.node("Mul", [a, b])[0]
        c = lambda value: g.scalar_like(value, x)
        if tanh_form:
            cube = mul(mul(v, v), v)
            inner = mul(c(0.7978845608028654), g.node("Add", [v, mul(c(0.044715), cube)])[0])
            s = g.node("Tanh", [inner])[0]
        else:
            s = g.node("Erf", [mul(v, c(0.7071067811865476))])[0]
        g.bind(out, mul(mul(v, c(0.5)), g.node("Add", [c(1.0), s])[0]))
    return emit


EMITTERS["_C._gelu"] = _gelu_of(False)
EMITTERS["_C._gelu_tanh"] = _gelu_of(True)


@emits("_C._silu")
def _silu(g, out, x):
    v = g.value(x)
    g.bind(out, g.node("Mul", [v, g.node("Sigmoid", [v])[0]])[0])


@emits("_C._hardsigmoid")
def _hardsigmoid(g, out, x):
    g.bind(out, g.node("HardSigmoid", [g.value(x)], alpha=1.0 / 6.0, beta=0.5)[0])


@emits("_C._hardswish")
def _hardswish(g, out, x):  # (ONNX's HardSwish needs opset 14)
    v = g.value(x)
    g.bind(out, g.node("Mul", [v, g.node("HardSigmoid", [v], alpha=1.0 / 6.0, beta=0.5)[0]])[0])


@emits("_C._softplus")
def _softplus(g, out, x):  # (ONNX's Softplus is log(exp(x) + 1), with no threshold: the same to rounding)
    g.bind(out, g.node("Softplus", [g.value(x)])[0])


@emits("_C._log_sigmoid")
def _log_sigmoid(g, out, x):  # -softplus(-x)
    v = g.node("Neg", [g.value(x)])[0]
    g.bind(out, g.node("Neg", [g.node("Softplus", [v])[0]])[0])


@emits("_C._mish")
def _mish(g, out, x):  # (ONNX's Mish needs opset 18)
    v = g.value(x)
    g.bind(out, g.node("Mul", [v, g.node("Tanh", [g.node("Softplus", [v])[0]])[0]])[0])


@emits("ne", "not_equal", "__ne__", "_C.ne")
def _ne(g, out, a, b):
    like = _tensor_of(a, b)
    g.bind(out, g.node("Not", [g.node("Equal", [_operand(g, a, like), _operand(g, b, like)])[0]])[0])


@emits("rsqrt", "_C.rsqrt", "rsqrt_")
def _rsqrt(g, out, x):
    g.bind(out, g.node("Reciprocal", [g.node("Sqrt", [g.value(x)])[0]])[0])


@emits("square", "_C.square", "square_")
def _square(g, out, x):
    g.bind(out, g.node("Mul", [g.value(x), g.value(x)])[0])


def _tensor_of(*values):
    """The first tensor among values: what a Python number operand takes its dtype from."""
    from .. import Tensor

    return next(v for v in values if isinstance(v, Tensor))


def _binary(op, swap=False):
    def emit(g, out, a, b, *rest, alpha=1, **kw):
        like = _tensor_of(a, b)
        x, y = _operand(g, a, like), _operand(g, b, like)
        if alpha != 1:  # add(other, alpha=a): other scaled first
            y = g.node("Mul", [y, g.scalar_like(alpha, like)])[0]
        g.bind(out, g.node(op, [y, x] if swap else [x, y])[0])
    return emit


for _names, _op in ((("__add__", "__iadd__", "add", "add_", "_C.add"), "Add"),
                    (("__sub__", "__isub__", "sub", "sub_", "subtract", "subtract_", "_C.sub"), "Sub"),
                    (("__mul__", "__imul__", "mul", "mul_", "multiply", "multiply_", "_C.mul"), "Mul"),
                    (("__truediv__", "__itruediv__", "div", "div_", "divide", "divide_", "true_divide",
                      "true_divide_", "_C.div"), "Div"),
                    (("__matmul__", "matmul", "mm", "bmm", "_C.matmul", "_C.mm", "_C.bmm"), "MatMul"),
                    (("__pow__", "pow", "pow_", "_C.pow"), "Pow"),
                    (("maximum", "_C.maximum"), "Max"), (("minimum", "_C.minimum"), "Min"),
                    (("eq", "__eq__", "_C.eq"), "Equal"), (("lt", "less", "__lt__", "_C.lt"), "Less"),
                    (("le", "less_equal", "__le__", "_C.le"), "LessOrEqual"), (("gt", "greater", "__gt__", "_C.gt"), "Greater"),
                    (("ge", "greater_equal", "__ge__", "_C.ge"), "GreaterOrEqual"),
                    (("logical_and", "__and__", "_C.logical_and"), "And"), (("logical_or", "__or__", "_C.logical_or"), "Or")):
    for _n in _names:
        EMITTERS[_n] = _binary(_op)
EMITTERS["__radd__"] = _binary("Add", swap=True)
EMITTERS["__rmul__"] = _binary("Mul", swap=True)
EMITTERS["__rsub__"] = _binary("Sub", swap=True)
EMITTERS["__rtruediv__"] = _binary("Div", swap=True)
EMITTERS["__rmatmul__"] = _binary("MatMul", swap=True)


@emits("_C.softmax", "softmax")
def _softmax(g, out, x, dim, dtype=None):
    g.bind(out, g.node("Softmax", [g.value(x)], axis=_dim(int(dim), x.ndim))[0])


@emits("_C.where", "where")
def _where(g, out, a, b, c=None):
    # lucid.where(cond, x, y); Tensor.where(self, cond, other) is where(cond, self, other)
    cond, x, y = (a, b, c) if c is not None and _is_bool(a) else (b, a, c if c is not None else b)
    like = _tensor_of(x, y, out)
    g.bind(out, g.node("Where", [g.value(cond), _operand(g, x, like), _operand(g, y, like)])[0])


def _is_bool(t):
    from .. import Tensor, bool as bool_

    return isinstance(t, Tensor) and t.dtype == bool_


@emits("clamp", "clip", "clamp_", "clip_", "_C.clamp", "_C.clip")
def _clamp(g, out, x, min=None, max=None):
    from .. import Tensor

    bound = [g.value(v) if isinstance(v, Tensor) else g.scalar_like(v, x) if v is not None else ""
             for v in (min, max)]
    while bound and bound[-1] == "":
        bound.pop()
    g.bind(out, g.node("Clip", [g.value(x)] + bound)[0])


@emits("_C.hardtanh")
def _hardtanh(g, out, x, min_val, max_val):
    g.bind(out, g.node("Clip", [g.value(x), g.scalar_like(min_val, x), g.scalar_like(max_val, x)])[0])


@emits("_C._leaky_relu")
def _leaky_relu(g, out, x, slope):  # a number: LeakyRelu; prelu's weight tensor: PRelu
    from .. import Tensor

    if isinstance(slope, Tensor):
        g.bind(out, g.node("PRelu", [g.value(x), g.value(slope)])[0])
    else:
        g.bind(out, g.node("LeakyRelu", [g.value(x)], alpha=float(slope))[0])


def _shrink_of(soft):
    """ONNX's Shrink: x + bias below -lambd, x - bias above lambd, 0 between (softshrink's
    bias is lambd, hardshrink's 0)."""
    def emit(g, out, x, lambd):
        g.bind(out, g.node("Shrink", [g.value(x)], lambd=float(lambd), bias=float(lambd) if soft else 0.0)[0])
    return emit


EMITTERS["_C._softshrink"] = _shrink_of(True)
EMITTERS["_C._hardshrink"] = _shrink_of(False)


@emits("_C.log_softmax", "log_softmax")
def _log_softmax(g, out, x, dim, dtype=None):
    g.bind(out, g.node("LogSoftmax", [g.value(x)], axis=_dim(int(dim), x.ndim))[0])


# ---- layers --------------------------------------------------------------------------------------

@emits("_C._linear")
def _linear(g, out, x, weight, bias=None):
    if x.ndim == 2 and not g.is_traced(weight):
        inputs = [g.value(x), g.value(weight)] + ([g.value(bias)] if bias is not None else [])
        g.bind(out, g.node("Gemm", inputs, transB=1)[0])
        return
    wt = g.node("Transpose", [g.value(weight)], perm=[1, 0])[0]
    y = g.node("MatMul", [g.value(x), wt])[0]
    if bias is not None:
        y = g.node("Add", [y, g.value(bias)])[0]
    g.bind(out, y)


@emits("addmm", "_C.addmm")
def _addmm(g, out, bias, a, b, *, beta=1, alpha=1):
    if a.ndim == 2 and b.ndim == 2:
        g.bind(out, g.node("Gemm", [g.value(a), g.value(b), g.value(bias)], alpha=float(alpha),
                           beta=float(beta))[0])
        return
    raise UnsupportedOperatorError("lucid.onnx.export: `addmm` of operands that are not matrices")


@emits("_C._convolution")
def _convolution(g, out, name, x, weight, bias, stride, padding, dilation, transposed, output_padding, groups):
    inputs = [g.value(x), g.value(weight)] + ([g.value(bias)] if bias is not None else [])
    attrs = dict(strides=list(stride), pads=list(padding) * 2, dilations=list(dilation), group=int(groups),
                 kernel_shape=list(weight.shape[2:]))
    if transposed:
        attrs["output_padding"] = list(output_padding)
    g.bind(out, g.node("ConvTranspose" if transposed else "Conv", inputs, **attrs)[0])


@emits("_C._max_pool")
def _max_pool(g, out, name, x, kernel, stride, padding, dilation, ceil_mode):
    result = out[0] if isinstance(out, (tuple, list)) else out
    g.bind(result, g.node("MaxPool", [g.value(x)], kernel_shape=list(kernel), strides=list(stride),
                          pads=list(padding) * 2, dilations=list(dilation), ceil_mode=int(ceil_mode))[0])


@emits("_C._avg_pool")
def _avg_pool(g, out, name, x, kernel, stride, padding, ceil_mode, count_include_pad, divisor_override=None):
    if divisor_override is not None:
        raise UnsupportedOperatorError("lucid.onnx.export: `avg_pool` with divisor_override has no ONNX form")
    g.bind(out, g.node("AveragePool", [g.value(x)], kernel_shape=list(kernel), strides=list(stride),
                       pads=list(padding) * 2, ceil_mode=int(ceil_mode),
                       count_include_pad=int(count_include_pad))[0])


@emits("_C._adaptive_avg_pool")
def _adaptive_avg_pool(g, out, name, x, size):
    spatial = list(x.shape[2:])
    if all(s == 1 for s in size):
        g.bind(out, g.node("GlobalAveragePool", [g.value(x)])[0])
        return
    if any(n % s for n, s in zip(spatial, size)):
        raise UnsupportedOperatorError(f"lucid.onnx.export: `{name}` from {spatial} to {list(size)} (sizes that "
                                       "do not divide) has no ONNX form")
    k = [n // s for n, s in zip(spatial, size)]
    g.bind(out, g.node("AveragePool", [g.value(x)], kernel_shape=k, strides=k)[0])


@emits("_C._batch_norm")
def _batch_norm(g, out, x, weight, bias, running_mean, running_var, training, momentum, eps):
    if training or running_mean is None:
        raise UnsupportedOperatorError("lucid.onnx.export: `batch_norm` with batch statistics (training mode) has "
                                       "no ONNX form here; export the model in eval mode")
    c = x.shape[1]
    dt = numpy_dtype(x)
    scale = g.value(weight) if weight is not None else g.const(np.ones(c, dt), "bn_scale")
    shift = g.value(bias) if bias is not None else g.const(np.zeros(c, dt), "bn_bias")
    g.bind(out, g.node("BatchNormalization", [g.value(x), scale, shift, g.value(running_mean),
                                              g.value(running_var)], epsilon=float(eps))[0])


@emits("_C._norm_last_dims")
def _norm_last_dims(g, out, x, k, weight, bias, eps, rms):
    dt = numpy_dtype(x)
    shape = list(x.shape[x.ndim - k:])
    if not rms:
        scale = g.value(weight) if weight is not None else g.const(np.ones(shape, dt), "ln_scale")
        inputs = [g.value(x), scale] + ([g.value(bias)] if bias is not None else [])
        g.bind(out, g.node("LayerNormalization", inputs, axis=-k, epsilon=float(eps))[0])
        return
    axes = list(range(x.ndim - k, x.ndim))
    sq = g.node("Mul", [g.value(x), g.value(x)])[0]
    mean = _reduce_mean(g, sq, axes)
    rs = g.node("Reciprocal", [g.node("Sqrt", [g.node("Add", [mean, g.const(np.asarray(eps, dt))])[0]])[0]])[0]
    y = g.node("Mul", [g.value(x), rs])[0]
    if weight is not None:
        y = g.node("Mul", [y, g.value(weight)])[0]
    g.bind(out, y)


def _reduce_mean(g, x, axes, keepdims=1):
    if g.opset >= 18:
        return g.node("ReduceMean", [x, g.ints(axes, "axes")], keepdims=keepdims)[0]
    return g.node("ReduceMean", [x], axes=list(axes), keepdims=keepdims)[0]


# Gates: torch's LSTM weights are stacked (input, forget, cell, output), ONNX's (input,
# output, forget, cell).
_TORCH_TO_ONNX_GATES = [0, 3, 1, 2]


def _gate_permutation(gx, gates):
    """For a recurrent layer whose gates lucid has projected already (gx: [T, B, k*H]):
    H, the row order taking torch's gate blocks to ONNX's (`gates`[i]: the torch block
    of ONNX block i), and the [1, k*H, k*H] input weight of 0s and 1s that applies it (a
    product with 0s and 1s is exact)."""
    rows = gx.shape[2]
    hidden = rows // len(gates)
    order = np.concatenate([np.arange(k * hidden, (k + 1) * hidden) for k in gates])
    w = np.zeros((1, rows, rows), numpy_dtype(gx))
    w[0, np.arange(rows), order] = 1  # ONNX gate row r takes torch's row order[r]
    return hidden, order, w


@emits("_C._lstm_layer")
def _lstm_layer(g, out, gx, h, c, w_hh, reverse):
    """One LSTM layer over gates already projected from the input (gx = x W_ih^T + b):
    an ONNX LSTM whose input weight is the permutation putting torch's gate order into
    ONNX's (a product with 0s and 1s: exact), its recurrent weight w_hh in that order."""
    if g.is_traced(w_hh):
        raise UnsupportedOperatorError("lucid.onnx.export: an LSTM whose recurrent weight is computed has no ONNX "
                                       "form here")
    hidden, order, w = _gate_permutation(gx, _TORCH_TO_ONNX_GATES)
    r = w_hh.detach().cpu().numpy()[order][None]
    inputs = [g.value(gx), g.const(w, "lstm_W"), g.const(r, "lstm_R"), "", ""]
    for state in (h, c):
        inputs.append(_zero_default(g, state))
    while inputs and inputs[-1] == "":
        inputs.pop()
    y, y_h, y_c = g.node("LSTM", inputs, outputs=3, hidden_size=hidden,
                         direction="reverse" if reverse else "forward")
    seq, last_h, last_c = out
    g.bind(seq, g.node("Squeeze", [y, g.ints([1], "axes")])[0])
    g.bind(last_h, g.node("Squeeze", [y_h, g.ints([0], "axes")])[0])
    g.bind(last_c, g.node("Squeeze", [y_c, g.ints([0], "axes")])[0])


@emits("_C._lstm_cell_fused")
def _lstm_cell_fused(g, out, gates, c_prev):
    """One LSTM step from its gates ([B, 4H], torch's order: input, forget, cell,
    output) and the last cell state: c = f c_prev + i g, h = o tanh(c). An LSTM with
    proj_size runs its steps this way (ONNX's LSTM has no projection), so it exports
    unrolled over its sequence, whose length is then fixed."""
    i, f, cell, o = g.node("Split", [g.value(gates), g.sizes([gates.shape[1] // 4] * 4, "split")], outputs=4,
                           axis=1)
    i, f, o = (g.node("Sigmoid", [v])[0] for v in (i, f, o))
    cell = g.node("Tanh", [cell])[0]
    c = g.node("Add", [g.node("Mul", [f, g.value(c_prev)])[0], g.node("Mul", [i, cell])[0]])[0]
    h_new, c_new = out
    g.bind(c_new, c)
    g.bind(h_new, g.node("Mul", [o, g.node("Tanh", [c])[0]])[0])


# torch's GRU weights are stacked (reset, update, new), ONNX's (update, reset, hidden).
_TORCH_TO_ONNX_GRU_GATES = [1, 0, 2]


@emits("_C._gru_layer")
def _gru_layer(g, out, gx, h, w_hh, b_hh, reverse):
    """One GRU layer over projected gates (gx = x W_ih^T + b_ih): an ONNX GRU with
    linear_before_reset=1 (torch's form: the reset gate scales W_hn h + b_hn), its input
    weight the permutation to ONNX's gate order, its recurrent weight and bias w_hh and
    b_hh in that order."""
    if g.is_traced(w_hh) or (b_hh is not None and g.is_traced(b_hh)):
        raise UnsupportedOperatorError("lucid.onnx.export: a GRU whose recurrent weights are computed has no ONNX "
                                       "form here")
    hidden, order, w = _gate_permutation(gx, _TORCH_TO_ONNX_GRU_GATES)
    dt, three_h = w.dtype, 3 * hidden
    r = w_hh.detach().cpu().numpy()[order][None]
    rb = b_hh.detach().cpu().numpy()[order] if b_hh is not None else np.zeros(three_h, dt)
    bias = np.concatenate([np.zeros(three_h, dt), rb])[None]
    inputs = [g.value(gx), g.const(w, "gru_W"), g.const(r, "gru_R"), g.const(bias, "gru_B"), "",
              _zero_default(g, h)]
    while inputs[-1] == "":
        inputs.pop()
    y, y_h = g.node("GRU", inputs, outputs=2, hidden_size=hidden, linear_before_reset=1,
                    direction="reverse" if reverse else "forward")
    seq, last_h = out
    g.bind(seq, g.node("Squeeze", [y, g.ints([1], "axes")])[0])
    g.bind(last_h, g.node("Squeeze", [y_h, g.ints([0], "axes")])[0])


def _zero_default(g, state):
    """An LSTM's initial state as an input of [1, batch, hidden], or "" when it is the
    zeros ONNX assumes (so that the batch size stays free)."""
    if not g.is_traced(state) and not state.detach().cpu().numpy().any():
        return ""
    return g.node("Unsqueeze", [g.value(state), g.ints([0], "axes")])[0]


# ---- shapes ----------------------------------------------------------------------------------------

@emits("_reshape", "_view", "_flatten")
def _reshape(g, out, x, *shape):
    g.bind(out, g.node("Reshape", [g.value(x), g.sizes(out.shape)])[0])


@emits("_transpose")
def _transpose(g, out, x, a, b):
    perm = list(range(x.ndim))
    a, b = _dim(a, x.ndim), _dim(b, x.ndim)
    perm[a], perm[b] = perm[b], perm[a]
    g.bind(out, g.node("Transpose", [g.value(x)], perm=perm)[0])


@emits("_permute")
def _permute(g, out, x, dims):
    g.bind(out, g.node("Transpose", [g.value(x)], perm=[_dim(d, x.ndim) for d in dims])[0])


@emits("_unsqueeze")
def _unsqueeze(g, out, x, dim):
    g.bind(out, g.node("Unsqueeze", [g.value(x), g.ints([_dim(dim, x.ndim + 1)], "axes")])[0])


@emits("_squeeze")
def _squeeze(g, out, x, dims):
    dims = [_dim(d, x.ndim) for d in dims]
    dims = [d for d in dims if x.shape[d] == 1]
    if not dims:
        g.bind(out, g.node("Identity", [g.value(x)])[0])
        return
    g.bind(out, g.node("Squeeze", [g.value(x), g.ints(dims, "axes")])[0])


@emits("_contiguous", "_detach", "detach", "clone", "_clone")
def _identity(g, out, x, *rest, **kw):
    g.bind(out, g.node("Identity", [g.value(x)])[0])


@emits("_expand")
def _expand(g, out, x, shape):
    g.bind(out, g.node("Expand", [g.value(x), g.sizes(out.shape)])[0])


@emits("_select")
def _select(g, out, x, dim, index):
    dim = _dim(dim, x.ndim)
    index = index + x.shape[dim] if index < 0 else index
    g.bind(out, g.node("Gather", [g.value(x), g.const(np.asarray(index, np.int64), "index")], axis=dim)[0])


@emits("_slice")
def _slice(g, out, x, dim, start, end, step):
    dim = _dim(dim, x.ndim)
    start = 0 if start is None else start
    end = np.iinfo(np.int64).max if end is None else end
    g.bind(out, g.node("Slice", [g.value(x), g.sizes([start], "starts"), g.sizes([end], "ends"),
                                 g.ints([dim], "axes"), g.ints([step], "steps")])[0])


@emits("_narrow")
def _narrow(g, out, x, dim, start, length):
    _slice(g, out, x, dim, start, start + length, 1)


@emits("_C._split_with_sizes")
def _split(g, out, x, sizes, dim, *rest):
    dim = _dim(dim, x.ndim)
    names = g.node("Split", [g.value(x), g.sizes(sizes, "split")], outputs=len(out), axis=dim)
    for t, n in zip(out, names):
        g.bind(t, n)


@emits("_C._unbind")
def _unbind(g, out, x, dim=0):
    dim = _dim(dim, x.ndim)
    for i, t in enumerate(out):
        g.bind(t, g.node("Gather", [g.value(x), g.const(np.asarray(i, np.int64), "index")], axis=dim)[0])


@emits("_C._cat")
def _cat(g, out, tensors, dim):
    tensors = [t for t in tensors if t.numel() or t.ndim > 1]
    g.bind(out, g.node("Concat", [g.value(t) for t in tensors], axis=_dim(dim, out.ndim))[0])


@emits("_C._stack")
def _stack(g, out, tensors, dim):
    dim = _dim(dim, out.ndim)
    parts = [g.node("Unsqueeze", [g.value(t), g.ints([dim], "axes")])[0] for t in tensors]
    g.bind(out, g.node("Concat", parts, axis=dim)[0])


# ---- reductions -----------------------------------------------------------------------------------

def _axes(x, dim):
    if dim is None:
        return list(range(x.ndim))
    dims = [dim] if isinstance(dim, int) else list(dim)
    return [_dim(d, x.ndim) for d in dims]


@emits("_C.mean", "mean")
def _mean(g, out, x, dim=None, keepdim=False, *rest, **kw):
    g.bind(out, _reduce_mean(g, g.value(x), _axes(x, dim), int(bool(keepdim))))


@emits("_C.sum", "sum")
def _sum(g, out, x, dim=None, keepdim=False, *rest, **kw):
    g.bind(out, g.node("ReduceSum", [g.value(x), g.ints(_axes(x, dim), "axes")], keepdims=int(bool(keepdim)))[0])


def _reduce(op):
    def emit(g, out, x, dim=None, keepdim=False, *rest, **kw):
        axes = _axes(x, dim)
        if g.opset >= 18:
            y = g.node(op, [g.value(x), g.ints(axes, "axes")], keepdims=int(bool(keepdim)))[0]
        else:
            y = g.node(op, [g.value(x)], axes=axes, keepdims=int(bool(keepdim)))[0]
        g.bind(out, y)
    return emit


for _names, _op in ((("amax", "_C.amax"), "ReduceMax"), (("amin", "_C.amin"), "ReduceMin")):
    for _n in _names:
        EMITTERS[_n] = _reduce(_op)

