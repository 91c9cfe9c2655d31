"""Convolution, pooling and fold/unfold functions of lucid.nn.functional, with
torch.nn.functional's signatures. The arithmetic (im2col + GEMM, the pooling
windows) and the gradients are in C++ (csrc/ops/conv.cpp, pool.cpp); this file
turns int-or-tuple arguments into per-dim lists and handles padding='same'."""

import builtins as _builtins
import math as _math

from .. import _C

__all__ = ["conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d",
           "unfold", "fold", "max_pool1d", "max_pool2d", "max_pool3d", "avg_pool1d", "avg_pool2d", "avg_pool3d",
           "adaptive_avg_pool1d", "adaptive_avg_pool2d", "adaptive_avg_pool3d", "adaptive_max_pool1d",
           "adaptive_max_pool2d", "adaptive_max_pool3d", "lp_pool1d", "lp_pool2d", "lp_pool3d",
           "max_unpool1d", "max_unpool2d", "max_unpool3d", "max_pool1d_with_indices", "max_pool2d_with_indices",
           "max_pool3d_with_indices", "adaptive_max_pool1d_with_indices", "adaptive_max_pool2d_with_indices",
           "adaptive_max_pool3d_with_indices"]


def _ntuple(v, n, name="argument"):
    """An int or a sequence of n ints, as a list of n ints."""
    if isinstance(v, (list, tuple)) or (hasattr(v, "tolist") and not isinstance(v, int)):
        v = list(v.tolist() if hasattr(v, "tolist") else v)
        if len(v) == 1:
            v = v * n
        if len(v) != n:
            raise RuntimeError(f"expected {name} to be a single int or a tuple of {n} ints, but got {name}={v}")
        return [int(x) for x in v]
    return [int(v)] * n


def _check_weight(name, nsp, weight, transposed):
    if weight.ndim != nsp + 2:
        layout = "in_channels, out_channels/groups" if transposed else "out_channels, in_channels/groups"
        raise RuntimeError(f"{name}(): expected a {nsp + 2}-D weight [{layout}, *kernel_size], but got weight of "
                           f"size {list(weight.shape)}")


def _conv(name, nsp, input, weight, bias, stride, padding, dilation, groups):
    from .functional import pad as _pad
    _check_weight(name, nsp, weight, False)
    stride = _ntuple(stride, nsp, "stride")
    dilation = _ntuple(dilation, nsp, "dilation")
    if isinstance(padding, str):
        if padding == "valid":
            padding = [0] * nsp
        elif padding == "same":
            if any(s != 1 for s in stride):
                raise RuntimeError("padding='same' is not supported for strided convolutions")
            ks = weight.shape[2:]
            total = [dilation[d] * (ks[d] - 1) for d in range(nsp)]
            padding = [t // 2 for t in total]
            extra = [t - 2 * (t // 2) for t in total]  # odd totals: one more on the right, as torch
            if any(extra):
                pads = []
                for d in reversed(range(nsp)):
                    pads += [0, extra[d]]
                input = _pad(input, pads)
        else:
            raise RuntimeError(f"Invalid padding string: '{padding}'")
    else:
        padding = _ntuple(padding, nsp, "padding")
    return _C._convolution(name, input, weight, bias, stride, padding, dilation, False, [0] * nsp, int(groups))


def conv1d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    return _conv("conv1d", 1, input, weight, bias, stride, padding, dilation, groups)


def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    return _conv("conv2d", 2, input, weight, bias, stride, padding, dilation, groups)


def conv3d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    return _conv("conv3d", 3, input, weight, bias, stride, padding, dilation, groups)


def _conv_t(name, nsp, input, weight, bias, stride, padding, output_padding, groups, dilation):
    _check_weight(name, nsp, weight, True)
    if isinstance(padding, str):
        raise RuntimeError(f"{name}(): argument 'padding' must be an int or a tuple of ints, not str")
    return _C._convolution(name, input, weight, bias, _ntuple(stride, nsp, "stride"), _ntuple(padding, nsp, "padding"),
                           _ntuple(dilation, nsp, "dilation"), True, _ntuple(output_padding, nsp, "output_padding"),
                           int(groups))


def conv_transpose1d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    return _conv_t("conv_transpose1d", 1, input, weight, bias, stride, padding, output_padding, groups, dilation)


def conv_transpose2d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    return _conv_t("conv_transpose2d", 2, input, weight, bias, stride, padding, output_padding, groups, dilation)


def conv_transpose3d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    return _conv_t("conv_transpose3d", 3, input, weight, bias, stride, padding, output_padding, groups, dilation)


def unfold(input, kernel_size, dilation=1, padding=0, stride=1):
    """Sliding local blocks of a [N, C, H, W] input as [N, C * kh * kw, L] (im2col)."""
    return _C._im2col(input, _ntuple(kernel_size, 2, "kernel_size"), _ntuple(dilation, 2, "dilation"),
                      _ntuple(padding, 2, "padding"), _ntuple(stride, 2, "stride"))


def fold(input, output_size, kernel_size, dilation=1, padding=0, stride=1):
    """Sums sliding blocks [N, C * kh * kw, L] back into [N, C, *output_size] (col2im)."""
    return _C._col2im(input, _ntuple(output_size, 2, "output_size"), _ntuple(kernel_size, 2, "kernel_size"),
                      _ntuple(dilation, 2, "dilation"), _ntuple(padding, 2, "padding"), _ntuple(stride, 2, "stride"))


# ---- pooling --------------------------------------------------------------------

def _pool_args(nsp, kernel_size, stride, padding):
    k = _ntuple(kernel_size, nsp, "kernel_size")
    s = k if stride is None or (isinstance(stride, (list, tuple)) and len(stride) == 0) else \
        _ntuple(stride, nsp, "stride")
    return k, s, _ntuple(padding, nsp, "padding")


def _max_pool(name, nsp, input, kernel_size, stride, padding, dilation, ceil_mode):
    k, s, p = _pool_args(nsp, kernel_size, stride, padding)
    return _C._max_pool(name, input, k, s, p, _ntuple(dilation, nsp, "dilation"), bool(ceil_mode))


def max_pool1d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
                            return_indices=True):
    return _max_pool("max_pool1d", 1, input, kernel_size, stride, padding, dilation, ceil_mode)


def max_pool2d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
                            return_indices=True):
    return _max_pool("max_pool2d", 2, input, kernel_size, stride, padding, dilation, ceil_mode)


def max_pool3d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
                            return_indices=True):
    return _max_pool("max_pool3d", 3, input, kernel_size, stride, padding, dilation, ceil_mode)


