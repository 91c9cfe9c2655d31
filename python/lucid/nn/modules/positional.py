"""Upstream Lucid's positional-encoding layers (torch.nn has none): the tables of
nn/_functional_positional.py built once and kept as non-persistent buffers, so they follow
.to() / .cuda() and dtype casts but stay out of state_dict (they are recomputed, never
learned, and a checkpoint does not carry them), and TimestepEmbedding, a diffusion model's
timestep conditioning (sin/cos features of t, then Linear -> SiLU -> Linear), whose two Linear
layers are its only parameters, under upstream's (and diffusers') names linear_1 / linear_2."""

import math

from .. import _functional_positional as P
from .._arg_checks import int_arg
from .activation import SiLU
from .linear import Linear
from .module import Module

__all__ = ["RotaryEmbedding", "SinusoidalEmbedding", "SinusoidalEmbedding2D", "TimestepEmbedding"]


class SinusoidalEmbedding(Module):
    """The fixed [num_positions, embedding_dim] sin/cos table (F.sinusoidal_embedding) as the
    buffer `pe`; forward() returns it (slice pe[:seq_len] for shorter inputs)."""

    def __init__(self, num_positions, embedding_dim, *, base=10000.0):
        super().__init__()
        fn = type(self).__name__
        table = P._table_1d(fn, num_positions, embedding_dim, base, None)
        self.num_positions, self.embedding_dim = int(num_positions), int(embedding_dim)
        self.base = float(base)
        self.register_buffer("pe", table, persistent=False)

    def forward(self):
        return self.pe

    def extra_repr(self):
        return f"{self.num_positions}, {self.embedding_dim}, base={self.base}"


class SinusoidalEmbedding2D(Module):
    """The fixed [height * width, embedding_dim] DETR table (F.sinusoidal_embedding_2d: first
    half the column's encoding, second half the row's) as the buffer `pe`; forward() returns it."""

    def __init__(self, height, width, embedding_dim, *, base=10000.0):
        super().__init__()
        fn = type(self).__name__
        table = P._table_2d(fn, height, width, embedding_dim, base, None)
        self.height, self.width, self.embedding_dim = int(height), int(width), int(embedding_dim)
        self.base = float(base)
        self.register_buffer("pe", table, persistent=False)

    def forward(self):
        return self.pe

    def extra_repr(self):
        return f"{self.height}, {self.width}, {self.embedding_dim}, base={self.base}"


class RotaryEmbedding(Module):
    """RoPE's cos / sin tables, buffers cos_cached / sin_cached of shape
    [max_position_embeddings, head_dim]: angle p * base^(-2i/head_dim) in columns i and
    i + head_dim / 2. forward() returns (cos, sin) for F.apply_rotary_emb (either layout)."""

    def __init__(self, head_dim, max_position_embeddings, base=10000.0):
        super().__init__()
        cos, sin = P._rotary_tables(type(self).__name__, head_dim, max_position_embeddings, base)
        self.head_dim, self.max_position_embeddings = int(head_dim), int(max_position_embeddings)
        self.base = float(base)
        self.register_buffer("cos_cached", cos, persistent=False)
        self.register_buffer("sin_cached", sin, persistent=False)

    def forward(self):
        return self.cos_cached, self.sin_cached

    def extra_repr(self):
        return f"{self.head_dim}, {self.max_position_embeddings}, base={self.base}"


def _timestep_features(timesteps, dim, base, flip_sin_to_cos, dtype):
    """[*timesteps.shape, dim] features: with w_i = base^(-i / (dim/2 - 1)), i < dim/2 (w_0 = 1
    when dim is 2), the sin(t w) half then the cos(t w) half, or cos first when
    flip_sin_to_cos. Computed in float32 (float64 for a float64 module), then cast to dtype."""
    import lucid
    if not isinstance(timesteps, lucid.Tensor):
        timesteps = lucid.tensor(timesteps)
    if timesteps.is_complex():
        raise TypeError(f"TimestepEmbedding: timesteps must be real, got {timesteps.dtype}")
    work = lucid.float64 if dtype == lucid.float64 else lucid.float32
    half = dim // 2
    step = -math.log(base) / max(half - 1, 1)
    freqs = (lucid.arange(half, dtype=work, device=timesteps.device) * step).exp()
    angles = timesteps.to(work).unsqueeze(-1) * freqs
    parts = [angles.cos(), angles.sin()] if flip_sin_to_cos else [angles.sin(), angles.cos()]
    return lucid.cat(parts, dim=-1).to(dtype)


class TimestepEmbedding(Module):
    """A diffusion model's timestep embedding: sinusoidal features of each timestep (in_dim
    of them, see _timestep_features), then linear_1 (in_dim -> out_dim), act (SiLU) and
    linear_2 (out_dim -> out_dim). forward(timesteps) of any shape gives
    [*timesteps.shape, out_dim]. flip_sin_to_cos=True (the default, upstream Lucid's
    output) puts the cos half first, as diffusers' flag does; False gives [sin, cos]."""

    def __init__(self, in_dim, out_dim, *, base=10000.0, flip_sin_to_cos=True):
        super().__init__()
        fn = type(self).__name__
        self.in_dim = P._even_dim(fn, "in_dim", in_dim)
        self.out_dim = int_arg(fn, "out_dim", out_dim, minimum=1)
        self.base = P._base_arg(fn, base)
        self.flip_sin_to_cos = bool(flip_sin_to_cos)
        self.linear_1 = Linear(self.in_dim, self.out_dim)
        self.act = SiLU()
        self.linear_2 = Linear(self.out_dim, self.out_dim)

    def forward(self, timesteps):
        features = _timestep_features(timesteps, self.in_dim, self.base, self.flip_sin_to_cos,
                                      self.linear_1.weight.dtype)
        return self.linear_2(self.act(self.linear_1(features)))

    def extra_repr(self):
        return f"{self.in_dim}, {self.out_dim}, base={self.base}, flip_sin_to_cos={self.flip_sin_to_cos}"
