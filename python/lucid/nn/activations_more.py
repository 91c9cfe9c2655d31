"""The rest of PyTorch's activations, as compositions of engine ops (each is
differentiable through its parts; fused kernels can replace any of them later
without changing the API).

Piecewise ones select with `where` on the conditions PyTorch's backward formulas
use (x <= 0 for elu's negative side, |x| <= lambda for the shrinks, ...), so a NaN
input takes the same side as in PyTorch, and a side that is not taken gets a zero
gradient, never 0 * inf. A side computed on inputs it does not apply to is kept
finite there (elu's exp on x clamped to <= 0)."""

from .. import _C

__all__ = ["relu6", "elu", "selu", "celu", "mish", "softplus", "softsign", "softshrink", "hardshrink", "hardtanh",
           "hardswish", "hardsigmoid", "tanhshrink", "threshold", "logsigmoid", "softmin", "glu", "prelu", "rrelu"]


def _where(c, a, b):
    return _C.where(c, a, b)


def _inplace(input, out, inplace):
    return input.copy_(out) if inplace else out


def hardtanh(input, min_val=-1.0, max_val=1.0, inplace=False):
    if min_val > max_val:
        raise ValueError("min_val cannot be greater than max_val")
    # torch's hardtanh_backward: zero at and beyond the bounds; a NaN passes
    out = _where(input <= min_val, min_val, _where(input >= max_val, max_val, input))
    return _inplace(input, out, inplace)


def relu6(input, inplace=False):
    return hardtanh(input, 0.0, 6.0, inplace)


def _exp_linear(input, alpha, input_scale=1.0):
    """x for x > 0 (and NaN), alpha (exp(x * input_scale) - 1) for x <= 0."""
    negative = alpha * (_where(input <= 0, input, 0.0) * input_scale).expm1()
    return _where(input <= 0, negative, input)


def elu(input, alpha=1.0, inplace=False):
    return _inplace(input, _exp_linear(input, alpha), inplace)


def selu(input, inplace=False):
    alpha, scale = 1.6732632423543772848170429916717, 1.0507009873554804934193349852946
    return _inplace(input, scale * _exp_linear(input, alpha), inplace)


def celu(input, alpha=1.0, inplace=False):
    if alpha == 0:
        raise RuntimeError("ZeroDivisionError")
    return _inplace(input, _exp_linear(input, alpha, 1.0 / alpha), inplace)


def softplus(input, beta=1.0, threshold=20.0):
    scaled = input * beta
    # log(1 + e^s) without overflow; its gradient sigmoid(s) is finite for every s
    # and NaN at NaN, as torch's softplus_backward
    soft = _C.logaddexp(scaled, scaled.new_zeros(())) / beta
    return _where(scaled > threshold, input, soft)


def mish(input, inplace=False):
    return _inplace(input, input * softplus(input).tanh(), inplace)


def softsign(input):
    return input / (input.abs() + 1)


def softshrink(input, lambd=0.5):
    if lambd < 0:
        raise RuntimeError(f"lambda must be greater or equal to 0, but found to be {lambd}.")
    inside = (input >= -lambd) & (input <= lambd)
    return _where(inside, 0.0, _where(input > lambd, input - lambd, input + lambd))


def hardshrink(input, lambd=0.5):
    return _where((input >= -lambd) & (input <= lambd), 0.0, input)


def hardsigmoid(input, inplace=False):
    return _inplace(input, (input / 6 + 0.5).clamp(0.0, 1.0), inplace)


def hardswish(input, inplace=False):
    # torch's hardswish_backward: 0 below -3, x / 3 + 1/2 on [-3, 3], 1 above (and at NaN)
    # (below -3 the value is x * 0 as torch computes it, -0.0 or NaN at -inf, with no gradient)
    out = _where(input < -3, (input * 0.0).detach(), _where(input <= 3, input * (input + 3) / 6, input))
    return _inplace(input, out, inplace)


def tanhshrink(input):
    return input - input.tanh()


def threshold(input, threshold, value, inplace=False):
    return _inplace(input, _where(input <= threshold, value, input), inplace)


def logsigmoid(input):
    # log(sigmoid(x)) = -softplus(-x), stable for large |x|
    return -softplus(-input)


def softmin(input, dim=None, _stacklevel=3, dtype=None):
    if dim is None:
        raise TypeError("softmin(): argument 'dim' must be given")
    return _C.softmax(-input, dim, dtype=dtype)


def glu(input, dim=-1):
    if input.dim() == 0:
        raise RuntimeError("glu does not support scalars because halving size must be even")
    n = input.shape[dim]
    if n % 2:
        raise RuntimeError(f"Halving dimension must be even, but dimension {dim % input.dim()} is size {n}")
    a, b = input.split(n // 2, dim)
    return a * b.sigmoid()


def prelu(input, weight):
    if weight.numel() != 1:
        if input.dim() < 2 or weight.numel() != input.shape[1]:
            raise RuntimeError(f"Mismatch of parameter numbers and input channel size. Found parameter numbers = "
                               f"{weight.numel()} and channel size = {input.shape[1] if input.dim() > 1 else 1}.")
        weight = weight.reshape([1, -1] + [1] * (input.dim() - 2))
    return _where(input > 0, input, weight * input)


def rrelu(input, lower=1.0 / 8, upper=1.0 / 3, training=False, inplace=False):
    if training:
        from .._random import rand_like
        slope = rand_like(input) * (upper - lower) + lower
    else:
        slope = (lower + upper) / 2
    return _inplace(input, _where(input >= 0, input, input * slope), inplace)
