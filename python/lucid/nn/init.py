"""nn.init: parameter initialisers, as torch.nn.init, drawing from lucid's generator.

Each works in place under no_grad and returns its tensor. Fan computation, gains and
bounds follow PyTorch's definitions, so the same seed-independent statistics hold.
"""

import math
import warnings

from ..autograd.grad_mode import no_grad

__all__ = ["calculate_gain", "uniform_", "normal_", "trunc_normal_", "constant_", "ones_", "zeros_", "eye_",
           "dirac_", "xavier_uniform_", "xavier_normal_", "kaiming_uniform_", "kaiming_normal_", "orthogonal_",
           "sparse_"]


def calculate_gain(nonlinearity, param=None):
    linear_fns = ["linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d",
                  "conv_transpose3d"]
    if nonlinearity in linear_fns or nonlinearity == "sigmoid":
        return 1
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        if param is None:
            slope = 0.01
        elif not isinstance(param, bool) and isinstance(param, (int, float)):
            slope = param
        else:
            raise ValueError(f"negative_slope {param} not a valid number")
        return math.sqrt(2.0 / (1 + slope ** 2))
    if nonlinearity == "selu":
        return 3.0 / 4
    raise ValueError(f"Unsupported nonlinearity {nonlinearity}")


def _calculate_fan_in_and_fan_out(tensor):
    if tensor.dim() < 2:
        raise ValueError("Fan in and fan out can not be computed for tensor with fewer than 2 dimensions")
    receptive = 1
    for s in tensor.shape[2:]:
        receptive *= s
    return tensor.shape[1] * receptive, tensor.shape[0] * receptive


def _calculate_correct_fan(tensor, mode):
    mode = mode.lower()
    if mode not in ("fan_in", "fan_out"):
        raise ValueError(f"Mode {mode} not supported, please use one of fan_in, fan_out")
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return fan_in if mode == "fan_in" else fan_out


def uniform_(tensor, a=0.0, b=1.0, generator=None):
    with no_grad():
        return tensor.uniform_(a, b, generator=generator)


def normal_(tensor, mean=0.0, std=1.0, generator=None):
    with no_grad():
        return tensor.normal_(mean, std, generator=generator)


def trunc_normal_(tensor, mean=0.0, std=1.0, a=-2.0, b=2.0, generator=None):
    """Normal values redrawn... here by the inverse-CDF method PyTorch uses."""
    def norm_cdf(x):
        return (1.0 + math.erf(x / math.sqrt(2.0))) / 2.0

    if mean < a - 2 * std or mean > b + 2 * std:
        warnings.warn("mean is more than 2 std from [a, b] in nn.init.trunc_normal_. The distribution of values "
                      "may be incorrect.", stacklevel=2)
    with no_grad():
        lo, hi = norm_cdf((a - mean) / std), norm_cdf((b - mean) / std)
        tensor.uniform_(2 * lo - 1, 2 * hi - 1, generator=generator)
        tensor.erfinv_()
        tensor.mul_(std * math.sqrt(2.0))
        tensor.add_(mean)
        tensor.clamp_(min=a, max=b)
        return tensor


def constant_(tensor, val):
    with no_grad():
        return tensor.fill_(val)


def ones_(tensor):
    return constant_(tensor, 1.0)


def zeros_(tensor):
    return constant_(tensor, 0.0)


def eye_(tensor):
    if tensor.dim() != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    from .._creation import eye
    with no_grad():
        return tensor.copy_(eye(*tensor.shape, dtype=tensor.dtype))


