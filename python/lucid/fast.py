"""lucid.fast: MLX's mx.fast operations under their names and signatures, each one
kernel a device with its gradient. rms_norm and layer_norm are the normalisation
kernels of lucid.nn.functional (one row kernel forward, one backward),
scaled_dot_product_attention is lucid.nn.functional's (cuDNN's flash attention for
float16/bfloat16 on the GPU), and rope is its own primitive (csrc/ops/prims/rope.h)."""

from __future__ import annotations

from . import _C
from ._tensor import Tensor

__all__ = ["rms_norm", "layer_norm", "rope", "scaled_dot_product_attention"]


def rms_norm(x, weight, eps):
    """x / sqrt(mean(x^2, last axis) + eps), times weight (over the last axis; None for none)."""
    from .nn import functional as F
    return F.rms_norm(x, (x.shape[-1],), weight, eps)


def layer_norm(x, weight, bias, eps):
    """(x - mean) / sqrt(var + eps) over the last axis, times weight plus bias (either may be None)."""
    from .nn import functional as F
    return F.layer_norm(x, (x.shape[-1],), weight, bias, eps)


def rope(a, dims, *, traditional, base, scale, offset, freqs=None):
    """Rotary positional encoding of a [..., L, D]: the first `dims` features of row l are
    turned in pairs ((2i, 2i + 1) when traditional, else (i, i + dims / 2)) by the angle
    (offset + l) * scale * base^(-2i / dims). `offset` (an int or a one-element tensor) is
    the position of the first row, a KV cache's length. `freqs` is not supported (MLX's
    custom frequencies): pass base."""
    if freqs is not None:
        raise NotImplementedError("fast.rope: custom freqs are not supported; pass base")
    if isinstance(offset, Tensor):
        if offset.numel() != 1:
            raise ValueError(f"fast.rope: offset must be an int or a one-element tensor, got shape {tuple(offset.shape)}")
        offset = int(offset.item())
    if not isinstance(dims, int) or isinstance(dims, bool):
        raise TypeError(f"fast.rope: dims must be an int, got {type(dims).__name__}")
    if base is None:
        raise ValueError("fast.rope: base must be given when freqs is not")
    return _C._rope(a, dims, bool(traditional), float(base), float(scale), int(offset))


def scaled_dot_product_attention(q, k, v, *, scale, mask=None):
    """softmax(q @ k^T * scale + mask) @ v over [B, H, L, D] operands (k and v may have fewer
    heads: grouped-query attention). mask: None, "causal", a boolean tensor (True takes
    part) or an additive one."""
    from .nn import functional as F
    causal = isinstance(mask, str)
    if causal and mask != "causal":
        raise ValueError(f'fast.scaled_dot_product_attention: mask must be None, "causal" or a tensor, got {mask!r}')
    gqa = k.shape[-3] != q.shape[-3] if q.ndim >= 3 and k.ndim >= 3 else False
    return F.scaled_dot_product_attention(q, k, v, attn_mask=None if causal else mask, is_causal=causal,
                                          scale=scale, enable_gqa=gqa)
