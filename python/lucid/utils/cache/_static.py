"""StaticCache: fixed buffers of max_cache_len positions per layer, written in place.

A layer's buffers are allocated (zeros) on its first update, with the batch, heads,
head_dim, dtype and device of the states given, and never change shape after: each update
writes its tokens at their positions (cache_position, or after the tokens written so
far). Constant shapes are what a compiled or graph-replayed decode step needs; the price
is a capacity chosen in advance, and an update that would write past it raises.

update returns the whole buffer, as transformers' StaticCache: positions not written yet
hold zeros, which the caller masks (its causal mask ends at the current position). Passing
cache_kwargs={"read_len": n} returns the first n positions instead (upstream Lucid's
opt-in), so attention over the filled prefix needs no mask."""

import lucid

from ._base import SEQ_DIM, LayerCache, check_extends, check_int, check_layer_idx, check_states, int_list

__all__ = ["StaticCache"]


class StaticCache(LayerCache):
    """Per-layer (batch, heads, max_cache_len, head_dim) key and value buffers.

    get_seq_length(layer_idx) is a per-layer count of the positions filled (the buffer's
    shape cannot tell it): after writes at explicit positions, one past the highest
    written; seen_tokens counts the tokens layer 0 has been given."""

    def __init__(self, max_cache_len):
        super().__init__()
        self.max_cache_len = check_int(max_cache_len, "max_cache_len", minimum=1)
        self._cumulative_length = []

    def __repr__(self):
        return (f"StaticCache(max_cache_len={self.max_cache_len}, layers={len(self)}, "
                f"seq_length={self.get_seq_length()})")

    def update(self, key_states, value_states, layer_idx, cache_kwargs=None):
        """Write key_states / value_states into layer_idx's buffers and return them (or
        their first read_len positions).

        cache_kwargs may hold "cache_position", the positions (a 1-D integer tensor or a
        list, one per new token) to write at; without it the tokens go right after those
        written so far. "read_len" (an int) narrows what is returned. Other entries (rotary
        tables) are ignored. States of another dtype are cast to the buffers'."""
        check_states(key_states, value_states)
        check_layer_idx(layer_idx)
        cache_kwargs = {} if cache_kwargs is None else cache_kwargs
        if not isinstance(cache_kwargs, dict):
            raise TypeError(f"cache_kwargs must be a dict or None, but got {type(cache_kwargs).__name__}")
        if layer_idx < len(self):
            check_extends(layer_idx, self.key_cache[layer_idx], key_states, "keys")
            check_extends(layer_idx, self.value_cache[layer_idx], value_states, "values")
        new = key_states.shape[SEQ_DIM]
        positions, end = self._positions(layer_idx, new, cache_kwargs.get("cache_position"))
        read_len = self._read_len(cache_kwargs.get("read_len"))
        self._allocate(layer_idx, key_states, value_states)  # (only once nothing can fail)
        keys, values = self.key_cache[layer_idx], self.value_cache[layer_idx]
        index = lucid.tensor(positions, dtype=lucid.int64, device=keys.device)
        keys = lucid.index_copy(keys, SEQ_DIM, index, key_states.to(keys.dtype))
        values = lucid.index_copy(values, SEQ_DIM, index, value_states.to(values.dtype))
        self.key_cache[layer_idx], self.value_cache[layer_idx] = keys, values
        self._cumulative_length[layer_idx] = end
        if layer_idx == 0:
            self._seen_tokens += new
        if read_len is not None and read_len < self.max_cache_len:
            return lucid.narrow(keys, SEQ_DIM, 0, read_len), lucid.narrow(values, SEQ_DIM, 0, read_len)
        return keys, values

    def get_seq_length(self, layer_idx=0):
        check_layer_idx(layer_idx)
        if layer_idx >= len(self):
            return 0
        return self._cumulative_length[layer_idx]

    def get_max_cache_shape(self):
        return self.max_cache_len

    def crop(self, max_length):
        """Keep the first max_length positions (a negative max_length drops that many off
        the end). The buffers keep their shape: only the counts rewind, and the next
        update writes over what was cropped."""
        check_int(max_length, "max_length")
        for layer_idx, length in enumerate(self._cumulative_length):
            self._cumulative_length[layer_idx] = max(0, length + max_length if max_length < 0
                                                     else min(length, max_length))
        self._seen_tokens = self.get_seq_length(0)

    def reset(self):
        """Zero every buffer and rewind the counts, keeping the buffers' shapes (a compiled
        step that took them stays valid)."""
        self.key_cache = [lucid.zeros_like(k) for k in self.key_cache]
        self.value_cache = [lucid.zeros_like(v) for v in self.value_cache]
        self._cumulative_length = [0] * len(self.key_cache)
        self._seen_tokens = 0

    def _allocate(self, layer_idx, key_states, value_states):
        """Zero buffers for every layer up to layer_idx not allocated yet (upstream Lucid
        allocates lazily, and a layer that skips the cache leaves a gap), shaped after the
        states this update brings."""
        batch, heads, _, key_dim = key_states.shape
        value_dim = value_states.shape[3]
        while len(self.key_cache) <= layer_idx:
            self.key_cache.append(lucid.zeros(batch, heads, self.max_cache_len, key_dim, dtype=key_states.dtype,
                                              device=key_states.device))
            self.value_cache.append(lucid.zeros(batch, heads, self.max_cache_len, value_dim,
                                                dtype=value_states.dtype, device=value_states.device))
            self._cumulative_length.append(0)

    def _positions(self, layer_idx, new, cache_position):
        """The positions to write `new` tokens at, and the layer's filled length after."""
        filled = self.get_seq_length(layer_idx)
        if cache_position is None:
            if filled + new > self.max_cache_len:
                raise ValueError(f"StaticCache overflow: layer {layer_idx} holds {filled} of max_cache_len="
                                 f"{self.max_cache_len} positions and cannot take {new} more; allocate a larger "
                                 f"max_cache_len, or crop() / reset() the cache")
            return list(range(filled, filled + new)), filled + new
        positions = int_list(cache_position, "cache_position")
        if len(positions) != new:
            raise ValueError(f"cache_position holds {len(positions)} positions, but the update brings {new} tokens")
        bad = [p for p in positions if not 0 <= p < self.max_cache_len]
        if bad:
            raise ValueError(f"StaticCache overflow: cache_position {bad[0]} is outside the max_cache_len="
                             f"{self.max_cache_len} positions of layer {layer_idx}")
        return positions, max([filled] + [p + 1 for p in positions])

    def _read_len(self, read_len):
        if read_len is None:
            return None
        check_int(read_len, "read_len", minimum=1)
        if read_len > self.max_cache_len:
            raise ValueError(f"read_len={read_len} exceeds max_cache_len={self.max_cache_len}")
        return read_len
