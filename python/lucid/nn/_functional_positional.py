"""Upstream Lucid's positional encodings in nn.functional (torch has none; every model file
writes its own, and upstream Lucid keeps one copy): the fixed sin/cos table of Vaswani et al.
2017, its 2-D form from DETR (Carion et al. 2020) and rotary embedding (RoPE, Su et al. 2021)
applied to queries and keys.

The tables are built in float64 on the CPU and then moved and cast once: they are small, the
angles of late positions (p * base^(-2i/d)) lose digits in float32, and a float32 build would
drift from the same table made on another device. They come out in lucid.get_default_dtype().
apply_rotary_emb is a composition of differentiable ops, so gradients reach q, k (and cos,
sin, should they require grad)."""

import math
import numbers

from ._arg_checks import int_arg as _int_arg

__all__ = ["apply_rotary_emb", "sinusoidal_embedding", "sinusoidal_embedding_2d"]


def _lucid():
    import lucid
    return lucid


# ---- argument checks -------------------------------------------------------------------

def _base_arg(fn, base):
    if isinstance(base, bool) or not isinstance(base, numbers.Real):
        raise TypeError(f"{fn}: base must be a real number, got {type(base).__name__}")
    base = float(base)
    if not math.isfinite(base) or base <= 0.0:
        raise ValueError(f"{fn}: base must be a positive finite number, got {base}")
    return base


def _even_dim(fn, name, value, what="an even"):
    value = _int_arg(fn, name, value, minimum=1)
    if value % 2:
        raise ValueError(f"{fn} requires {what} {name}, got {value}")
    return value


# ---- tables ------------------------------------------------------------------------------

def _inv_freq(count, dim, base):
    """base^(-2i/dim) for i < count, float64 on the CPU."""
    lucid = _lucid()
    return base ** (-lucid.arange(0, 2 * count, 2, dtype=lucid.float64, device="cpu") / dim)


