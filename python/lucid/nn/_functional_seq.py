"""Sequence-model functions of lucid.nn.functional (issue 5): layer_norm, rms_norm,
scaled_dot_product_attention, multi_head_attention_forward and ctc_loss.

layer_norm / rms_norm are one fused engine op (csrc/ops/seq_norm.cpp); attention is a
composition of matmul and softmax, whose VJPs are products and the softmax adjoint."""

import math

from .. import _C
from ..amp._autocast import policy as _autocast_policy  # Note [Autocast]

__all__ = ["layer_norm", "rms_norm", "scaled_dot_product_attention", "multi_head_attention_forward", "ctc_loss"]


def _normalized_shape(normalized_shape):
    if isinstance(normalized_shape, int):
        return (normalized_shape,)
    return tuple(int(s) for s in normalized_shape)


def _check_norm(name, input, shape, weight, bias):
    k = len(shape)
    if k == 0 or tuple(input.shape[input.ndim - k:]) != shape or input.ndim < k:
        raise RuntimeError(f"{name}: given normalized_shape={list(shape)}, expected input with shape "
                           f"[*, {', '.join(str(s) for s in shape)}], but got input of size {list(input.shape)}")
    for what, t in (("weight", weight), ("bias", bias)):
        if t is not None and tuple(t.shape) != shape:
            raise RuntimeError(f"{name}: expected {what} of shape {list(shape)} (normalized_shape), "
                               f"got {list(t.shape)}")
    return k


@_autocast_policy("layer_norm")
def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5):
    """(x - mean) / sqrt(var + eps) * weight + bias over the last len(normalized_shape) dims."""
    shape = _normalized_shape(normalized_shape)
    k = _check_norm("layer_norm", input, shape, weight, bias)
    return _C._norm_last_dims(input, k, weight, bias, float(eps), False)


@_autocast_policy("rms_norm")
def rms_norm(input, normalized_shape, weight=None, eps=None):
    """x / sqrt(mean(x^2) + eps) * weight; eps=None is torch.finfo(input.dtype).eps."""
    shape = _normalized_shape(normalized_shape)
    k = _check_norm("rms_norm", input, shape, weight, None)
    if eps is None:
        from .. import finfo
        eps = finfo(input.dtype).eps
    return _C._norm_last_dims(input, k, weight, None, float(eps), True)


# ---- attention -----------------------------------------------------------------------------------
def _float_mask(mask, dtype, name):
    """A boolean mask where True means 'take part' as an additive float mask."""
    from .. import zeros_like
    if mask is None:
        return None
    if mask.dtype.is_floating_point:
        return mask
    if str(mask.dtype) != "lucid.bool":
        raise TypeError(f"{name}: expected a bool or floating attn_mask, got {mask.dtype}")
    z = zeros_like(mask, dtype=dtype)
    return z.masked_fill(mask.logical_not(), float("-inf"))


