"""The rest of PyTorch's activations, as compositions of engine ops (each is
differentiable through its parts; fused kernels can replace any of them later
without changing the API).

Piecewise ones select with `where` on the conditions PyTorch's backward formulas
use (x <= 0 for elu's negative side, |x| <= lambda for the shrinks, ...), so a NaN
input takes the same side as in PyTorch, and a side that is not taken gets a zero
gradient, never 0 * inf. A side computed on inputs it does not apply to is kept
finite there (elu's exp on x clamped to <= 0)."""

import struct as _struct

from .. import _C
from ..autograd.function import Function as _Function
from ..amp._autocast import policy as _autocast_policy  # Note [Autocast]

__all__ = ["relu6", "elu", "selu", "celu", "mish", "softplus", "softsign", "softshrink", "hardshrink", "hardtanh",
           "hardswish", "hardsigmoid", "tanhshrink", "threshold", "logsigmoid", "softmin", "glu", "prelu", "rrelu",
           "elu_", "selu_", "celu_", "hardtanh_", "threshold_", "rrelu_", "gumbel_softmax"]


def _where(c, a, b):
    return _C.where(c, a, b)


# Note [In-place activations]
# The forward formulas are compositions of ops, and those ops save what they read
# (`input * slope` keeps `input`). Writing the result back into `input` bumps
# input's version under them, and backward rightly refuses the stale saved values.
# So while a gradient is being recorded the formula runs on a copy of input that
# carries input's history (what the engine's own in-place ops do, and what torch's
# autograd does for silu_, hardswish_, mish_, threshold_, hardtanh_), and copy_
# writes the result into input, the same object, and rebases input's history onto
# it (through the base when input is a view). copy_ raises where torch raises: a
# leaf that requires grad (or a view of one); and a tensor an earlier op saved sees
# its version move on, so that op's backward raises. Without a gradient the
# formula reads input itself: no copy.
#
# torch's relu_, leaky_relu_, elu_, selu_, celu_ and rrelu_ differentiate through their
# *result* instead, so torch's backward raises when that result is modified again
# later, and when the slope is negative (the result no longer tells the sides
# apart). `result_check` reproduces both (the negative-slope message, or "" when
# the slope is fine): a hook on the formula's result, run in backward, compares
# input's version with the one after the write (through a history-free alias of
# input, so that the hook makes no reference cycle).
def _inplace(input, fn, inplace, result_check=None, kernel=None):
    """fn(input), or written into input when inplace; `kernel` is an engine in-place op
    for the case without a gradient."""
    if not inplace:
        return fn(input)
    if not (_C.is_grad_enabled() and input.requires_grad):
        return kernel(input) if kernel is not None else input.copy_(fn(input))
    out = fn(input.clone())
    input.copy_(out)
    if result_check is not None:
        out.register_hook(_check_result(input.detach(), result_check))
    return input


def _check_result(alias, negative_slope_message):
    expected = alias._version

    def check(grad):
        if negative_slope_message:
            raise RuntimeError(negative_slope_message)
        if alias._version != expected:
            raise RuntimeError("one of the variables needed for gradient computation has been modified by an "
                               f"inplace operation: the result of an in-place activation is at version "
                               f"{alias._version}; expected version {expected} instead. Hint: the in-place "
                               "activation differentiates through its result (as torch's does); look for an "
                               "in-place op on that tensor after the activation.")
    return check


def _slope_check(what, slope):
    """result_check for an activation whose negative side has slope (or alpha) `slope`."""
    if slope >= 0:
        return ""
    if what == "leaky_relu":
        return ("In-place leakyReLu backward calculation is triggered with a negative slope which is not "
                "supported. This is caused by calling in-place forward function with a negative slope, please "
                "call out-of-place version instead. File an issue at https://github.com/pytorch/pytorch if you "
                "do require supporting in-place leakRelu backward calculation with negative slope")
    return ("In-place elu backward calculation is triggered with a negative slope which is not supported. This "
            "is caused by calling in-place forward function with a negative slope, please call out-of-place "
            "version instead.")


def hardtanh(input, min_val=-1.0, max_val=1.0, inplace=False):
    if min_val > max_val:
        raise ValueError("min_val cannot be greater than max_val")
    # clamp in one pass (Note [Clamp in one pass]); the gradient is torch's hardtanh_backward:
    # zero at and beyond the bounds; a NaN passes
    return _inplace(input, lambda x: _C.hardtanh(x, min_val, max_val), inplace)


def relu6(input, inplace=False):
    return hardtanh(input, 0.0, 6.0, inplace)


def _float32(x):
    return _struct.unpack("f", _struct.pack("f", x))[0]


def _exp_linear_coefficient(x, alpha, scale):
    return alpha * scale if x.dtype.itemsize == 8 else _float32(_float32(alpha) * _float32(scale))