def _interleaved_sin_cos(n, dim, base):
    """[n, dim] float64: column 2i is sin(p w_i), column 2i + 1 is cos(p w_i), w_i = base^(-2i/dim)."""
    lucid = _lucid()
    positions = lucid.arange(n, dtype=lucid.float64, device="cpu")
    angles = positions.unsqueeze(1) * _inv_freq(dim // 2, dim, base).unsqueeze(0)
    return lucid.stack([angles.sin(), angles.cos()], dim=-1).reshape(n, dim)


def _finish(table, device):
    """The float64 CPU table on `device` (None: the default device) in the default dtype."""
    lucid = _lucid()
    where = lucid.get_default_device() if device is None else lucid.device(device)
    return table.to(device=where, dtype=lucid.get_default_dtype())


def _table_1d(fn, num_positions, embedding_dim, base, device):
    num_positions = _int_arg(fn, "num_positions", num_positions, minimum=0)
    embedding_dim = _even_dim(fn, "embedding_dim", embedding_dim)
    base = _base_arg(fn, base)
    return _finish(_interleaved_sin_cos(num_positions, embedding_dim, base), device)


def _table_2d(fn, height, width, embedding_dim, base, device):
    height = _int_arg(fn, "height", height, minimum=0)
    width = _int_arg(fn, "width", width, minimum=0)
    embedding_dim = _int_arg(fn, "embedding_dim", embedding_dim, minimum=1)
    if embedding_dim % 4:
        raise ValueError(f"{fn} requires embedding_dim divisible by 4, got {embedding_dim}")
    base = _base_arg(fn, base)
    half = embedding_dim // 2  # each axis gets a 1-D table of this width
    cols = _interleaved_sin_cos(width, half, base)   # [W, half]
    rows = _interleaved_sin_cos(height, half, base)  # [H, half]
    grid = (height, width, half)
    table = _lucid().cat([cols.unsqueeze(0).expand(*grid), rows.unsqueeze(1).expand(*grid)], dim=-1)
    return _finish(table.reshape(height * width, embedding_dim), device)


def _rotary_tables(fn, head_dim, max_position_embeddings, base, device=None):
    """RotaryEmbedding's (cos, sin), each [max_pos, head_dim]: frequency i = base^(-2i/head_dim)
    in columns i and i + head_dim / 2 (Hugging Face's layout, for rotate-half)."""
    head_dim = _even_dim(fn, "head_dim", head_dim)
    max_pos = _int_arg(fn, "max_position_embeddings", max_position_embeddings, minimum=0)
    base = _base_arg(fn, base)
    lucid = _lucid()
    positions = lucid.arange(max_pos, dtype=lucid.float64, device="cpu")
    angles = positions.unsqueeze(1) * _inv_freq(head_dim // 2, head_dim, base).unsqueeze(0)
    angles = lucid.cat([angles, angles], dim=-1)
    return _finish(angles.cos(), device), _finish(angles.sin(), device)


def sinusoidal_embedding(num_positions, embedding_dim, *, base=10000.0, device=None):
    """The [num_positions, embedding_dim] sinusoidal table of Vaswani et al. 2017: with
    w_i = base^(-2i / embedding_dim), column 2i holds sin(p w_i) and column 2i + 1 cos(p w_i)
    for position p. embedding_dim must be even."""
    return _table_1d("sinusoidal_embedding", num_positions, embedding_dim, base, device)


def sinusoidal_embedding_2d(height, width, embedding_dim, *, base=10000.0, device=None):
    """The [height * width, embedding_dim] DETR table, rows in row-major order (r * width + c):
    the first embedding_dim / 2 columns are the 1-D table (at width embedding_dim / 2) of the
    column index c, the rest that of the row index r. embedding_dim must be divisible by 4."""
    return _table_2d("sinusoidal_embedding_2d", height, width, embedding_dim, base, device)


# ---- rotary embedding --------------------------------------------------------------------

def _shape(t):
    return tuple(t.shape)


def _check_rotary(q, k, cos, sin):
    lucid = _lucid()
    for name, t in (("q", q), ("k", k), ("cos", cos), ("sin", sin)):
        if not isinstance(t, lucid.Tensor):
            raise TypeError(f"apply_rotary_emb: {name} must be a Tensor, got {type(t).__name__}")
    for name, t in (("q", q), ("k", k)):
        if t.ndim < 2:
            raise ValueError(f"apply_rotary_emb: {name} must be (..., seq_len, head_dim), got shape {_shape(t)}")
    if _shape(q)[-2:] != _shape(k)[-2:]:
        raise ValueError(f"apply_rotary_emb: q and k must share (seq_len, head_dim), got shapes {_shape(q)} "
                         f"and {_shape(k)}")
    head_dim = q.shape[-1]
    if head_dim % 2:
        raise ValueError(f"apply_rotary_emb requires an even head_dim, got {head_dim}")
    if cos.ndim != 2 or _shape(cos) != _shape(sin):
        raise ValueError(f"apply_rotary_emb: cos and sin must be tables of the same shape (max_pos, head_dim), "
                         f"got {_shape(cos)} and {_shape(sin)}")
    if cos.shape[1] not in (head_dim, head_dim // 2):
        raise ValueError(f"apply_rotary_emb: cos/sin tables of width {cos.shape[1]} do not fit head_dim "
                         f"{head_dim} (expected {head_dim}, or {head_dim // 2} for one value per pair)")


def _position_ids(position_ids, q, table):
    """position_ids as an integer tensor on the tables' device, checked against q."""
    lucid = _lucid()
    if not isinstance(position_ids, lucid.Tensor):
        if isinstance(position_ids, (list, tuple, range)):
            position_ids = lucid.tensor(list(position_ids), dtype=lucid.int64)
        else:
            raise TypeError(f"apply_rotary_emb: position_ids must be an integer Tensor, got "
                            f"{type(position_ids).__name__}")
    if position_ids.dtype not in (lucid.int64, lucid.int32):
        raise TypeError(f"apply_rotary_emb: position_ids must hold integers (int64 or int32), got "
                        f"{position_ids.dtype}")
    seq_len = q.shape[-2]
    if position_ids.ndim not in (1, 2) or position_ids.shape[-1] != seq_len:
        raise ValueError(f"apply_rotary_emb: position_ids must be (seq_len,) or (batch, seq_len) with "
                         f"seq_len = {seq_len}, got shape {_shape(position_ids)}")
    if position_ids.ndim == 2:
        batch = position_ids.shape[0]
        if q.ndim < 3:
            raise ValueError(f"apply_rotary_emb: position_ids of shape {_shape(position_ids)} need q with a "
                             f"batch dim, got shape {_shape(q)}")
        if batch != 1 and q.shape[0] not in (1, batch):
            raise ValueError(f"apply_rotary_emb: position_ids' batch {batch} does not match q's {q.shape[0]}")
    return position_ids.to(table.device)


def _rows(table, position_ids, q):
    """The table's rows for q's positions, shaped to broadcast against q (..., seq_len, width)."""
    if position_ids is None:
        seq_len, max_pos = q.shape[-2], table.shape[0]
        if seq_len > max_pos:
            raise ValueError(f"apply_rotary_emb: seq_len {seq_len} exceeds the {max_pos} positions of the "
                             f"cos/sin tables")
        return table[:seq_len]
    rows = table[position_ids]
    if position_ids.ndim == 2:  # [B, S, w] -> [B, 1, ..., 1, S, w]: the batch dim leads q
        rows = rows.reshape(rows.shape[0], *([1] * (q.ndim - 3)), *rows.shape[1:])
    return rows


def _per_feature(values, head_dim, interleaved):
    """Per-feature cos or sin values [..., head_dim] from a table's rows: a full-width table is
    in RotaryEmbedding's layout (pair i's value in columns i and i + head_dim / 2); a half-width
    one holds one value per pair. Pair i is features (i, i + head_dim / 2), or (2i, 2i + 1) when
    interleaved."""
    lucid = _lucid()
    half = head_dim // 2
    if values.shape[-1] == head_dim:
        if not interleaved:
            return values
        values = values[..., :half]
    if interleaved:
        return lucid.stack([values, values], dim=-1).reshape(*values.shape[:-1], head_dim)
    return lucid.cat([values, values], dim=-1)


def _rotate_half(x):
    """[x1, x2] -> [-x2, x1] over the last dim's halves."""
    half = x.shape[-1] // 2
    return _lucid().cat([-x[..., half:], x[..., :half]], dim=-1)


def _rotate_pairs(x):
    """(x[2i], x[2i + 1]) -> (-x[2i + 1], x[2i]) for every pair of the last dim."""
    return _lucid().stack([-x[..., 1::2], x[..., 0::2]], dim=-1).reshape(x.shape)


def _rotate(x, cos, sin, interleaved):
    if x.is_floating_point() and cos.dtype != x.dtype:
        cos, sin = cos.to(x.dtype), sin.to(x.dtype)
    turned = _rotate_pairs(x) if interleaved else _rotate_half(x)
    return x * cos + turned * sin


def apply_rotary_emb(q, k, cos, sin, position_ids=None, *, interleaved=False):
    """q and k (..., seq_len, head_dim) rotated by rotary position embedding: for position p,
    each pair of features (a, b) becomes (a cos t - b sin t, b cos t + a sin t), t pair i's
    angle at p. The pairs are (i, i + head_dim / 2), Hugging Face's rotate_half convention, or
    (2i, 2i + 1) when interleaved (GPT-J, the RoFormer paper). cos and sin are
    RotaryEmbedding's [max_pos, head_dim] tables (or [max_pos, head_dim / 2], a value per pair);
    the same tables serve both layouts. Row p of the tables is used for the p-th position, or
    row position_ids[..., p] (shape (seq_len,) or (batch, seq_len)) when given. Returns
    (q_rotated, k_rotated), of q's and k's shapes."""
    _check_rotary(q, k, cos, sin)
    if position_ids is not None:
        position_ids = _position_ids(position_ids, q, cos)
    head_dim, interleaved = q.shape[-1], bool(interleaved)
    c = _per_feature(_rows(cos, position_ids, q), head_dim, interleaved)
    s = _per_feature(_rows(sin, position_ids, q), head_dim, interleaved)
    return _rotate(q, c, s, interleaved), _rotate(k, c, s, interleaved)