@_autocast_policy("scaled_dot_product_attention")
def scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None,
                                 enable_gqa=False):
    """softmax(q @ k^T * scale + mask) @ v over the last two dims; a boolean mask's True
    entries take part, a float mask is added. Dropout applies to the weights whenever
    dropout_p > 0 (as torch's functional form)."""
    from .. import ones, tril
    from .functional import dropout, softmax
    if query.ndim < 2 or key.ndim < 2 or value.ndim < 2:
        raise RuntimeError("scaled_dot_product_attention: expected query, key and value with at least 2 dims, got "
                           f"{query.ndim}, {key.ndim}, {value.ndim}")
    if query.shape[-1] != key.shape[-1]:
        raise RuntimeError(f"scaled_dot_product_attention: query's last dim ({query.shape[-1]}) must equal key's "
                           f"({key.shape[-1]})")
    if key.shape[-2] != value.shape[-2]:
        raise RuntimeError(f"scaled_dot_product_attention: key and value must have the same sequence length, got "
                           f"{key.shape[-2]} and {value.shape[-2]}")
    if is_causal and attn_mask is not None:
        raise RuntimeError("_scaled_dot_product_attention: Explicit attn_mask should not be set when is_causal=True")
    L, S = query.shape[-2], key.shape[-2]
    s = 1.0 / math.sqrt(query.shape[-1]) if scale is None else scale
    fused_allowed, math_allowed = _allowed_kernels(query)
    if fused_allowed and 0.0 <= dropout_p < 1.0 and query.ndim == key.ndim == value.ndim and \
            query.ndim in (3, 4) and (attn_mask is None or not attn_mask.requires_grad):
        # [N, L, E] as one batch of N heads (MultiheadAttention's [batch * heads, L, head_dim])
        q4, k4, v4 = (t.unsqueeze(0) if t.ndim == 3 else t for t in (query, key, value))
        # (a mask is laid out for the kernel only where one may run: 16-bit on the GPU)
        half = q4.device.type != "cpu" and q4.dtype.itemsize == 2 and q4.dtype.is_floating_point
        mask4 = _fused_mask(attn_mask, q4, k4) if attn_mask is not None and half else None
        if (attn_mask is None or mask4 is not None) and \
                _fusable(q4, k4, v4, enable_gqa, is_causal, mask4, dropout_p):
            out = _fused(q4, k4, v4, float(s), bool(is_causal), mask4, float(dropout_p))
            return out.squeeze(0) if query.ndim == 3 else out
    if not math_allowed:
        raise RuntimeError("No available kernel. Aborting execution. (scaled_dot_product_attention: the math "
                           "kernel is switched off (sdpa_kernel / lucid.backends.cuda.enable_math_sdp) and lucid's "
                           "fused kernel, cuDNN's flash attention, "
                           + ("is switched off too)" if not fused_allowed else
                              "does not take these inputs: it needs float16 or bfloat16 [B, H, L, E] operands "
                              "of one batch and a mask that takes no gradient)"))
    if enable_gqa and query.ndim >= 3 and key.shape[-3] != query.shape[-3]:
        hq, hk = query.shape[-3], key.shape[-3]
        if hq % hk or hq % value.shape[-3]:
            raise RuntimeError(f"scaled_dot_product_attention: with enable_gqa the query heads ({hq}) must be a "
                               f"multiple of the key/value heads ({hk}, {value.shape[-3]})")
        key, value = _repeat_heads(key, hq // hk), _repeat_heads(value, hq // value.shape[-3])
    attn = (query * s).matmul(key.transpose(-2, -1))
    if is_causal:
        attn_mask = tril(ones(L, S, dtype=_bool_dtype(), device=query.device))
    mask = _float_mask(attn_mask, attn.dtype, "scaled_dot_product_attention")
    empty_rows = None
    # (query i of a causal mask sees keys 0..i, never none: no check, a host wait on the GPU)
    if mask is not None and not is_causal:
        # torch's "safe softmax": a query that may attend to nothing gets zeros, not
        # NaN. Such rows are unmasked before the softmax (so no NaN reaches the
        # backward either) and zeroed after it.
        empty_rows = (mask == float("-inf")).all(-1, keepdim=True)
        if bool(empty_rows.any()):
            mask = mask.masked_fill(empty_rows, 0.0)
        else:
            empty_rows = None
    if mask is not None:
        attn = attn + mask
    attn = softmax(attn, -1)
    if empty_rows is not None:
        attn = attn.masked_fill(empty_rows, 0.0)
    if dropout_p > 0.0:
        attn = dropout(attn, dropout_p, True)
    return attn.matmul(value)


def _allowed_kernels(query):
    """(fused, math): which of lucid's attention kernels the switches allow for `query`'s
    device (sdpa_kernel / lucid.backends.cuda.enable_*_sdp). They select GPU kernels:
    the CPU's one form always runs."""
    if query.device.type == "cpu":
        return True, True
    from ..backends.cuda import _sdp
    return (_sdp["flash"] or _sdp["mem_efficient"] or _sdp["cudnn"]), _sdp["math"]


def _fused_mask(attn_mask, q, k):
    """attn_mask as the fused kernel takes it: an additive mask of q's dtype, [1 or B, 1
    or H, L, S], contiguous; None when there is none or it does not broadcast so."""
    if attn_mask is None:
        return None
    mask = _float_mask(attn_mask, q.dtype, "scaled_dot_product_attention")
    if mask.ndim > 4:
        return None
    mask = mask.reshape((1,) * (4 - mask.ndim) + tuple(mask.shape))
    B, H, L, S = q.shape[0], q.shape[1], q.shape[2], k.shape[2]
    b, h, l, s = mask.shape
    if b not in (1, B) or h not in (1, H) or l not in (1, L) or s not in (1, S):
        return None
    return mask.to(q.dtype).expand(b, h, L, S).contiguous()


def _fused(q, k, v, scale, is_causal, mask, dropout_p):
    """The fused kernel's attention (dropout inside it: cuDNN's RNG on the GPU). With a
    mask, a query it hides every key from gets zeros (torch's "safe softmax", as the
    composite form): its row of the mask is cleared before the kernel and its output
    zeroed after, on the device (no host wait), so no NaN reaches the output or the
    gradients."""
    if mask is None:
        return _C._fused_attention(q, k, v, scale, is_causal, None, dropout_p)[0]
    hidden = (mask == float("-inf")).all(-1, keepdim=True)
    out = _C._fused_attention(q, k, v, scale, is_causal, mask.masked_fill(hidden, 0.0), dropout_p)[0]
    return out.masked_fill(hidden, 0.0)


def _fusable(q, k, v, enable_gqa, is_causal, mask=None, dropout_p=0.0):
    """Whether the fused kernel computes this attention: [B, H, S, D] operands of one
    batch (grouped-query heads with enable_gqa), which the device's kernel takes
    (on the GPU, cuDNN's flash attention for float16/bfloat16, with an additive mask
    and dropout too). Elsewhere the composite form runs: float32 and float64 exactly
    as written, a mask that takes a gradient, and the CPU, where the composite's
    matrix products are faster than a loop."""
    if not q.shape[0] == k.shape[0] == v.shape[0]:
        return False
    if k.shape[1] != q.shape[1] and not enable_gqa:
        return False
    return _C._fused_attention_supported(q, k, v, bool(is_causal), mask, float(dropout_p))


def _repeat_heads(t, r):
    """repeat_interleave(r, dim=-3): each key/value head serves r query heads."""
    if r == 1:
        return t
    shape = list(t.shape)
    e = t.unsqueeze(-3).expand(*shape[:-2], r, *shape[-2:])
    return e.reshape(*shape[:-3], shape[-3] * r, *shape[-2:])


def _bool_dtype():
    from .. import _dtype
    return _dtype.bool


def _canonical_mask(mask, name, dtype):
    """torch's _canonical_mask: a bool mask (True = masked out) becomes -inf/0."""
    if mask is None:
        return None
    if mask.dtype == _bool_dtype():
        from .. import zeros_like
        return zeros_like(mask, dtype=dtype).masked_fill(mask, float("-inf"))
    if not mask.dtype.is_floating_point:
        raise AssertionError(f"only bool and floating types of {name} are supported")
    return mask


def _check_key_padding_mask(key_padding_mask, bsz, src_len):
    if tuple(key_padding_mask.shape) != (bsz, src_len):
        raise AssertionError(f"expecting key_padding_mask shape of {(bsz, src_len)}, but got "
                             f"{tuple(key_padding_mask.shape)}")


def _heads_mask(attn_mask, key_padding_mask, bsz, num_heads, src_len):
    """The additive float masks of multi_head_attention_forward ([1 or batch * heads, L,
    S] and [batch, S]) as one mask over [batch, heads, L, S] (broadcast dims of 1)."""
    if attn_mask is not None and attn_mask.shape[0] == bsz * num_heads:
        attn_mask = attn_mask.reshape(bsz, num_heads, *attn_mask.shape[1:])
    if key_padding_mask is None:
        return attn_mask
    _check_key_padding_mask(key_padding_mask, bsz, src_len)
    kpm = key_padding_mask.reshape(bsz, 1, 1, src_len)
    return kpm if attn_mask is None else attn_mask + kpm


def multi_head_attention_forward(query, key, value, embed_dim_to_check, num_heads, in_proj_weight, in_proj_bias,
                                 bias_k, bias_v, add_zero_attn, dropout_p, out_proj_weight, out_proj_bias,
                                 training=True, key_padding_mask=None, need_weights=True, attn_mask=None,
                                 use_separate_proj_weight=False, q_proj_weight=None, k_proj_weight=None,
                                 v_proj_weight=None, static_k=None, static_v=None, average_attn_weights=True,
                                 is_causal=False):
    """torch.nn.functional.multi_head_attention_forward on (L, N, E) inputs (or unbatched (L, E))."""
    from .. import cat, zeros
    from .functional import dropout, linear, pad, softmax
    batched = query.ndim == 3
    if query.ndim not in (2, 3) or key.ndim != query.ndim or value.ndim != query.ndim:
        raise AssertionError(f"query, key and value must all be 2-D (unbatched) or 3-D (batched), got "
                             f"{query.ndim}-D, {key.ndim}-D and {value.ndim}-D")
    if not batched:
        query, key, value = query.unsqueeze(1), key.unsqueeze(1), value.unsqueeze(1)
        if key_padding_mask is not None:
            key_padding_mask = key_padding_mask.unsqueeze(0)
    tgt_len, bsz, embed_dim = query.shape
    src_len = key.shape[0]
    if embed_dim != embed_dim_to_check:
        raise AssertionError(f"was expecting embedding dimension of {embed_dim_to_check}, but got {embed_dim}")
    head_dim = embed_dim // num_heads
    if head_dim * num_heads != embed_dim:
        raise AssertionError(f"embed_dim {embed_dim} not divisible by num_heads {num_heads}")
    if key.shape[:2] != value.shape[:2]:
        raise AssertionError(f"key shape {list(key.shape)} does not match value shape {list(value.shape)}")
    if is_causal and attn_mask is None:
        raise RuntimeError("Need attn_mask if specifying the is_causal hint. You may use the Transformer module "
                           "method `generate_square_subsequent_mask` to create this mask.")
    dtype = query.dtype
    key_padding_mask = _canonical_mask(key_padding_mask, "key_padding_mask", dtype)
    attn_mask = _canonical_mask(attn_mask, "attn_mask", dtype)

    if not training:
        dropout_p = 0.0
    # The fused path (below) with a batch-first module's inputs, [L, batch, E] views of
    # contiguous [batch, L, E] tensors: projected as those, each linear is one product with
    # its bias in the epilogue and the result comes back contiguous, where seen as
    # [L, batch, E] the rows do not merge and the product copied them first.
    fused = not need_weights and not add_zero_attn
    batch_major = (fused and bias_k is None and batched and
                   all(not t.is_contiguous() and t.transpose(0, 1).is_contiguous() for t in (query, key, value)))
    if batch_major:
        same_qk, same_kv = query is key, key is value
        query = query.transpose(0, 1)
        key = query if same_qk else key.transpose(0, 1)
        value = key if same_kv else value.transpose(0, 1)

    # input projections: one gemm for self-attention, else one per operand
    if not use_separate_proj_weight:
        if query is key and key is value:
            q, k, v = linear(query, in_proj_weight, in_proj_bias).chunk(3, dim=-1)
        else:
            w_q, w_k, w_v = in_proj_weight.chunk(3)
            b_q, b_k, b_v = in_proj_bias.chunk(3) if in_proj_bias is not None else (None, None, None)
            q, k, v = linear(query, w_q, b_q), linear(key, w_k, b_k), linear(value, w_v, b_v)
    else:
        b_q, b_k, b_v = in_proj_bias.chunk(3) if in_proj_bias is not None else (None, None, None)
        q, k, v = linear(query, q_proj_weight, b_q), linear(key, k_proj_weight, b_k), linear(value, v_proj_weight, b_v)

    if attn_mask is not None:
        if attn_mask.ndim == 2:
            if tuple(attn_mask.shape) != (tgt_len, src_len):
                raise RuntimeError(f"The shape of the 2D attn_mask is {list(attn_mask.shape)}, but should be "
                                   f"{[tgt_len, src_len]}.")
            attn_mask = attn_mask.unsqueeze(0)
        elif attn_mask.ndim == 3:
            if tuple(attn_mask.shape) != (bsz * num_heads, tgt_len, src_len):
                raise RuntimeError(f"The shape of the 3D attn_mask is {list(attn_mask.shape)}, but should be "
                                   f"{[bsz * num_heads, tgt_len, src_len]}.")
        else:
            raise RuntimeError(f"attn_mask's dimension {attn_mask.ndim} is not supported")
    if bias_k is not None and bias_v is not None:
        k = cat([k, bias_k.repeat(1, bsz, 1)])
        v = cat([v, bias_v.repeat(1, bsz, 1)])
        if attn_mask is not None:
            attn_mask = pad(attn_mask, (0, 1))
        if key_padding_mask is not None:
            key_padding_mask = pad(key_padding_mask, (0, 1))

    if fused:
        # [batch, heads, L, head_dim] views of the projections, no copy: the fused
        # kernel reads any strides, and its output is laid out in q's memory order
        # ([L, batch, heads, head_dim], or batch first), so that the out projection
        # reads it as it is
        if batch_major:
            q, k, v = (t.reshape(bsz, t.shape[1], num_heads, head_dim).transpose(1, 2) for t in (q, k, v))
        else:
            q, k, v = (t.reshape(t.shape[0], bsz, num_heads, head_dim).permute(1, 2, 0, 3) for t in (q, k, v))
        mask = _heads_mask(attn_mask, key_padding_mask, bsz, num_heads, k.shape[2])
        out = scaled_dot_product_attention(q, k, v, mask, dropout_p)
        if batch_major:
            out = out.transpose(1, 2).reshape(bsz * tgt_len, embed_dim)
            out = linear(out, out_proj_weight, out_proj_bias).reshape(bsz, tgt_len, embed_dim).transpose(0, 1)
            return out, None
        out = out.permute(2, 0, 1, 3).reshape(tgt_len * bsz, embed_dim)
        out = linear(out, out_proj_weight, out_proj_bias).reshape(tgt_len, bsz, embed_dim)
        return (out if batched else out.squeeze(1)), None
    q = q.reshape(tgt_len, bsz * num_heads, head_dim).transpose(0, 1)
    k = k.reshape(k.shape[0], bsz * num_heads, head_dim).transpose(0, 1)
    v = v.reshape(v.shape[0], bsz * num_heads, head_dim).transpose(0, 1)
    if add_zero_attn:
        k = cat([k, zeros(bsz * num_heads, 1, head_dim, dtype=k.dtype, device=k.device)], dim=1)
        v = cat([v, zeros(bsz * num_heads, 1, head_dim, dtype=v.dtype, device=v.device)], dim=1)
        if attn_mask is not None:
            attn_mask = pad(attn_mask, (0, 1))
        if key_padding_mask is not None:
            key_padding_mask = pad(key_padding_mask, (0, 1))
    src_len = k.shape[1]
    if key_padding_mask is not None:
        _check_key_padding_mask(key_padding_mask, bsz, src_len)
        kpm = key_padding_mask.reshape(bsz, 1, 1, src_len).expand(bsz, num_heads, 1, src_len)
        kpm = kpm.reshape(bsz * num_heads, 1, src_len)
        attn_mask = kpm if attn_mask is None else attn_mask + kpm

    if not need_weights:  # as torch: the attention itself is scaled_dot_product_attention
        out = scaled_dot_product_attention(q, k, v, attn_mask, dropout_p)
        out = out.transpose(0, 1).reshape(tgt_len * bsz, embed_dim)
        out = linear(out, out_proj_weight, out_proj_bias).reshape(tgt_len, bsz, embed_dim)
        return (out if batched else out.squeeze(1)), None
    scores = (q * (1.0 / math.sqrt(head_dim))).matmul(k.transpose(-2, -1))
    if attn_mask is not None:
        scores = scores + attn_mask
    weights = softmax(scores, -1)
    if dropout_p > 0.0:
        weights = dropout(weights, dropout_p, True)
    out = weights.matmul(v)  # (bsz * heads, L, head_dim)
    out = out.transpose(0, 1).reshape(tgt_len * bsz, embed_dim)
    out = linear(out, out_proj_weight, out_proj_bias).reshape(tgt_len, bsz, embed_dim)
    if not batched:
        out = out.squeeze(1)
    weights = weights.reshape(bsz, num_heads, tgt_len, src_len)
    if average_attn_weights:
        weights = weights.mean(dim=1)
    if not batched:
        weights = weights.squeeze(0)
    return out, weights


# ---- CTC ------------------------------------------------------------------------------------------
@_autocast_policy("ctc_loss")
def ctc_loss(log_probs, targets, input_lengths, target_lengths, blank=0, reduction="mean", zero_infinity=False):
    """Connectionist temporal classification loss (Graves et al. 2006). The alpha/beta
    recursions run in the engine (_C._ctc_loss_nll, log space, double); this parses the
    targets (padded (N, S) or concatenated 1-D) and applies zero_infinity and the
    reduction ('mean' divides each loss by its target length, then averages).
    Impossible alignments give inf (0 with zero_infinity). As in torch, the gradient
    is the one for logits passed through log_softmax first."""
    import lucid
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    batched = log_probs.ndim == 3
    if log_probs.ndim not in (2, 3):
        raise RuntimeError(f"ctc_loss: expected log_probs of shape (T, N, C) or (T, C), got {list(log_probs.shape)}")
    lp = log_probs if batched else log_probs.unsqueeze(1)
    N = lp.shape[1]

    def as_list(x, what):
        if isinstance(x, lucid.Tensor):
            if x.dtype.is_floating_point:
                raise RuntimeError(f"ctc_loss: {what} must be integers, got {x.dtype}")
            return [int(v) for v in x.reshape(-1).tolist()]
        if isinstance(x, int):
            return [x]
        return [int(v) for v in x]

    il, tl = as_list(input_lengths, "input_lengths"), as_list(target_lengths, "target_lengths")
    if len(il) != N or len(tl) != N:
        raise RuntimeError(f"ctc_loss: expected {N} input_lengths and target_lengths, got {len(il)} and {len(tl)}")
    if any(n < 0 for n in tl):
        raise RuntimeError(f"ctc_loss: target_lengths must be non-negative, got {tl}")
    if targets.dtype.is_floating_point:
        raise RuntimeError(f"ctc_loss: targets must be integers, got {targets.dtype}")
    tflat = [int(v) for v in targets.reshape(-1).tolist()]
    if targets.ndim == 2:  # (N, S) padded
        S = targets.shape[1]
        if targets.shape[0] != N:
            raise RuntimeError(f"ctc_loss: targets has {targets.shape[0]} rows for a batch of {N}")
        if any(n > S for n in tl):
            raise RuntimeError(f"ctc_loss: a target length ({max(tl)}) exceeds the targets' padded length ({S})")
        rows = [tflat[b * S: b * S + tl[b]] for b in range(N)]
    else:  # concatenated targets (or the one row of an unbatched call)
        if sum(tl) > len(tflat):
            raise RuntimeError(f"ctc_loss: target_lengths sum to {sum(tl)} but targets has {len(tflat)} elements")
        rows, o = [], 0
        for b in range(N):
            rows.append(tflat[o:o + tl[b]])
            o += tl[b]
    smax = max(tl) if tl else 0
    padded = lucid.tensor([r + [0] * (smax - len(r)) for r in rows], dtype=lucid.int64,
                          device=lp.device).reshape(N, smax)
    loss = _C._ctc_loss_nll(lp, padded, il, tl, blank)
    if zero_infinity:
        loss = lucid.where(loss == float("inf"), lucid.zeros_like(loss), loss)
    if not batched:
        loss = loss.squeeze(0)
    if reduction == "none":
        return loss
    if reduction == "sum":
        return loss.sum()
    denom = lucid.tensor([max(v, 1) for v in tl], dtype=loss.dtype, device=loss.device)
    return (loss / (denom if batched else denom.squeeze(0))).mean()