def _exp_linear_values(input, alpha, input_scale=1.0, scale=1.0):
    """scale x for x > 0 (and NaN), scale alpha (exp(x input_scale) - 1) for x <= 0: torch's
    elu kernel, whose negative side multiplies by one coefficient, alpha * scale in float32.
    A float16 / bfloat16 input is computed in float32 and rounded once, as torch's kernels
    do (each step rounded to 16 bits differed from torch in most elements)."""
    if input.dtype.is_floating_point and input.dtype.itemsize == 2:
        return _exp_linear_values(input.float(), alpha, input_scale, scale).to(input.dtype)
    coefficient = _exp_linear_coefficient(input, alpha, scale)
    negative_side = input <= 0
    negative = coefficient * (_where(negative_side, input, 0.0) * input_scale).expm1()
    return _where(negative_side, negative, input if scale == 1 else input * scale)


class _ExpLinear(_Function):
    """elu / selu / celu with torch's backward formula (elu_backward): g scale above 0, g
    input_scale (alpha scale) e^(x input_scale) at and below 0, in that order; 16-bit
    computed in float32 and rounded once, as the forward. (Differentiating the forward's
    composite made forward + backward 2.3x torch's time.)"""

    @staticmethod
    def forward(ctx, input, alpha, input_scale, scale):
        ctx.save_for_backward(input)
        ctx.params = (alpha, input_scale, scale)
        return _exp_linear_values(input, alpha, input_scale, scale)

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        alpha, input_scale, scale = ctx.params
        half = x.dtype.itemsize == 2
        xs, g = (x.float(), grad.float()) if half else (x, grad)
        # (e^x of x below 0 only: at 0 the value is the same, and the derivative of this
        # gradient is 0 there, as torch's elu_double_backward's, which tests x < 0)
        below = _where(xs < 0, xs, 0.0)
        e = (below * input_scale if input_scale != 1 else below).exp()
        negative = g * input_scale * _exp_linear_coefficient(xs, alpha, scale) * e
        d = _where(xs <= 0, negative, g * scale if scale != 1 else g)
        return (d.to(x.dtype) if half else d), None, None, None


def _exp_linear(input, alpha, input_scale=1.0, scale=1.0):
    if _C.is_grad_enabled() and input.requires_grad and input.dtype.is_floating_point:
        return _ExpLinear.apply(input, alpha, input_scale, scale)
    return _exp_linear_values(input, alpha, input_scale, scale)


def elu(input, alpha=1.0, inplace=False):
    return _inplace(input, lambda x: _exp_linear(x, alpha), inplace, _slope_check("elu", alpha))


def selu(input, inplace=False):
    alpha, scale = 1.6732632423543772848170429916717, 1.0507009873554804934193349852946
    return _inplace(input, lambda x: _exp_linear(x, alpha, scale=scale), inplace, "")


def celu(input, alpha=1.0, inplace=False):
    if alpha == 0:
        raise RuntimeError("ZeroDivisionError")
    return _inplace(input, lambda x: _exp_linear(x, alpha, 1.0 / alpha), inplace, _slope_check("elu", alpha))


@_autocast_policy("softplus")
def softplus(input, beta=1.0, threshold=20.0):
    from .functional import _float_only
    _float_only(input, "softplus_cpu")
    if beta == 1 and threshold == 20:
        return _C._softplus(input)  # torch's defaults: one fused kernel, and one for its gradient
    scaled = input * beta
    # log(1 + e^s) without overflow; its gradient sigmoid(s) is finite for every s
    # and NaN at NaN, as torch's softplus_backward
    soft = _C.logaddexp(scaled, scaled.new_zeros(())) / beta
    return _where(scaled > threshold, input, soft)


def mish(input, inplace=False):
    """x tanh(softplus(x)): one fused kernel, and one for its gradient (ops/activation_functors.h)."""
    from .functional import _float_only
    _float_only(input, "mish_cpu")
    return _inplace(input, _C._mish, inplace)


def softsign(input):
    return input / (input.abs() + 1)


def softshrink(input, lambd=0.5):
    """One fused kernel, and one for its gradient (from the result: ops/activation_functors.h)."""
    if lambd < 0:
        raise RuntimeError(f"lambda must be greater or equal to 0, but found to be {lambd}.")
    from .functional import _float_only
    _float_only(input, "softshrink_check")
    return _C._softshrink(input, lambd)


def hardshrink(input, lambd=0.5):
    """One fused kernel, and one for its gradient (from the result: ops/activation_functors.h)."""
    from .functional import _float_only
    _float_only(input, "hardshrink_cpu")
    if lambd < 0:  # no value lies on [-lambd, lambd]: the identity, whose result can be 0 where x is
        return input.clone()
    return _C._hardshrink(input, lambd)


