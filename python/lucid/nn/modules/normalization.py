"""LayerNorm, RMSNorm, GroupNorm, LocalResponseNorm and CrossMapLRN2d
(torch.nn.modules.normalization). LayerNorm's and RMSNorm's numeric part is one fused
engine op each."""

from ...autograd import Function
from .. import _functional_batchnorm as F
from .._functional_seq import layer_norm, rms_norm
from .batchnorm import register_affine, reset_affine
from .module import Module

__all__ = ["LocalResponseNorm", "CrossMapLRN2d", "LayerNorm", "GroupNorm", "RMSNorm"]


class LocalResponseNorm(Module):
    """Normalises each element by the squares of its `size` neighbouring channels."""

    def __init__(self, size, alpha=1e-4, beta=0.75, k=1.0):
        super().__init__()
        self.size, self.alpha, self.beta, self.k = size, alpha, beta, k

    def forward(self, input):
        return F.local_response_norm(input, self.size, self.alpha, self.beta, self.k)

    def extra_repr(self):
        return f"{self.size}, alpha={self.alpha}, beta={self.beta}, k={self.k}"


class _CrossMapLRN2dFunction(Function):
    """torch's legacy CrossMapLRN2d (Lua Torch's), forward and backward as it writes them:
    each channel's scale is a running sum of squares whose window it updates channel by
    channel (asymmetric near the edges, so not LocalResponseNorm's), and its backward is
    its own formula, not the forward's exact derivative."""

    @staticmethod
    def forward(ctx, input, size, alpha, beta, k):
        from ... import stack, zeros_like
        if input.dim() != 4:
            raise ValueError(f"CrossMapLRN2d: Expected input to be 4D, got {input.dim()}D instead.")
        channels = input.shape[1]
        square = input.pow(2)
        pre_pad = int((size - 1) / 2 + 1)
        scale = zeros_like(input[:, 0])
        for c in range(min(pre_pad, channels)):
            scale = scale + square[:, c]
        scales = [scale]
        for c in range(1, channels):
            if c < channels - pre_pad + 1:
                scale = scale + square[:, c + pre_pad - 1]
            if c > pre_pad:
                scale = scale - square[:, c - pre_pad]
            scales.append(scale)
        scale = stack(scales, 1) * (alpha / size) + k
        output = scale.pow(-beta) * input
        ctx.save_for_backward(input, output, scale)
        ctx.size, ctx.alpha, ctx.beta = size, alpha, beta
        return output

    @staticmethod
    def backward(ctx, grad_output):
        from ... import stack, zeros, zeros_like
        input, output, scale = ctx.saved_tensors
        size, channels = ctx.size, input.shape[1]
        if size < 2:  # (torch's formula reads past its buffer there, and raises)
            raise RuntimeError("CrossMapLRN2d: the gradient needs size >= 2")
        grad_input = scale.pow(-ctx.beta) * grad_output
        ratio = grad_output * output / scale
        padded = zeros(input.shape[0], channels + size - 1, *input.shape[2:], dtype=input.dtype, device=input.device)
        inverse_pre_pad = int(size - (size - 1) / 2)
        padded[:, inverse_pre_pad:inverse_pre_pad + channels] = ratio
        accum = zeros_like(padded[:, 0])
        for j in range(size - 1):
            accum = accum + padded[:, j]
        coefficient = -2 * ctx.alpha * ctx.beta / size
        grads = []
        for c in range(channels):
            accum = accum + padded[:, c + size - 1]
            grads.append(grad_input[:, c] + coefficient * input[:, c] * accum)
            accum = accum - padded[:, c]
        return stack(grads, 1), None, None, None, None


class CrossMapLRN2d(Module):
    """torch's legacy cross-channel LRN of [N, C, H, W] inputs (see _CrossMapLRN2dFunction);
    LocalResponseNorm is the normalisation new code wants."""

    def __init__(self, size, alpha=1e-4, beta=0.75, k=1):
        super().__init__()
        self.size, self.alpha, self.beta, self.k = size, alpha, beta, k

    def forward(self, input):
        return _CrossMapLRN2dFunction.apply(input, self.size, self.alpha, self.beta, self.k)

    def extra_repr(self):
        return f"{self.size}, alpha={self.alpha}, beta={self.beta}, k={self.k}"


def _shape(normalized_shape):
    if isinstance(normalized_shape, int):
        return (normalized_shape,)
    # (a tensor has at most 64 dims: a longer shape can never match, and a range of
    # 2**62 sizes would take forever to list)
    if hasattr(normalized_shape, "__len__") and len(normalized_shape) > 64:
        raise RuntimeError(f"normalized_shape has {len(normalized_shape)} dims; tensors have at most 64 dimensions")
    return tuple(int(s) for s in normalized_shape)


class LayerNorm(Module):
    def __init__(self, normalized_shape, eps=1e-5, elementwise_affine=True, bias=True, device=None, dtype=None):
        super().__init__()
        self.normalized_shape = _shape(normalized_shape)
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        self._bias_arg = bias
        register_affine(self, self.normalized_shape, elementwise_affine, bias, device, dtype)
        self.reset_parameters()

    def reset_parameters(self):
        reset_affine(self)

    def forward(self, input):
        return layer_norm(input, self.normalized_shape, self.weight, self.bias, self.eps)

    def extra_repr(self):
        return (f"{self.normalized_shape}, eps={self.eps}, elementwise_affine={self.elementwise_affine}, "
                f"bias={self.bias is not None}")


class GroupNorm(Module):
    """Normalises each sample over groups of num_channels / num_groups channels."""

    def __init__(self, num_groups, num_channels, eps=1e-5, affine=True, device=None, dtype=None, *, bias=True):
        super().__init__()
        if num_channels % num_groups != 0:
            raise ValueError("num_channels must be divisible by num_groups")
        self.num_groups = num_groups
        self.num_channels = num_channels
        self.eps = eps
        self.affine = affine
        register_affine(self, (num_channels,), affine, bias, device, dtype)
        self.reset_parameters()

    def reset_parameters(self):
        reset_affine(self)

    def forward(self, input):
        return F.group_norm(input, self.num_groups, self.weight, self.bias, self.eps)

    def extra_repr(self):
        return (f"{self.num_groups}, {self.num_channels}, eps={self.eps}, affine={self.affine}, "
                f"bias={self.bias is not None}")


class RMSNorm(Module):
    def __init__(self, normalized_shape, eps=None, elementwise_affine=True, device=None, dtype=None):
        super().__init__()
        self.normalized_shape = _shape(normalized_shape)
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        register_affine(self, self.normalized_shape, elementwise_affine, None, device, dtype)
        self.reset_parameters()

    def reset_parameters(self):
        reset_affine(self)

    def forward(self, x):
        return rms_norm(x, self.normalized_shape, self.weight, self.eps)

    def extra_repr(self):
        return f"{self.normalized_shape}, eps={self.eps}, elementwise_affine={self.elementwise_affine}"
