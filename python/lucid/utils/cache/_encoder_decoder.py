"""EncoderDecoderCache: a decoder's self-attention cache and its cross-attention cache.

In an encoder-decoder model the decoder's self-attention grows one token per step, while
its cross-attention attends over keys and values projected from the encoder's output,
which does not change during generation. The pair keeps both, and is_updated[layer_idx]
says whether a layer's cross-attention keys and values are cached already, so that every
step after the first skips projecting the encoder's output again:

    if not cache.is_updated.get(layer_idx):
        cross_k, cross_v = cache.cross_attention_cache.update(project(memory), ..., layer_idx)
        cache.is_updated[layer_idx] = True
    else:
        cross_k, cross_v = cache.cross_attention_cache[layer_idx]

update, get_seq_length and crop address the self-attention cache (the cross-attention
keys are the encoder's length, and stay whole); batch operations apply to both."""

from ._base import Cache, check_held, check_layer_idx
from ._dynamic import DynamicCache

__all__ = ["EncoderDecoderCache"]


class EncoderDecoderCache(Cache):
    """self_attention_cache and cross_attention_cache, each a DynamicCache or a
    StaticCache, and is_updated (a dict, layer -> bool). Without is_updated the flags are
    read off the cross-attention cache: a layer that holds tokens is updated. A caller
    that rebuilds a pair around filled buffers whose counts say nothing (a StaticCache
    made afresh) passes them."""

    def __init__(self, self_attention_cache, cross_attention_cache, *, is_updated=None):
        for name, cache in (("self_attention_cache", self_attention_cache),
                            ("cross_attention_cache", cross_attention_cache)):
            if not isinstance(cache, Cache) or isinstance(cache, EncoderDecoderCache):
                raise TypeError(f"{name} must be a DynamicCache or a StaticCache, but got {type(cache).__name__}")
        self.self_attention_cache = self_attention_cache
        self.cross_attention_cache = cross_attention_cache
        if is_updated is None:
            self.is_updated = {i: cross_attention_cache.get_seq_length(i) > 0
                               for i in range(len(cross_attention_cache))}
        elif isinstance(is_updated, dict):
            self.is_updated = {check_layer_idx(i): bool(flag) for i, flag in is_updated.items()}
        else:
            raise TypeError(f"is_updated must be a dict of layer -> bool, but got {type(is_updated).__name__}")

    def __len__(self):
        return len(self.self_attention_cache)

    def __getitem__(self, layer_idx):
        """(self keys, self values, cross keys, cross values) of one layer."""
        check_held(self, layer_idx)
        self_k, self_v = self.self_attention_cache[layer_idx]
        cross_k, cross_v = self.cross_attention_cache[layer_idx]
        return self_k, self_v, cross_k, cross_v

    def __iter__(self):
        for layer_idx in range(len(self)):
            yield self[layer_idx]

    def __repr__(self):
        return (f"EncoderDecoderCache(self_attention_cache={self.self_attention_cache!r}, "
                f"cross_attention_cache={self.cross_attention_cache!r})")

    def update(self, key_states, value_states, layer_idx, cache_kwargs=None):
        """Append to the self-attention cache (the cross-attention cache is written by the
        attention itself, through cross_attention_cache, under is_updated)."""
        return self.self_attention_cache.update(key_states, value_states, layer_idx, cache_kwargs)

    def get_seq_length(self, layer_idx=0):
        return self.self_attention_cache.get_seq_length(layer_idx)

    def get_max_cache_shape(self):
        return self.self_attention_cache.get_max_cache_shape()

    def reorder_cache(self, beam_idx):
        self.self_attention_cache.reorder_cache(beam_idx)
        self.cross_attention_cache.reorder_cache(beam_idx)

    def batch_select_indices(self, indices):
        self.self_attention_cache.batch_select_indices(indices)
        self.cross_attention_cache.batch_select_indices(indices)

    def batch_repeat_interleave(self, repeats):
        self.self_attention_cache.batch_repeat_interleave(repeats)
        self.cross_attention_cache.batch_repeat_interleave(repeats)

    def crop(self, max_length):
        """Crop the self-attention cache; the encoder's keys stay whole."""
        self.self_attention_cache.crop(max_length)

    def reset(self):
        """Empty both caches; every layer's cross-attention must be projected again."""
        self.self_attention_cache.reset()
        self.cross_attention_cache.reset()
        self.is_updated = {}

    def to_legacy_cache(self):
        """One (self_k, self_v, cross_k, cross_v) tuple per layer; a layer without
        cross-attention keys gives (self_k, self_v), as transformers'."""
        legacy = []
        for layer_idx in range(len(self)):
            entry = self.self_attention_cache[layer_idx]
            if layer_idx < len(self.cross_attention_cache):
                entry = entry + self.cross_attention_cache[layer_idx]
            legacy.append(tuple(entry))
        return tuple(legacy)

    @classmethod
    def from_legacy_cache(cls, past_key_values=None):
        """A pair of DynamicCaches holding a legacy tuple of per-layer 4-tuples (or 2-tuples,
        self-attention only); the layers with cross-attention keys are marked updated."""
        self_cache, cross_cache = DynamicCache(), DynamicCache()
        for layer_idx, entry in enumerate(() if past_key_values is None else past_key_values):
            if not isinstance(entry, (tuple, list)) or len(entry) not in (2, 4):
                got = f"{type(entry).__name__} of {len(entry)}" if isinstance(entry, (tuple, list)) else \
                    type(entry).__name__
                raise ValueError(f"a legacy encoder-decoder cache holds one (self_k, self_v, cross_k, cross_v) "
                                 f"tuple per layer, but layer {layer_idx} holds a {got}")
            self_cache.update(entry[0], entry[1], layer_idx)
            if len(entry) == 4:
                cross_cache.update(entry[2], entry[3], layer_idx)
        return cls(self_cache, cross_cache)
