"""The Cache interface, and the argument checks its implementations share.

A cache holds, per attention layer, the keys and values of every token seen so far, laid
out (batch, heads, seq, head_dim) as lucid.nn.functional.scaled_dot_product_attention
takes them. Every cache answers the same calls (update, get_seq_length,
get_max_cache_shape, reorder_cache), so a model's attention can be written once against
Cache and the caller picks the storage: DynamicCache grows, StaticCache holds a fixed
number of positions, EncoderDecoderCache pairs a decoder's self- and cross-attention.

The checks raise before anything is stored: a cache that took a wrong-shaped update would
only fail later, inside attention, far from the call that broke it."""

import abc

from ..._tensor import Tensor

__all__ = ["Cache"]

SEQ_DIM = 2  # (batch, heads, seq, head_dim)


def check_int(value, name, minimum=None):
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{name} must be an int, but got {type(value).__name__}")
    if minimum is not None and value < minimum:
        raise ValueError(f"{name} must be >= {minimum}, but got {value}")
    return value


def check_layer_idx(layer_idx):
    return check_int(layer_idx, "layer_idx", minimum=0)


def check_held(cache, layer_idx):
    """cache[layer_idx] names a layer the cache holds: a KeyError otherwise, as transformers'."""
    if isinstance(layer_idx, bool) or not isinstance(layer_idx, int) or not 0 <= layer_idx < len(cache):
        raise KeyError(f"{type(cache).__name__} only has {len(cache)} layers, attempted to access layer with "
                       f"index {layer_idx!r}")


def check_states(key_states, value_states):
    """key_states and value_states: 4-D tensors on one device, agreeing on batch, heads and
    seq (head_dim may differ, as in attention whose values are narrower than its keys)."""
    for name, t in (("key_states", key_states), ("value_states", value_states)):
        if not isinstance(t, Tensor):
            raise TypeError(f"{name} must be a lucid.Tensor, but got {type(t).__name__}")
        if t.ndim != 4:
            raise ValueError(f"{name} must be 4-D (batch, heads, seq, head_dim), but got shape {tuple(t.shape)}")
    if tuple(key_states.shape[:3]) != tuple(value_states.shape[:3]):
        raise ValueError(f"key_states and value_states must agree on (batch, heads, seq), but got shapes "
                         f"{tuple(key_states.shape)} and {tuple(value_states.shape)}")
    if key_states.device != value_states.device:
        raise ValueError(f"key_states and value_states must be on one device, but got {key_states.device} and "
                         f"{value_states.device}")


def check_extends(layer_idx, cached, new, name):
    """`new` may be appended to (or written into) `cached`: same batch, heads and head_dim,
    same device. Only the sequence length is free."""
    held, got = tuple(cached.shape), tuple(new.shape)
    if held[:SEQ_DIM] + held[SEQ_DIM + 1:] != got[:SEQ_DIM] + got[SEQ_DIM + 1:]:
        raise ValueError(f"layer {layer_idx} caches {name} of shape {held}; the new {name} of shape {got} must "
                         f"match it in batch, heads and head_dim")
    if cached.device != new.device:
        raise ValueError(f"layer {layer_idx} caches {name} on {cached.device}, but the new {name} are on "
                         f"{new.device}")


def int_list(values, name):
    """`values` (a 1-D integer tensor, or a list of ints) as a list of Python ints."""
    import lucid
    if isinstance(values, Tensor):
        dtype = values.dtype
        if dtype.is_floating_point or dtype.is_complex or dtype == lucid.bool:
            raise TypeError(f"{name} must hold integers, but got a tensor of {dtype}")
        if values.ndim != 1:
            raise ValueError(f"{name} must be 1-D, but got shape {tuple(values.shape)}")
        return values.tolist()
    if isinstance(values, (list, tuple, range)):
        return [check_int(v, f"every entry of {name}") for v in values]
    raise TypeError(f"{name} must be a lucid.Tensor or a list of ints, but got {type(values).__name__}")


