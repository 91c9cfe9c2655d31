"""lucid.utils.cache: key/value caches for incremental attention (upstream Lucid's module,
named after Hugging Face transformers' cache_utils so that generation code ports with an
import change).

An autoregressive decoder that re-encodes its whole prefix at every step pays O(T^2) for T
tokens; with a cache each step projects only the new token's key and value, appends them,
and attends over what the cache returns.

    cache = DynamicCache()
    for step in range(steps):
        k, v = project(x_step)                      # (batch, heads, new, head_dim)
        k_all, v_all = cache.update(k, v, layer_idx=0)
        out = F.scaled_dot_product_attention(q, k_all, v_all)

Modules: _base (the Cache interface and the argument checks every cache shares), _dynamic
(DynamicCache, which grows by concatenation), _static (StaticCache, fixed buffers of
max_cache_len positions written in place) and _encoder_decoder (EncoderDecoderCache, a
decoder's self-attention cache paired with its cross-attention cache).
"""

from ._base import Cache
from ._dynamic import DynamicCache
from ._encoder_decoder import EncoderDecoderCache
from ._static import StaticCache

__all__ = ["Cache", "DynamicCache", "EncoderDecoderCache", "StaticCache"]