def hardsigmoid(input, inplace=False):
    """relu6(x + 3) / 6: one fused kernel, and one for its gradient (ops/activation_functors.h)."""
    from .functional import _float_only
    _float_only(input, "hardsigmoid_cpu")
    return _inplace(input, _C._hardsigmoid, inplace)


def hardswish(input, inplace=False):
    """x relu6(x + 3) / 6: one fused kernel, and one for its gradient (ops/activation_functors.h)."""
    from .functional import _float_only
    _float_only(input, "hardswish_cpu")
    return _inplace(input, _C._hardswish, inplace)


def tanhshrink(input):
    return input - input.tanh()


def threshold(input, threshold, value, inplace=False):
    def select(x):
        # torch's CPU kernel compares a float16 / bfloat16 input with the threshold in
        # float32 (its CUDA kernel in the input's dtype)
        wide = x.float() if x.dtype.is_floating_point and x.dtype.itemsize == 2 and x.device.type == "cpu" else x
        return _where(wide <= threshold, value, x)
    return _inplace(input, select, inplace)


def logsigmoid(input):
    """log(sigmoid(x)), finite for every finite x: one fused kernel, and one for its gradient."""
    from .functional import _float_only
    _float_only(input, "log_sigmoid_cpu")
    return _C._log_sigmoid(input)


def softmin(input, dim=None, _stacklevel=3, dtype=None):
    if dim is None:
        from .functional import _implicit_softmax_dim
        dim = _implicit_softmax_dim("softmin", input, _stacklevel)
    return _C.softmax(-input, dim, dtype=dtype)


def glu(input, dim=-1):
    if input.dim() == 0:
        raise RuntimeError("glu does not support scalars because halving size must be even")
    n = input.shape[dim]
    if n % 2:
        raise RuntimeError(f"Halving dimension must be even, but dimension {dim % input.dim()} is size {n}")
    a, b = input.split(n // 2, dim)
    return a * b.sigmoid()


@_autocast_policy("prelu")
def prelu(input, weight):
    if weight.numel() != 1:
        if input.dim() < 2 or weight.numel() != input.shape[1]:
            raise RuntimeError(f"Mismatch of parameter numbers and input channel size. Found parameter numbers = "
                               f"{weight.numel()} and channel size = {input.shape[1] if input.dim() > 1 else 1}.")
        weight = weight.reshape([1, -1] + [1] * (input.dim() - 2))
    if input.dtype != weight.dtype:
        from .. import _dtype
        raise RuntimeError(f"prelu: Type promoting not supported. Got {_dtype._torch_name(input.dtype)} and "
                           f"{_dtype._torch_name(weight.dtype)}")
    return _C._leaky_relu(input, weight)  # leaky_relu with the weight as its slope


def rrelu(input, lower=1.0 / 8, upper=1.0 / 3, training=False, inplace=False):
    if not training:  # torch's leaky_relu with the mean slope
        slope = (lower + upper) / 2
        return _inplace(input, lambda x: _C._leaky_relu(x, slope), inplace, _slope_check("leaky_relu", slope))
    from .._random import rand_like
    slope = rand_like(input) * (upper - lower) + lower
    # torch differentiates through the drawn slopes, whatever their sign
    return _inplace(input, lambda x: _where(x >= 0, x, x * slope), inplace, "")


# torch's in-place forms: input itself, written (the in-place rules of Note [In-place activations])
def elu_(input, alpha=1.0):
    return elu(input, alpha, inplace=True)


def selu_(input):
    return selu(input, inplace=True)


def celu_(input, alpha=1.0):
    return celu(input, alpha, inplace=True)


def hardtanh_(input, min_val=-1.0, max_val=1.0):
    return hardtanh(input, min_val, max_val, inplace=True)


def threshold_(input, threshold, value):
    return globals()["threshold"](input, threshold, value, inplace=True)  # (the parameter hides the function)


def rrelu_(input, lower=1.0 / 8, upper=1.0 / 3, training=False):
    return rrelu(input, lower, upper, training, inplace=True)


def gumbel_softmax(logits, tau=1.0, hard=False, eps=1e-10, dim=-1):
    """softmax((logits + g) / tau) with g ~ Gumbel(0, 1); hard: the one-hot of its argmax in
    the forward and the soft sample's gradient (straight through), as torch's."""
    if eps != 1e-10:
        import warnings
        warnings.warn("`eps` parameter is deprecated and has no effect.", stacklevel=2)
    from .. import empty_like, zeros_like
    gumbels = -empty_like(logits).exponential_().log()
    y_soft = ((logits + gumbels) / tau).softmax(dim)
    if not hard:
        return y_soft
    index = y_soft.max(dim, keepdim=True)[1]
    y_hard = zeros_like(logits).scatter_(dim, index, 1.0)
    return y_hard - y_soft.detach() + y_soft
