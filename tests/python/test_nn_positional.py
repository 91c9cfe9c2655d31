"""Upstream Lucid's positional encodings (nn/_functional_positional.py, nn/modules/positional.py):
the sin/cos tables against NumPy loops written from the papers' formulas (float64), the 2-D
DETR layout, rotary embedding against explicit 2x2 rotations of each feature pair (both
pairings, position_ids, half-width tables) and against torch autograd of the same formula,
the modules' non-persistent buffers, TimestepEmbedding's layers, and the error messages."""

import math
import subprocess
import sys

import numpy as np
import pytest
import torch

import lucid
import lucid.nn as nn
import lucid.nn.functional as F


def arr(t):
    return np.asarray(t.detach().tolist(), dtype=np.float64)


@pytest.fixture
def float64_default():
    before = lucid.get_default_dtype()
    lucid.set_default_dtype(lucid.float64)
    try:
        yield
    finally:
        lucid.set_default_dtype(before)


gpu = pytest.mark.skipif(not lucid.gpu.is_available(), reason="lucid has no GPU here")


# ---- NumPy references ------------------------------------------------------------------

def ref_table_1d(n, d, base=10000.0):
    """Vaswani et al. eq. (5): PE[p, 2i] = sin(p / base^(2i/d)), PE[p, 2i+1] = cos(...)."""
    out = np.zeros((n, d))
    for p in range(n):
        for i in range(d // 2):
            angle = p / base ** (2 * i / d)
            out[p, 2 * i], out[p, 2 * i + 1] = math.sin(angle), math.cos(angle)
    return out


def ref_table_2d(h, w, d, base=10000.0):
    """DETR: row r * w + c is [PE_{d/2}(c), PE_{d/2}(r)]."""
    col, row = ref_table_1d(w, d // 2, base), ref_table_1d(h, d // 2, base)
    out = np.zeros((h * w, d))
    for r in range(h):
        for c in range(w):
            out[r * w + c] = np.concatenate([col[c], row[r]])
    return out


def ref_angles(positions, head_dim, base=10000.0):
    """[len(positions), head_dim // 2]: pair i's angle p * base^(-2i/head_dim)."""
    return np.array([[p * base ** (-2 * i / head_dim) for i in range(head_dim // 2)] for p in positions])


def ref_rope(x, angles, interleaved):
    """x [..., S, D] (float64) with each feature pair turned by its angle (angles [..., S, D/2],
    broadcast against x's leading dims)."""
    x = np.array(x, dtype=np.float64)
    out = x.copy()
    half = x.shape[-1] // 2
    for i in range(half):
        a_idx, b_idx = (2 * i, 2 * i + 1) if interleaved else (i, i + half)
        a, b = x[..., a_idx], x[..., b_idx]
        c, s = np.cos(angles[..., i]), np.sin(angles[..., i])
        out[..., a_idx] = a * c - b * s
        out[..., b_idx] = b * c + a * s
    return out


def ref_timestep_features(t, dim, base=10000.0, flip=True):
    half = dim // 2
    freqs = np.array([base ** (-i / max(half - 1, 1)) for i in range(half)])
    ang = np.asarray(t, dtype=np.float64)[..., None] * freqs
    parts = [np.cos(ang), np.sin(ang)] if flip else [np.sin(ang), np.cos(ang)]
    return np.concatenate(parts, axis=-1)


def randn(*shape, requires_grad=False, dtype=None):
    return lucid.randn(*shape, dtype=dtype, requires_grad=requires_grad)


# ---- sinusoidal tables -----------------------------------------------------------------

@pytest.mark.parametrize("n,d,base", [(1, 2, 10000.0), (7, 4, 10000.0), (50, 16, 10000.0), (33, 10, 500.0),
                                      (5, 6, 1.0)])
def test_sinusoidal_embedding_values(float64_default, n, d, base):
    pe = F.sinusoidal_embedding(n, d, base=base)
    assert tuple(pe.shape) == (n, d) and pe.dtype == lucid.float64
    np.testing.assert_allclose(arr(pe), ref_table_1d(n, d, base), rtol=0, atol=1e-12)


def test_sinusoidal_embedding_default_dtype_and_device():
    pe = F.sinusoidal_embedding(64, 32)
    assert pe.dtype == lucid.get_default_dtype() == lucid.float32
    assert pe.device == lucid.get_default_device()
    assert not pe.requires_grad
    np.testing.assert_allclose(arr(pe), ref_table_1d(64, 32), atol=1e-6)
    assert F.sinusoidal_embedding(3, 4, device="cpu").device.type == "cpu"


def test_sinusoidal_embedding_follows_set_default_dtype():
    before = lucid.get_default_dtype()
    lucid.set_default_dtype(lucid.float16)
    try:
        assert F.sinusoidal_embedding(4, 8).dtype == lucid.float16
        assert nn.RotaryEmbedding(8, 4).cos_cached.dtype == lucid.float16
    finally:
        lucid.set_default_dtype(before)


def test_sinusoidal_embedding_empty_and_numpy_sizes():
    assert tuple(F.sinusoidal_embedding(0, 4).shape) == (0, 4)
    pe = F.sinusoidal_embedding(np.int64(3), np.int32(4))
    np.testing.assert_allclose(arr(pe), ref_table_1d(3, 4), atol=1e-6)


@pytest.mark.parametrize("h,w,d", [(1, 1, 4), (2, 3, 8), (4, 5, 12), (3, 1, 16)])
def test_sinusoidal_embedding_2d_values(float64_default, h, w, d):
    pe = F.sinusoidal_embedding_2d(h, w, d)
    assert tuple(pe.shape) == (h * w, d)
    np.testing.assert_allclose(arr(pe), ref_table_2d(h, w, d), rtol=0, atol=1e-12)


def test_sinusoidal_embedding_2d_layout(float64_default):
    """First half encodes the column, second half the row; positions are row-major."""
    h, w, d = 3, 4, 8
    pe = arr(F.sinusoidal_embedding_2d(h, w, d, base=100.0)).reshape(h, w, d)
    one_d = arr(F.sinusoidal_embedding(max(h, w), d // 2, base=100.0))
    for r in range(h):
        for c in range(w):
            np.testing.assert_allclose(pe[r, c, :d // 2], one_d[c], atol=1e-12)
            np.testing.assert_allclose(pe[r, c, d // 2:], one_d[r], atol=1e-12)


# ---- rotary embedding --------------------------------------------------------------------

def test_rotary_embedding_tables(float64_default):
    rope = nn.RotaryEmbedding(8, 12, base=500.0)
    cos, sin = rope()
    assert cos is rope.cos_cached and sin is rope.sin_cached
    assert tuple(cos.shape) == tuple(sin.shape) == (12, 8)
    ang = ref_angles(range(12), 8, 500.0)
    full = np.concatenate([ang, ang], axis=-1)  # frequency i in columns i and i + 4
    np.testing.assert_allclose(arr(cos), np.cos(full), atol=1e-12)
    np.testing.assert_allclose(arr(sin), np.sin(full), atol=1e-12)
    assert rope.head_dim == 8 and rope.max_position_embeddings == 12 and rope.base == 500.0


@pytest.mark.parametrize("interleaved", [False, True])
@pytest.mark.parametrize("shape", [(6, 8), (2, 6, 8), (2, 3, 6, 4)])
def test_apply_rotary_emb_values(float64_default, interleaved, shape):
    cos, sin = nn.RotaryEmbedding(shape[-1], 10)()
    q, k = randn(*shape), randn(*shape)
    q_rot, k_rot = F.apply_rotary_emb(q, k, cos, sin, interleaved=interleaved)
    assert tuple(q_rot.shape) == shape and tuple(k_rot.shape) == shape
    ang = ref_angles(range(shape[-2]), shape[-1])
    np.testing.assert_allclose(arr(q_rot), ref_rope(arr(q), ang, interleaved), atol=1e-12)
    np.testing.assert_allclose(arr(k_rot), ref_rope(arr(k), ang, interleaved), atol=1e-12)


def test_apply_rotary_emb_float32():
    cos, sin = nn.RotaryEmbedding(16, 32)()
    q, k = randn(2, 4, 32, 16), randn(2, 4, 32, 16)
    q_rot, _ = F.apply_rotary_emb(q, k, cos, sin)
    assert q_rot.dtype == lucid.float32
    np.testing.assert_allclose(arr(q_rot), ref_rope(arr(q), ref_angles(range(32), 16), False), atol=2e-5)


def test_interleaved_is_half_layout_up_to_a_permutation(float64_default):
    """Pairing (2i, 2i+1) is pairing (i, i + D/2) after moving even features to the first half."""
    cos, sin = nn.RotaryEmbedding(8, 5)()
    q, k = randn(3, 5, 8), randn(3, 5, 8)
    perm = list(range(0, 8, 2)) + list(range(1, 8, 2))
    inv = np.argsort(perm).tolist()
    qi, ki = F.apply_rotary_emb(q, k, cos, sin, interleaved=True)
    qh, kh = F.apply_rotary_emb(q[..., perm], k[..., perm], cos, sin)
    np.testing.assert_allclose(arr(qi), arr(qh)[..., inv], atol=1e-12)
    np.testing.assert_allclose(arr(ki), arr(kh)[..., inv], atol=1e-12)
    # and the two layouts really differ
    q_half, _ = F.apply_rotary_emb(q, k, cos, sin)
    assert not np.allclose(arr(qi), arr(q_half))


@pytest.mark.parametrize("interleaved", [False, True])
def test_apply_rotary_emb_relative_positions(float64_default, interleaved):
    """q_m . k_n after rotation depends on m - n only: the same vectors at shifted positions."""
    cos, sin = nn.RotaryEmbedding(8, 20)()
    qv, kv = randn(8), randn(8)
    q = qv.unsqueeze(0).expand(20, 8)
    k = kv.unsqueeze(0).expand(20, 8)
    q_rot, k_rot = F.apply_rotary_emb(q, k, cos, sin, interleaved=interleaved)
    scores = arr(q_rot) @ arr(k_rot).T
    for shift in (1, 5):
        np.testing.assert_allclose(np.diag(scores, shift)[:-1], np.diag(scores, shift)[1:], atol=1e-10)
    np.testing.assert_allclose(np.diag(scores), np.full(20, float(arr(qv) @ arr(kv))), atol=1e-10)


@pytest.mark.parametrize("interleaved", [False, True])
def test_apply_rotary_emb_position_ids_1d(float64_default, interleaved):
    cos, sin = nn.RotaryEmbedding(6, 16)()
    q, k = randn(2, 4, 6), randn(2, 4, 6)
    ids = [7, 0, 15, 3]
    q_rot, k_rot = F.apply_rotary_emb(q, k, cos, sin, lucid.tensor(ids), interleaved=interleaved)
    ang = ref_angles(ids, 6)
    np.testing.assert_allclose(arr(q_rot), ref_rope(arr(q), ang, interleaved), atol=1e-12)
    np.testing.assert_allclose(arr(k_rot), ref_rope(arr(k), ang, interleaved), atol=1e-12)
    # positions 0..S-1 by id are the default
    default = F.apply_rotary_emb(q, k, cos, sin, interleaved=interleaved)[0]
    by_ids = F.apply_rotary_emb(q, k, cos, sin, lucid.arange(4), interleaved=interleaved)[0]
    np.testing.assert_allclose(arr(by_ids), arr(default), atol=0)
    # a list and int32 ids are taken too
    by_list = F.apply_rotary_emb(q, k, cos, sin, ids, interleaved=interleaved)[0]
    by_i32 = F.apply_rotary_emb(q, k, cos, sin, lucid.tensor(ids, dtype=lucid.int32), interleaved=interleaved)[0]
    np.testing.assert_allclose(arr(by_list), arr(q_rot), atol=0)
    np.testing.assert_allclose(arr(by_i32), arr(q_rot), atol=0)


@pytest.mark.parametrize("interleaved", [False, True])
def test_apply_rotary_emb_position_ids_per_batch(float64_default, interleaved):
    """(batch, seq) ids: batch row b uses its own positions, shared over heads (B, H, S, D)."""
    cos, sin = nn.RotaryEmbedding(4, 12)()
    q, k = randn(2, 3, 5, 4), randn(2, 1, 5, 4)
    ids = [[0, 1, 2, 3, 4], [11, 6, 6, 2, 9]]
    q_rot, k_rot = F.apply_rotary_emb(q, k, cos, sin, lucid.tensor(ids), interleaved=interleaved)
    assert tuple(q_rot.shape) == (2, 3, 5, 4) and tuple(k_rot.shape) == (2, 1, 5, 4)
    ang = ref_angles([p for row in ids for p in row], 4).reshape(2, 1, 5, 2)
    np.testing.assert_allclose(arr(q_rot), ref_rope(arr(q), ang, interleaved), atol=1e-12)
    np.testing.assert_allclose(arr(k_rot), ref_rope(arr(k), ang, interleaved), atol=1e-12)


@pytest.mark.parametrize("interleaved", [False, True])
def test_apply_rotary_emb_half_width_tables(float64_default, interleaved):
    """[max_pos, D/2] tables (one angle per pair) give the same rotation as RotaryEmbedding's."""
    cos, sin = nn.RotaryEmbedding(8, 6)()
    q, k = randn(6, 8), randn(6, 8)
    full = F.apply_rotary_emb(q, k, cos, sin, interleaved=interleaved)
    half = F.apply_rotary_emb(q, k, cos[:, :4], sin[:, :4], interleaved=interleaved)
    for a, b in zip(full, half):
        np.testing.assert_allclose(arr(a), arr(b), atol=0)


def torch_rope(q, k, cos, sin, interleaved):
    """The same formula written in torch: x * cos + rotate(x) * sin."""
    half = q.shape[-1] // 2
    c, s = cos[: q.shape[-2]], sin[: q.shape[-2]]
    if interleaved:
        c = c[:, :half].repeat_interleave(2, dim=-1)
        s = s[:, :half].repeat_interleave(2, dim=-1)

        def rot(x):
            return torch.stack([-x[..., 1::2], x[..., 0::2]], dim=-1).flatten(-2)
    else:
        def rot(x):
            return torch.cat([-x[..., half:], x[..., :half]], dim=-1)
    return q * c + rot(q) * s, k * c + rot(k) * s


@pytest.mark.parametrize("interleaved", [False, True])
def test_apply_rotary_emb_gradients_match_torch(interleaved):
    cos, sin = nn.RotaryEmbedding(8, 7)()
    q, k = randn(2, 3, 5, 8, dtype=lucid.float64), randn(2, 3, 5, 8, dtype=lucid.float64)
    cos, sin = cos.double().requires_grad_(), sin.double().requires_grad_()
    q.requires_grad_(), k.requires_grad_()
    gq, gk = np.random.default_rng(0).standard_normal((2, 2, 3, 5, 8))
    q_rot, k_rot = F.apply_rotary_emb(q, k, cos, sin, interleaved=interleaved)
    ((q_rot * lucid.tensor(gq)).sum() + (k_rot * lucid.tensor(gk)).sum()).backward()

    tq, tk, tc, ts = (torch.tensor(arr(t), requires_grad=True) for t in (q, k, cos, sin))
    tq_rot, tk_rot = torch_rope(tq, tk, tc, ts, interleaved)
    ((tq_rot * torch.tensor(gq)).sum() + (tk_rot * torch.tensor(gk)).sum()).backward()
    np.testing.assert_allclose(arr(q_rot), tq_rot.detach().numpy(), atol=1e-12)
    np.testing.assert_allclose(arr(k_rot), tk_rot.detach().numpy(), atol=1e-12)
    for mine, ref in ((q, tq), (k, tk), (cos, tc), (sin, ts)):
        assert mine.grad is not None
        np.testing.assert_allclose(arr(mine.grad), ref.grad.numpy(), atol=1e-12)


def test_apply_rotary_emb_grad_is_inverse_rotation(float64_default):
    """The rotation is orthogonal: d(sum(g * R x))/dx = R^T g, i.e. g rotated by -angle."""
    cos, sin = nn.RotaryEmbedding(4, 3)()
    q = randn(3, 4, requires_grad=True)
    g = randn(3, 4)
    q_rot, _ = F.apply_rotary_emb(q, q.detach(), cos, sin)
    (q_rot * g).sum().backward()
    np.testing.assert_allclose(arr(q.grad), ref_rope(arr(g), -ref_angles(range(3), 4), False), atol=1e-12)


def test_apply_rotary_emb_casts_tables_to_input_dtype():
    cos, sin = nn.RotaryEmbedding(4, 3)()  # float32
    q = randn(3, 4, dtype=lucid.float64)
    q_rot, k_rot = F.apply_rotary_emb(q, q, cos, sin)
    assert q_rot.dtype == lucid.float64 and k_rot.dtype == lucid.float64


# ---- modules ------------------------------------------------------------------------------

@pytest.mark.parametrize("make,buffers", [
    (lambda: nn.SinusoidalEmbedding(10, 6), ["pe"]),
    (lambda: nn.SinusoidalEmbedding2D(3, 4, 8), ["pe"]),
    (lambda: nn.RotaryEmbedding(8, 16), ["cos_cached", "sin_cached"]),
])
def test_modules_buffers_are_non_persistent(make, buffers):
    m = make()
    assert [name for name, _ in m.named_buffers()] == buffers
    assert list(m.parameters()) == []
    assert list(m.state_dict().keys()) == []
    m.load_state_dict({})  # strict: nothing missing
    before = [arr(b) for b in m.buffers()]
    m.double()
    assert all(b.dtype == lucid.float64 for b in m.buffers())
    m.to(lucid.float32)
    assert all(b.dtype == lucid.float32 for b in m.buffers())
    for b, old in zip(m.buffers(), before):
        np.testing.assert_allclose(arr(b), old, atol=0)


def test_sinusoidal_modules_forward(float64_default):
    m = nn.SinusoidalEmbedding(9, 6, base=50.0)
    assert m() is m.pe
    np.testing.assert_allclose(arr(m()), ref_table_1d(9, 6, 50.0), atol=1e-12)
    assert (m.num_positions, m.embedding_dim, m.base) == (9, 6, 50.0)
    m2 = nn.SinusoidalEmbedding2D(2, 5, 12, base=50.0)
    assert m2() is m2.pe
    np.testing.assert_allclose(arr(m2()), ref_table_2d(2, 5, 12, 50.0), atol=1e-12)
    assert (m2.height, m2.width, m2.embedding_dim) == (2, 5, 12)
    assert "9, 6, base=50.0" in repr(m) and "2, 5, 12" in repr(m2)


def test_module_names_are_exported():
    for name in ("SinusoidalEmbedding", "SinusoidalEmbedding2D", "RotaryEmbedding", "TimestepEmbedding"):
        assert getattr(nn, name) is getattr(nn.modules, name)
        assert name in nn.modules.__all__
    for name in ("sinusoidal_embedding", "sinusoidal_embedding_2d", "apply_rotary_emb"):
        assert callable(getattr(F, name)) and name in F.__all__


def test_import_lucid_imports_neither_numpy_nor_torch():
    code = ("import sys, lucid, lucid.nn; lucid.nn.RotaryEmbedding(4, 2); "
            "assert 'numpy' not in sys.modules and 'torch' not in sys.modules")
    subprocess.run([sys.executable, "-c", code], check=True, timeout=120)


# ---- TimestepEmbedding ---------------------------------------------------------------------

def test_timestep_embedding_parameters_are_its_two_linears():
    m = nn.TimestepEmbedding(8, 32)
    assert [name for name, _ in m.named_parameters()] == [
        "linear_1.weight", "linear_1.bias", "linear_2.weight", "linear_2.bias"]
    assert [tuple(p.shape) for p in m.parameters()] == [(32, 8), (32,), (32, 32), (32,)]
    assert list(m.buffers()) == []
    assert isinstance(m.linear_1, nn.Linear) and isinstance(m.act, nn.SiLU) and isinstance(m.linear_2, nn.Linear)
    assert sorted(m.state_dict().keys()) == ["linear_1.bias", "linear_1.weight", "linear_2.bias", "linear_2.weight"]
    assert m.flip_sin_to_cos is True


@pytest.mark.parametrize("shape", [(4,), (), (2, 3)])
def test_timestep_embedding_shapes(shape):
    m = nn.TimestepEmbedding(6, 10)
    t = lucid.randint(0, 1000, shape)
    assert tuple(m(t).shape) == (*shape, 10)


@pytest.mark.parametrize("flip", [True, False])
@pytest.mark.parametrize("in_dim", [2, 8])
def test_timestep_embedding_values(flip, in_dim):
    m = nn.TimestepEmbedding(in_dim, 5, base=1000.0, flip_sin_to_cos=flip).double()
    t = [0, 1, 37, 999]
    out = m(lucid.tensor(t))
    w1, b1, w2, b2 = (arr(p) for p in m.parameters())
    h = ref_timestep_features(t, in_dim, 1000.0, flip) @ w1.T + b1
    h = h / (1 + np.exp(-h))
    np.testing.assert_allclose(arr(out), h @ w2.T + b2, atol=1e-10)


def test_timestep_embedding_float_timesteps_and_grad():
    m = nn.TimestepEmbedding(16, 8)
    t = lucid.tensor([0.5, 250.25, 999.0])
    out = m(t)
    assert out.dtype == lucid.float32
    out.sum().backward()
    assert all(p.grad is not None and tuple(p.grad.shape) == tuple(p.shape) for p in m.parameters())


def test_timestep_embedding_default_is_cos_first():
    """Upstream Lucid's features are [cos, sin]: flip_sin_to_cos=True, diffusers' meaning.
    With identity Linears the module returns silu(features)."""
    m = nn.TimestepEmbedding(4, 4)
    with lucid.no_grad():
        for layer in (m.linear_1, m.linear_2):
            layer.weight.copy_(lucid.eye(4))
            layer.bias.zero_()
    out = arr(m(lucid.tensor([0.0, 3.0])))
    feats = np.array([[1, 1, 0, 0], [math.cos(3), math.cos(3e-4), math.sin(3), math.sin(3e-4)]])
    np.testing.assert_allclose(out, feats / (1 + np.exp(-feats)), atol=1e-6)


# ---- errors ---------------------------------------------------------------------------------

@pytest.mark.parametrize("call,exc,match", [
    (lambda: F.sinusoidal_embedding(4, 5), ValueError, "sinusoidal_embedding requires an even embedding_dim, got 5"),
    (lambda: F.sinusoidal_embedding(4, 0), ValueError, "embedding_dim must be positive, got 0"),
    (lambda: F.sinusoidal_embedding(-1, 4), ValueError, "num_positions must be non-negative, got -1"),
    (lambda: F.sinusoidal_embedding(4.0, 4), TypeError, "num_positions must be an int, got float"),
    (lambda: F.sinusoidal_embedding(True, 4), TypeError, "num_positions must be an int, got bool"),
    (lambda: F.sinusoidal_embedding(4, "8"), TypeError, "embedding_dim must be an int, got str"),
    (lambda: F.sinusoidal_embedding(4, 4, base=0.0), ValueError, "base must be a positive finite number"),
    (lambda: F.sinusoidal_embedding(4, 4, base="1e4"), TypeError, "base must be a real number"),
    (lambda: F.sinusoidal_embedding(4, 4, device="tpu"), RuntimeError, "Invalid device string"),
    (lambda: F.sinusoidal_embedding_2d(2, 2, 6), ValueError,
     "sinusoidal_embedding_2d requires embedding_dim divisible by 4, got 6"),
    (lambda: F.sinusoidal_embedding_2d(2, -3, 8), ValueError, "width must be non-negative, got -3"),
    (lambda: F.sinusoidal_embedding_2d(2.5, 2, 8), TypeError, "height must be an int, got float"),
    (lambda: nn.SinusoidalEmbedding(4, 3), ValueError, "SinusoidalEmbedding requires an even embedding_dim, got 3"),
    (lambda: nn.SinusoidalEmbedding2D(2, 2, 10), ValueError,
     "SinusoidalEmbedding2D requires embedding_dim divisible by 4, got 10"),
    (lambda: nn.RotaryEmbedding(7, 4), ValueError, "RotaryEmbedding requires an even head_dim, got 7"),
    (lambda: nn.RotaryEmbedding(8, -4), ValueError, "max_position_embeddings must be non-negative, got -4"),
    (lambda: nn.RotaryEmbedding(8, 4, base=-2), ValueError, "base must be a positive finite number"),
    (lambda: nn.TimestepEmbedding(5, 8), ValueError, "TimestepEmbedding requires an even in_dim, got 5"),
    (lambda: nn.TimestepEmbedding(4, 0), ValueError, "out_dim must be positive, got 0"),
    (lambda: nn.TimestepEmbedding(4, 8.0), TypeError, "out_dim must be an int, got float"),
])
def test_bad_sizes_raise(call, exc, match):
    with pytest.raises(exc, match=match):
        call()


def _rope_args():
    cos, sin = nn.RotaryEmbedding(8, 6)()
    return randn(2, 4, 8), randn(2, 4, 8), cos, sin


@pytest.mark.parametrize("change,exc,match", [
    (lambda q, k, c, s: (q.tolist(), k, c, s), TypeError, "q must be a Tensor, got list"),
    (lambda q, k, c, s: (q[0, 0], k[0, 0], c, s), ValueError, r"q must be \(\.\.\., seq_len, head_dim\)"),
    (lambda q, k, c, s: (q, k[:, :3], c, s), ValueError, r"q and k must share \(seq_len, head_dim\)"),
    (lambda q, k, c, s: (q[..., :7], k[..., :7], c, s), ValueError, "requires an even head_dim, got 7"),
    (lambda q, k, c, s: (q, k, c, s[:, :4]), ValueError, "cos and sin must be tables of the same shape"),
    (lambda q, k, c, s: (q, k, c.unsqueeze(0), s.unsqueeze(0)), ValueError, "cos and sin must be tables"),
    (lambda q, k, c, s: (q, k, c[:, :6], s[:, :6]), ValueError, "tables of width 6 do not fit head_dim 8"),
    (lambda q, k, c, s: (q, k, c[:3], s[:3]), ValueError, "seq_len 4 exceeds the 3 positions"),
])
def test_apply_rotary_emb_bad_inputs(change, exc, match):
    with pytest.raises(exc, match=match):
        F.apply_rotary_emb(*change(*_rope_args()))


@pytest.mark.parametrize("ids,exc,match", [
    (lambda: lucid.tensor([0.0, 1.0, 2.0, 3.0]), TypeError, "position_ids must hold integers"),
    (lambda: lucid.tensor([0, 1, 2]), ValueError, r"position_ids must be \(seq_len,\) or \(batch, seq_len\)"),
    (lambda: lucid.zeros(1, 2, 4, dtype=lucid.int64), ValueError, "position_ids must be"),
    (lambda: lucid.zeros(3, 4, dtype=lucid.int64), ValueError, "position_ids' batch 3 does not match q's 2"),
    (lambda: 3, TypeError, "position_ids must be an integer Tensor, got int"),
    (lambda: lucid.tensor([0, 1, 2, 6]), IndexError, "out of bounds"),
])
def test_apply_rotary_emb_bad_position_ids(ids, exc, match):
    from conftest import raises_by_sync
    q, k, cos, sin = _rope_args()
    with raises_by_sync(exc, match=match):
        F.apply_rotary_emb(q, k, cos, sin, ids())


def test_apply_rotary_emb_batched_ids_need_a_batch_dim():
    cos, sin = nn.RotaryEmbedding(4, 6)()
    q = randn(3, 4)
    with pytest.raises(ValueError, match="need q with a batch dim"):
        F.apply_rotary_emb(q, q, cos, sin, lucid.zeros(1, 3, dtype=lucid.int64))


# ---- GPU ----------------------------------------------------------------------------------

@gpu
@pytest.mark.parametrize("name", ["gpu", "cuda"])
def test_gpu_tables_on_device(name):
    pe = F.sinusoidal_embedding(16, 8, device=name)
    pe2 = F.sinusoidal_embedding_2d(3, 4, 8, device=name)
    assert pe.device.type == "gpu" and pe2.device.type == "gpu"
    np.testing.assert_allclose(arr(pe), ref_table_1d(16, 8), atol=1e-6)
    np.testing.assert_allclose(arr(pe2), ref_table_2d(3, 4, 8), atol=1e-6)


@gpu
@pytest.mark.parametrize("interleaved", [False, True])
def test_gpu_modules_and_rotary(interleaved):
    rope = nn.RotaryEmbedding(8, 10).to("gpu")
    assert all(b.device.type == "gpu" for b in rope.buffers())
    q = lucid.randn(2, 3, 6, 8, device="gpu", requires_grad=True)
    k = lucid.randn(2, 3, 6, 8, device="gpu")
    ids = lucid.tensor([[0, 1, 2, 3, 4, 5], [9, 8, 7, 6, 5, 4]], device="gpu")
    q_rot, k_rot = F.apply_rotary_emb(q, k, *rope(), ids, interleaved=interleaved)
    ang = ref_angles([p for row in ids.tolist() for p in row], 8).reshape(2, 1, 6, 4)
    np.testing.assert_allclose(arr(q_rot), ref_rope(arr(q), ang, interleaved), atol=1e-5)
    q_rot.sum().backward()
    assert q.grad.device.type == "gpu"
    m = nn.TimestepEmbedding(8, 16).to("gpu")
    assert m(lucid.tensor([1, 500], device="gpu")).device.type == "gpu"
    s = nn.SinusoidalEmbedding(5, 4).to("gpu")
    assert s().device.type == "gpu" and list(s.state_dict()) == []
