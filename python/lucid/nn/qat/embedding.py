"""QAT Embedding: the lookup table is fake-quantized (per row with the default QAT
qconfig); looked-up rows are not re-quantized, as in torch's qat.Embedding."""

import lucid.nn as nn
import lucid.nn.functional as F

from ._common import attach_fake_quants, require_qconfig

__all__ = ["Embedding"]


class Embedding(nn.Embedding):
    def __init__(self, num_embeddings, embedding_dim, padding_idx=None, *, qconfig=None, **kwargs):
        require_qconfig(qconfig, "Embedding")
        super().__init__(num_embeddings, embedding_dim, padding_idx=padding_idx, **kwargs)
        attach_fake_quants(self, qconfig, with_activation=False)

    def forward(self, input):
        return F.embedding(input, self.weight_fake_quant(self.weight), self.padding_idx, self.max_norm,
                           self.norm_type, self.scale_grad_by_freq, self.sparse)

    @classmethod
    def from_float(cls, mod):
        if type(mod) is not nn.Embedding:
            raise TypeError(f"Embedding.from_float expects nn.Embedding, got {type(mod).__name__}")
        qconfig = require_qconfig(getattr(mod, "qconfig", None), "Embedding.from_float (mod.qconfig)")
        qat = cls(mod.num_embeddings, mod.embedding_dim, padding_idx=mod.padding_idx, qconfig=qconfig,
                  max_norm=mod.max_norm, norm_type=mod.norm_type, scale_grad_by_freq=mod.scale_grad_by_freq,
                  sparse=mod.sparse)
        qat.weight = mod.weight
        return qat
