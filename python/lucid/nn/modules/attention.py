"""Upstream Lucid's attention variants beside torch's MultiheadAttention: grouped-query
attention (Ainslie et al. 2023: groups of query heads share one key / value head) and
multi-query attention (Shazeer 2019: one key / value head for all). Their arguments,
inputs, masks and outputs are MultiheadAttention's; only the key and value projections
are narrower, num_kv_heads * head_dim rows instead of embed_dim, which is what shrinks a
KV cache.

The forward runs MultiheadAttention's own functional form with the key / value weights
(and biases) repeated per query head, query head h reading key / value head
h // (num_heads // num_kv_heads): the masks, dropout, returned weights and both layouts
are then exactly MultiheadAttention's, and gradients reach the compact weights through
the repeat. The price is the key and value products computed once per query head
rather than once per key / value head."""

from ... import cat
from .. import init
from ..parameter import Parameter
from .._functional_seq import multi_head_attention_forward
from .linear import NonDynamicallyQuantizableLinear
from .module import Module

__all__ = ["GroupedQueryAttention", "MultiQueryAttention"]


class GroupedQueryAttention(Module):
    """Attention with num_heads query heads and num_kv_heads key / value heads (a divisor
    of num_heads). Parameters: q_proj_weight [embed_dim, embed_dim], k_proj_weight
    [num_kv_heads * head_dim, kdim], v_proj_weight [num_kv_heads * head_dim, vdim],
    in_proj_bias (the three biases in that order), out_proj, and bias_k / bias_v
    [1, 1, num_kv_heads * head_dim] with add_bias_kv. num_kv_heads == num_heads is
    MultiheadAttention with separate projection weights."""

    def __init__(self, embed_dim, num_heads, num_kv_heads, dropout=0.0, bias=True, add_bias_kv=False,
                 add_zero_attn=False, kdim=None, vdim=None, batch_first=False, device=None, dtype=None):
        for name, v in (("embed_dim", embed_dim), ("num_heads", num_heads), ("num_kv_heads", num_kv_heads)):
            if isinstance(v, bool) or not isinstance(v, int) or v <= 0:
                raise ValueError(f"{type(self).__name__}: {name} must be a positive int, got {v!r}")
        if embed_dim % num_heads:
            raise ValueError(f"{type(self).__name__}: embed_dim ({embed_dim}) must be divisible by num_heads "
                             f"({num_heads})")
        if num_heads % num_kv_heads:
            raise ValueError(f"{type(self).__name__}: num_heads ({num_heads}) must be a multiple of num_kv_heads "
                             f"({num_kv_heads})")
        super().__init__()
        from ..._creation import empty
        self.embed_dim, self.num_heads, self.num_kv_heads = embed_dim, num_heads, num_kv_heads
        self.head_dim = embed_dim // num_heads
        self.kdim = kdim if kdim is not None else embed_dim
        self.vdim = vdim if vdim is not None else embed_dim
        self.dropout, self.batch_first, self.add_zero_attn = dropout, batch_first, add_zero_attn
        kv = num_kv_heads * self.head_dim
        kw = dict(device=device, dtype=dtype)
        self.q_proj_weight = Parameter(empty(embed_dim, embed_dim, **kw))
        self.k_proj_weight = Parameter(empty(kv, self.kdim, **kw))
        self.v_proj_weight = Parameter(empty(kv, self.vdim, **kw))
        if bias:
            self.in_proj_bias = Parameter(empty(embed_dim + 2 * kv, **kw))
        else:
            self.register_parameter("in_proj_bias", None)
        self.out_proj = NonDynamicallyQuantizableLinear(embed_dim, embed_dim, bias=bias, **kw)
        if add_bias_kv:
            self.bias_k = Parameter(empty(1, 1, kv, **kw))
            self.bias_v = Parameter(empty(1, 1, kv, **kw))
        else:
            self.bias_k = self.bias_v = None
        self._reset_parameters()

    def _reset_parameters(self):
        for w in (self.q_proj_weight, self.k_proj_weight, self.v_proj_weight):
            init.xavier_uniform_(w)
        if self.in_proj_bias is not None:
            init.constant_(self.in_proj_bias, 0.0)
            init.constant_(self.out_proj.bias, 0.0)
        for b in (self.bias_k, self.bias_v):
            if b is not None:
                init.xavier_normal_(b)

    def _per_query_head(self, t, dim):
        """t's key / value heads along `dim` (blocks of head_dim) repeated for the query
        heads that read them: [kv0 x group, kv1 x group, ...]."""
        group = self.num_heads // self.num_kv_heads
        if group == 1:
            return t
        shape = list(t.shape)
        heads = t.unflatten(dim, (self.num_kv_heads, 1, self.head_dim))
        expanded = list(heads.shape)
        expanded[dim + 1] = group
        shape[dim] *= group
        return heads.expand(*expanded).reshape(shape)

    def forward(self, query, key, value, key_padding_mask=None, need_weights=True, attn_mask=None,
                average_attn_weights=True, is_causal=False):
        batched = query.ndim == 3
        if self.batch_first and batched:
            query, key, value = (t.transpose(0, 1) for t in (query, key, value))
        kv = self.num_kv_heads * self.head_dim
        bias = self.in_proj_bias
        if bias is not None:
            b_q, b_k, b_v = bias.split([self.embed_dim, kv, kv])
            bias = cat([b_q, self._per_query_head(b_k, 0), self._per_query_head(b_v, 0)])
        bias_k = None if self.bias_k is None else self._per_query_head(self.bias_k, 2)
        bias_v = None if self.bias_v is None else self._per_query_head(self.bias_v, 2)
        out, weights = multi_head_attention_forward(
            query, key, value, self.embed_dim, self.num_heads, None, bias, bias_k, bias_v, self.add_zero_attn,
            self.dropout, self.out_proj.weight, self.out_proj.bias, training=self.training,
            key_padding_mask=key_padding_mask, need_weights=need_weights, attn_mask=attn_mask,
            use_separate_proj_weight=True, q_proj_weight=self.q_proj_weight,
            k_proj_weight=self._per_query_head(self.k_proj_weight, 0),
            v_proj_weight=self._per_query_head(self.v_proj_weight, 0),
            average_attn_weights=average_attn_weights, is_causal=is_causal)
        if self.batch_first and batched:
            out = out.transpose(0, 1)
        return out, weights

    def extra_repr(self):
        return (f"embed_dim={self.embed_dim}, num_heads={self.num_heads}, num_kv_heads={self.num_kv_heads}, "
                f"dropout={self.dropout}, batch_first={self.batch_first}")


class MultiQueryAttention(GroupedQueryAttention):
    """GroupedQueryAttention with one key / value head shared by every query head."""

    def __init__(self, embed_dim, num_heads, dropout=0.0, bias=True, add_bias_kv=False, add_zero_attn=False,
                 kdim=None, vdim=None, batch_first=False, device=None, dtype=None):
        super().__init__(embed_dim, num_heads, 1, dropout=dropout, bias=bias, add_bias_kv=add_bias_kv,
                         add_zero_attn=add_zero_attn, kdim=kdim, vdim=vdim, batch_first=batch_first, device=device,
                         dtype=dtype)

    def extra_repr(self):
        return (f"embed_dim={self.embed_dim}, num_heads={self.num_heads}, dropout={self.dropout}, "
                f"batch_first={self.batch_first}")