def dirac_(tensor, groups=1):
    dims = tensor.dim()
    if dims not in (3, 4, 5):
        raise ValueError("Only tensors with 3, 4, or 5 dimensions are supported")
    sizes = tensor.shape
    if sizes[0] % groups != 0:
        raise ValueError("dim 0 must be divisible by groups")
    out_per_group = sizes[0] // groups
    min_dim = min(out_per_group, sizes[1])
    with no_grad():
        tensor.zero_()
        for g in range(groups):
            for d in range(min_dim):
                index = (g * out_per_group + d, d) + tuple(s // 2 for s in sizes[2:])
                tensor[index] = 1
    return tensor


def xavier_uniform_(tensor, gain=1.0, generator=None):
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    a = math.sqrt(3.0) * gain * math.sqrt(2.0 / float(fan_in + fan_out))
    return uniform_(tensor, -a, a, generator)


def xavier_normal_(tensor, gain=1.0, generator=None):
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return normal_(tensor, 0.0, gain * math.sqrt(2.0 / float(fan_in + fan_out)), generator)


def kaiming_uniform_(tensor, a=0, mode="fan_in", nonlinearity="leaky_relu", generator=None):
    if 0 in tensor.shape:
        warnings.warn("Initializing zero-element tensors is a no-op", stacklevel=2)
        return tensor
    fan = _calculate_correct_fan(tensor, mode)
    bound = math.sqrt(3.0) * calculate_gain(nonlinearity, a) / math.sqrt(fan)
    return uniform_(tensor, -bound, bound, generator)


def kaiming_normal_(tensor, a=0, mode="fan_in", nonlinearity="leaky_relu", generator=None):
    if 0 in tensor.shape:
        warnings.warn("Initializing zero-element tensors is a no-op", stacklevel=2)
        return tensor
    fan = _calculate_correct_fan(tensor, mode)
    return normal_(tensor, 0, calculate_gain(nonlinearity, a) / math.sqrt(fan), generator)


def orthogonal_(tensor, gain=1, generator=None):
    """A (semi-)orthogonal matrix by Gram-Schmidt on a normal sample (PyTorch uses QR;
    the distribution is the same: Haar-random with the sign fix)."""
    if tensor.dim() < 2:
        raise ValueError("Only tensors with 2 or more dimensions are supported")
    if tensor.numel() == 0:
        return tensor
    from .._random import randn
    from .._shape import stack
    rows = tensor.shape[0]
    cols = tensor.numel() // rows
    flat = randn(rows, cols, generator=generator, dtype=lucid_double())
    mat = flat.t() if rows < cols else flat
    basis = []
    for j in range(mat.shape[1]):
        v = mat[:, j].clone()
        for q in basis:
            v = v - (q * v).sum() * q
        basis.append(v / v.pow(2).sum().sqrt())
    q = stack(basis, dim=1)
    if rows < cols:
        q = q.t()
    with no_grad():
        tensor.view_as(q).copy_(q * gain) if tensor.is_contiguous() else tensor.copy_((q * gain).reshape(tensor.shape))
    return tensor


def lucid_double():
    from .. import float64
    return float64


def sparse_(tensor, sparsity, std=0.01, generator=None):
    if tensor.dim() != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    rows, cols = tensor.shape
    num_zeros = int(math.ceil(sparsity * rows))
    from .._random import randperm
    with no_grad():
        tensor.normal_(0, std, generator=generator)
        for c in range(cols):
            idx = randperm(rows, generator=generator)[:num_zeros]
            if num_zeros:
                tensor[idx, c] = 0
    return tensor


def _deprecated(new_name):
    """torch's deprecated name for an initialiser (nn.init.normal for normal_): a FutureWarning, then the call."""
    new = globals()[new_name]

    def init(*args, **kwargs):
        warnings.warn(f"`nn.init.{new_name[:-1]}` is now deprecated in favor of `nn.init.{new_name}`.", FutureWarning,
                      stacklevel=2)
        return new(*args, **kwargs)
    init.__name__ = init.__qualname__ = new_name[:-1]
    return init


for _new in ("uniform_", "normal_", "constant_", "eye_", "dirac_", "xavier_uniform_", "xavier_normal_",
             "kaiming_uniform_", "kaiming_normal_", "orthogonal_", "sparse_"):
    globals()[_new[:-1]] = _deprecated(_new)
del _new
