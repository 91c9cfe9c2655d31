"""Quantized Embedding / EmbeddingBag: the table stored as int8 codes with one scale per
row (token), dequantized for the lookup."""

import lucid
import lucid.nn as nn
import lucid.nn.functional as F
from lucid.quantization._functional import dequantize

from ._utils import check_positive_int, quantize_weight

__all__ = ["Embedding", "EmbeddingBag"]


class _QuantizedTable(nn.Module):
    def _init_table(self, num_embeddings, embedding_dim, padding_idx):
        name = type(self).__name__
        self.num_embeddings = check_positive_int(num_embeddings, "num_embeddings", name)
        self.embedding_dim = check_positive_int(embedding_dim, "embedding_dim", name)
        if padding_idx is not None:
            if not -num_embeddings <= padding_idx < num_embeddings:
                raise ValueError(f"{name}: padding_idx {padding_idx} is outside [-{num_embeddings}, "
                                 f"{num_embeddings})")
            padding_idx %= num_embeddings
        self.padding_idx = padding_idx
        self.register_buffer("weight_int8", lucid.zeros((num_embeddings, embedding_dim), dtype=lucid.int8))
        self.register_buffer("weight_scale", lucid.ones(num_embeddings))
        self.register_buffer("weight_zero_point", lucid.zeros(num_embeddings))

    def weight(self):
        return dequantize(self.weight_int8, self.weight_scale, self.weight_zero_point, ch_axis=0)

    def _load_table(self, mod):
        codes, scale, zero_point, ch_axis = quantize_weight(mod, mod.weight, default_ch_axis=0)
        if ch_axis != 0:
            raise ValueError(f"quantized {type(self).__name__}: the table must be quantized per row "
                             f"(ch_axis=0), the qconfig's weight observer gave ch_axis={ch_axis}")
        self.weight_int8, self.weight_scale, self.weight_zero_point = codes, scale, zero_point

    def _check_indices(self, input):
        if input.dtype.is_floating_point:
            raise TypeError(f"{type(self).__name__}: indices must be an integer tensor, got {input.dtype}")


class Embedding(_QuantizedTable):
    def __init__(self, num_embeddings, embedding_dim, padding_idx=None):
        super().__init__()
        self._init_table(num_embeddings, embedding_dim, padding_idx)

    def forward(self, input):
        self._check_indices(input)
        return F.embedding(input, self.weight(), self.padding_idx)

    @classmethod
    def from_float(cls, mod):
        import lucid.nn.qat as nnqat
        if type(mod) not in (nn.Embedding, nnqat.Embedding):
            raise TypeError(f"quantized Embedding.from_float expects nn.Embedding or nn.qat.Embedding, "
                            f"got {type(mod).__name__}")
        q = cls(mod.num_embeddings, mod.embedding_dim, padding_idx=mod.padding_idx)
        q._load_table(mod)
        return q

    def extra_repr(self):
        return f"num_embeddings={self.num_embeddings}, embedding_dim={self.embedding_dim}"


class EmbeddingBag(_QuantizedTable):
    def __init__(self, num_embeddings, embedding_dim, mode="mean", padding_idx=None):
        super().__init__()
        if mode not in ("sum", "mean", "max"):
            raise ValueError(f"EmbeddingBag: mode must be 'sum', 'mean' or 'max', got {mode!r}")
        self.mode = mode
        self._init_table(num_embeddings, embedding_dim, padding_idx)

    def forward(self, input, offsets=None, per_sample_weights=None):
        self._check_indices(input)
        return F.embedding_bag(input, self.weight(), offsets, mode=self.mode,
                               per_sample_weights=per_sample_weights, padding_idx=self.padding_idx)

    @classmethod
    def from_float(cls, mod):
        if type(mod) is not nn.EmbeddingBag:
            raise TypeError(f"quantized EmbeddingBag.from_float expects nn.EmbeddingBag, got {type(mod).__name__}")
        q = cls(mod.num_embeddings, mod.embedding_dim, mode=mod.mode, padding_idx=mod.padding_idx)
        q._load_table(mod)
        return q

    def extra_repr(self):
        return f"num_embeddings={self.num_embeddings}, embedding_dim={self.embedding_dim}, mode={self.mode}"