class Cache(abc.ABC):
    """The interface of a key/value cache (transformers' Cache): what attention calls,
    whatever the storage.

    update(key_states, value_states, layer_idx, cache_kwargs=None) stores one step's keys
    and values for a layer and returns everything that layer should attend over;
    get_seq_length(layer_idx) counts the cached tokens (0 for a layer not seen yet);
    get_max_cache_shape() is the capacity (None: unbounded); reorder_cache(beam_idx)
    permutes the batch, as beam search does after choosing its beams."""

    @abc.abstractmethod
    def update(self, key_states, value_states, layer_idx, cache_kwargs=None):
        """Store key_states / value_states, each (batch, heads, new, head_dim), for
        layer_idx; return that layer's (keys, values) to attend over."""

    @abc.abstractmethod
    def get_seq_length(self, layer_idx=0):
        """The number of tokens cached for layer_idx (0 when the layer holds none)."""

    @abc.abstractmethod
    def get_max_cache_shape(self):
        """The most tokens a layer can hold, or None for a cache that grows."""

    @abc.abstractmethod
    def reorder_cache(self, beam_idx):
        """Reindex every layer along the batch with beam_idx, in place."""

    def get_max_length(self):
        """get_max_cache_shape under its older transformers name."""
        return self.get_max_cache_shape()

    def get_usable_length(self, new_seq_length, layer_idx=0):
        """How many cached tokens a step of new_seq_length can use: all of them, unless a
        bounded cache would overflow, when the oldest are the ones to give up."""
        check_int(new_seq_length, "new_seq_length", minimum=0)
        max_length = self.get_max_cache_shape()
        previous = self.get_seq_length(layer_idx)
        if max_length is not None and previous + new_seq_length > max_length:
            return max_length - new_seq_length
        return previous


class LayerCache(Cache):
    """What DynamicCache and StaticCache share: per-layer key_cache / value_cache lists of
    (batch, heads, seq, head_dim) tensors, the count of tokens layer 0 has been given
    (seen_tokens), layer access, and the batch reindexing beam and assisted search need."""

    def __init__(self):
        self.key_cache = []
        self.value_cache = []
        self._seen_tokens = 0

    @property
    def seen_tokens(self):
        return self._seen_tokens

    def __len__(self):
        return len(self.key_cache)

    def __getitem__(self, layer_idx):
        """(keys, values) of one layer (a StaticCache's whole buffers); a KeyError for a
        layer the cache does not hold."""
        check_held(self, layer_idx)
        return self.key_cache[layer_idx], self.value_cache[layer_idx]

    def __iter__(self):
        for layer_idx in range(len(self)):
            yield self.key_cache[layer_idx], self.value_cache[layer_idx]

    def reorder_cache(self, beam_idx):
        """Beam search: row i of every layer becomes the old row beam_idx[i]."""
        self._select_rows(beam_idx, "beam_idx")

    def batch_select_indices(self, indices):
        """Keep the batch rows `indices` (contrastive search and assisted decoding)."""
        self._select_rows(indices, "indices")

    def batch_repeat_interleave(self, repeats):
        """Repeat every batch row `repeats` times in a row, as one prompt expands into its
        beams or candidates."""
        check_int(repeats, "repeats", minimum=1)
        self.key_cache = [k.repeat_interleave(repeats, dim=0) for k in self.key_cache]
        self.value_cache = [v.repeat_interleave(repeats, dim=0) for v in self.value_cache]

    def _select_rows(self, indices, name):
        """Reindex the batch of every layer (a tensor or a list of row numbers, checked
        against the batch before anything moves)."""
        import lucid
        if not self.key_cache:
            return
        batch = self.key_cache[0].shape[0]
        rows = int_list(indices, name)
        bad = [i for i in rows if not 0 <= i < batch]
        if bad:
            raise IndexError(f"{name} holds {bad[0]}, out of range for the cached batch of {batch}")
        rows = lucid.tensor(rows, dtype=lucid.int64, device=self.key_cache[0].device)
        self.key_cache = [k.index_select(0, rows.to(k.device)) for k in self.key_cache]
        self.value_cache = [v.index_select(0, rows.to(v.device)) for v in self.value_cache]