def max_pool1d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
    out, idx = _max_pool("max_pool1d", 1, input, kernel_size, stride, padding, dilation, ceil_mode)
    return (out, idx) if return_indices else out


def max_pool2d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
    out, idx = _max_pool("max_pool2d", 2, input, kernel_size, stride, padding, dilation, ceil_mode)
    return (out, idx) if return_indices else out


def max_pool3d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
    out, idx = _max_pool("max_pool3d", 3, input, kernel_size, stride, padding, dilation, ceil_mode)
    return (out, idx) if return_indices else out


def _avg_pool(name, nsp, input, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override):
    k, s, p = _pool_args(nsp, kernel_size, stride, padding)
    return _C._avg_pool(name, input, k, s, p, bool(ceil_mode), bool(count_include_pad),
                        None if divisor_override is None else int(divisor_override))


def avg_pool1d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True):
    return _avg_pool("avg_pool1d", 1, input, kernel_size, stride, padding, ceil_mode, count_include_pad, None)


def avg_pool2d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
               divisor_override=None):
    return _avg_pool("avg_pool2d", 2, input, kernel_size, stride, padding, ceil_mode, count_include_pad,
                     divisor_override)


def avg_pool3d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
               divisor_override=None):
    return _avg_pool("avg_pool3d", 3, input, kernel_size, stride, padding, ceil_mode, count_include_pad,
                     divisor_override)


def _adaptive_size(input, output_size, nsp):
    if isinstance(output_size, (list, tuple)):
        sizes = list(output_size)
        if len(sizes) == 1:
            sizes = sizes * nsp
    else:
        sizes = [output_size] * nsp
    if len(sizes) != nsp:
        raise ValueError(f"adaptive_pool{nsp}d: output_size must be an int or a tuple of {nsp} ints, "
                         f"got {output_size}")
    shape = input.shape
    return [int(shape[input.ndim - nsp + d]) if v is None else int(v) for d, v in enumerate(sizes)]


def adaptive_avg_pool1d(input, output_size):
    return _C._adaptive_avg_pool("adaptive_avg_pool1d", input, _adaptive_size(input, output_size, 1))


def adaptive_avg_pool2d(input, output_size):
    return _C._adaptive_avg_pool("adaptive_avg_pool2d", input, _adaptive_size(input, output_size, 2))


def adaptive_avg_pool3d(input, output_size):
    return _C._adaptive_avg_pool("adaptive_avg_pool3d", input, _adaptive_size(input, output_size, 3))


