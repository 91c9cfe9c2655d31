"""DynamicCache: the cache that grows, one concatenation along seq per update.

Each layer holds one key tensor and one value tensor; the first update of a layer stores
its tensors as they are, later ones are concatenated after them. The shapes change every
step, which costs a copy of the layer's history per update but needs no capacity chosen
in advance: the eager default for generation.

Layers are filled in order (0, 1, 2, ... as a model's forward runs them): an update for a
layer past the next one raises, where upstream Lucid would have stored it under the wrong
index."""

import lucid

from ._base import SEQ_DIM, LayerCache, check_extends, check_int, check_layer_idx, check_states

__all__ = ["DynamicCache"]


class DynamicCache(LayerCache):
    """Per-layer keys and values that grow by concatenation (transformers' DynamicCache).

    key_cache and value_cache are lists with one (batch, heads, seq, head_dim) tensor per
    layer; seen_tokens counts the tokens layer 0 has been given (crop rewinds it)."""

    def __repr__(self):
        return f"DynamicCache(layers={len(self)}, seq_length={self.get_seq_length()})"

    def update(self, key_states, value_states, layer_idx, cache_kwargs=None):
        """Append key_states / value_states after layer_idx's cached tokens and return the
        layer's whole (keys, values). cache_kwargs (rotary tables and the like) are not
        needed by a cache that grows, and are ignored."""
        check_states(key_states, value_states)
        check_layer_idx(layer_idx)
        if layer_idx > len(self):
            raise IndexError(f"DynamicCache fills layers in order: it holds {len(self)} layers, so the next update "
                             f"is for layer {len(self)} (or an earlier one), but got layer_idx={layer_idx}")
        if layer_idx == len(self):
            self.key_cache.append(key_states)
            self.value_cache.append(value_states)
        else:
            check_extends(layer_idx, self.key_cache[layer_idx], key_states, "keys")
            check_extends(layer_idx, self.value_cache[layer_idx], value_states, "values")
            self.key_cache[layer_idx] = lucid.cat([self.key_cache[layer_idx], key_states], dim=SEQ_DIM)
            self.value_cache[layer_idx] = lucid.cat([self.value_cache[layer_idx], value_states], dim=SEQ_DIM)
        if layer_idx == 0:
            self._seen_tokens += key_states.shape[SEQ_DIM]
        return self.key_cache[layer_idx], self.value_cache[layer_idx]

    def get_seq_length(self, layer_idx=0):
        check_layer_idx(layer_idx)
        if layer_idx >= len(self):
            return 0
        return self.key_cache[layer_idx].shape[SEQ_DIM]

    def get_max_cache_shape(self):
        return None

    def crop(self, max_length):
        """Keep the first max_length tokens of every layer; a negative max_length drops that
        many off the end (rejected draft tokens in assisted decoding)."""
        check_int(max_length, "max_length")
        for layer_idx in range(len(self)):
            length = self.get_seq_length(layer_idx)
            keep = max(0, length + max_length if max_length < 0 else min(length, max_length))
            if keep < length:
                self.key_cache[layer_idx] = lucid.narrow(self.key_cache[layer_idx], SEQ_DIM, 0, keep)
                self.value_cache[layer_idx] = lucid.narrow(self.value_cache[layer_idx], SEQ_DIM, 0, keep)
        self._seen_tokens = self.get_seq_length(0)

    def reset(self):
        """Forget every layer: the cache is as new, ready for another prompt."""
        self.key_cache, self.value_cache, self._seen_tokens = [], [], 0

    def to_legacy_cache(self):
        """The older format that decoders took before Cache objects: a tuple of one
        (keys, values) pair per layer."""
        return tuple(zip(self.key_cache, self.value_cache))

    @classmethod
    def from_legacy_cache(cls, past_key_values=None):
        """A DynamicCache holding a legacy tuple of (keys, values) pairs (None: empty)."""
        cache = cls()
        for layer_idx, pair in enumerate(() if past_key_values is None else past_key_values):
            if not isinstance(pair, (tuple, list)) or len(pair) != 2:
                raise ValueError(f"a legacy cache holds one (keys, values) pair per layer, but layer {layer_idx} "
                                 f"holds {_describe(pair)}")
            cache.update(pair[0], pair[1], layer_idx)
        return cache


def _describe(entry):
    if isinstance(entry, (tuple, list)):
        return f"a {type(entry).__name__} of {len(entry)}"
    return f"a {type(entry).__name__}"