def adaptive_max_pool1d_with_indices(input, output_size, return_indices=True):
    return _C._adaptive_max_pool("adaptive_max_pool1d", input, _adaptive_size(input, output_size, 1))


def adaptive_max_pool2d_with_indices(input, output_size, return_indices=True):
    return _C._adaptive_max_pool("adaptive_max_pool2d", input, _adaptive_size(input, output_size, 2))


def adaptive_max_pool3d_with_indices(input, output_size, return_indices=True):
    return _C._adaptive_max_pool("adaptive_max_pool3d", input, _adaptive_size(input, output_size, 3))


def adaptive_max_pool1d(input, output_size, return_indices=False):
    out, idx = adaptive_max_pool1d_with_indices(input, output_size)
    return (out, idx) if return_indices else out


def adaptive_max_pool2d(input, output_size, return_indices=False):
    out, idx = adaptive_max_pool2d_with_indices(input, output_size)
    return (out, idx) if return_indices else out


def adaptive_max_pool3d(input, output_size, return_indices=False):
    out, idx = adaptive_max_pool3d_with_indices(input, output_size)
    return (out, idx) if return_indices else out


def _lp_pool(nsp, input, norm_type, kernel_size, stride, ceil_mode):
    """As torch: (sum over the window of x^p)^(1/p), via avg_pool of x^p times the window size."""
    from .functional import relu
    k = _ntuple(kernel_size, nsp, "kernel_size")
    out = _avg_pool(f"lp_pool{nsp}d", nsp, input.pow(norm_type), k, stride, 0, ceil_mode, True, None)
    return (out.sign() * relu(out.abs())).mul(_math.prod(k)).pow(1.0 / norm_type)


def lp_pool1d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    return _lp_pool(1, input, norm_type, kernel_size, stride, ceil_mode)


def lp_pool2d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    return _lp_pool(2, input, norm_type, kernel_size, stride, ceil_mode)


def lp_pool3d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    return _lp_pool(3, input, norm_type, kernel_size, stride, ceil_mode)


def _unpool_output_size(input, nsp, kernel_size, stride, padding, output_size):
    shape = list(input.shape)
    default = [(shape[input.ndim - nsp + d] - 1) * stride[d] + kernel_size[d] - 2 * padding[d] for d in range(nsp)]
    if output_size is None:
        return default
    output_size = [int(v) for v in output_size]
    if len(output_size) == nsp + 2 or (len(output_size) == nsp + 1 and input.ndim == nsp + 1):
        output_size = output_size[len(output_size) - nsp:]
    if len(output_size) != nsp:
        raise ValueError(f"output_size should be a sequence containing {nsp} or {nsp + 2} elements, but it has a "
                         f"length of '{len(output_size)}'")
    for d in range(nsp):
        lo, hi = default[d] - stride[d], default[d] + stride[d]
        if not (lo < output_size[d] < hi):
            raise ValueError(f'invalid output_size "{output_size}" (dim {d} must be between {lo} and {hi})')
    return output_size


def _max_unpool(name, nsp, input, indices, kernel_size, stride, padding, output_size):
    """Zeros of the output size with input written at `indices` (flat spatial
    positions, as max_pool returns them): a scatter, so the gradient is a gather."""
    from .. import zeros
    k, s, p = _pool_args(nsp, kernel_size, stride, padding)
    if input.ndim not in (nsp + 1, nsp + 2):
        raise RuntimeError(f"{name}(): Expected {nsp + 1}D or {nsp + 2}D input, but got input of size: "
                           f"{list(input.shape)}")
    if tuple(indices.shape) != tuple(input.shape):
        raise RuntimeError(f"{name}(): Expected shape of indices to be same as that of the input tensor "
                           f"({list(input.shape)}) but got indices tensor with shape: {list(indices.shape)}")
    out = _unpool_output_size(input, nsp, k, s, p, output_size)
    lead = list(input.shape[:input.ndim - nsp])
    flat = zeros(lead + [_math.prod(out)], dtype=input.dtype, device=input.device)
    nl = len(lead)
    res = flat.scatter(nl, indices.flatten(nl), input.flatten(nl))
    return res.reshape(lead + out)


def max_unpool1d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    return _max_unpool("max_unpool1d", 1, input, indices, kernel_size, stride, padding, output_size)


def max_unpool2d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    return _max_unpool("max_unpool2d", 2, input, indices, kernel_size, stride, padding, output_size)


def max_unpool3d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    return _max_unpool("max_unpool3d", 3, input, indices, kernel_size, stride, padding, output_size)


del _builtins
