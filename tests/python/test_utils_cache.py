"""lucid.utils.cache (upstream Lucid's key/value caches, transformers' cache_utils names):
incremental decoding through DynamicCache, StaticCache and EncoderDecoderCache gives the
attention output of the whole sequence at once (a two-layer decoder, and a decoder with
cross-attention, against torch); update returns the concatenation; per-layer lengths;
the legacy tuple format both ways; reorder / select / repeat / crop / reset;
StaticCache's positions, read_len and overflow; EncoderDecoderCache's is_updated flags;
the error messages."""

import subprocess
import sys

import numpy as np
import pytest
import torch

import lucid
import lucid.nn.functional as F
from conftest import default_device_as, to_lucid
from lucid.utils.cache import Cache, DynamicCache, EncoderDecoderCache, StaticCache

gpu = pytest.mark.skipif(not lucid.gpu.is_available(), reason="lucid has no GPU here")
f64 = lucid.float64


@pytest.fixture(params=["cpu", pytest.param("gpu", marks=gpu)])
def dev(request):
    """'cpu' (lucid's default device the CPU, whatever LUCID_TEST_DEFAULT_DEVICE says) or 'gpu'."""
    if request.param == "gpu":
        yield "gpu"
        return
    with default_device_as("cpu"):
        yield "cpu"


def arr(t):
    return np.asarray(t.detach().cpu().tolist(), dtype=np.float64)


def rand(*shape, seed=0):
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed), dtype=torch.float64)


def states(b=2, h=3, t=4, d=5, seed=0, device=None):
    """A (keys, values) pair of lucid float64 tensors, (b, h, t, d), with their torch twins."""
    k, v = rand(b, h, t, d, seed=seed), rand(b, h, t, d, seed=seed + 100)
    return to_lucid(k, device), to_lucid(v, device), k, v


def close(lt, ref, tol=1e-10):
    ref = ref.detach().numpy() if isinstance(ref, torch.Tensor) else np.asarray(ref, dtype=np.float64)
    np.testing.assert_allclose(arr(lt), ref, rtol=tol, atol=tol)


# ---- a tiny decoder, run whole (torch) and step by step through a cache (lucid) --------------

B, T, E, H = 2, 8, 12, 3
D = E // H
CHUNKS = [3, 1, 2, 1, 1]  # a prompt of 3, then tokens one or two at a time: T in all


def causal_mask(past, new, total, device):
    """Query i (absolute position past + i) sees keys 0 .. past + i: the causal mask of a
    step whose keys start at position 0, including a StaticCache's unwritten tail."""
    rows = [[j <= past + i for j in range(total)] for i in range(new)]
    return lucid.tensor(rows, dtype=lucid.bool, device=device)


def split_heads(x):
    return x.reshape(B, x.shape[1], H, D).transpose(1, 2)


def merge_heads(x, n):
    return x.transpose(1, 2).reshape(B, n, E)


def decoder_weights(layers, seed=1):
    return [[rand(E, E, seed=seed + 10 * layer + i) / E ** 0.5 for i in range(3)] for layer in range(layers)]


def torch_decoder(x, weights, memory=None, cross_weights=None):
    """The whole sequence at once: causal self-attention per layer, a residual, and (with
    memory) cross-attention over it."""
    n = x.shape[1]
    for layer, (wq, wk, wv) in enumerate(weights):
        q, k, v = (split_heads(x @ w) for w in (wq, wk, wv))
        x = x + merge_heads(torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True), n)
        if memory is not None:
            cq, ck, cv = cross_weights[layer]
            q, k, v = split_heads(x @ cq), split_heads(memory @ ck), split_heads(memory @ cv)
            x = x + merge_heads(torch.nn.functional.scaled_dot_product_attention(q, k, v), n)
    return x


def lucid_step(x, weights, cache, past, cache_kwargs=None, memory=None, cross_weights=None, projections=None):
    """One step of `x` (B, n, E) through the decoder, its keys and values going into
    `cache` (an EncoderDecoderCache when there is memory)."""
    n = x.shape[1]
    for layer, (wq, wk, wv) in enumerate(weights):
        q, k, v = (split_heads(x @ w) for w in (wq, wk, wv))
        k_all, v_all = cache.update(k, v, layer, cache_kwargs)
        mask = causal_mask(past, n, k_all.shape[2], x.device)
        x = x + merge_heads(F.scaled_dot_product_attention(q, k_all, v_all, attn_mask=mask), n)
        if memory is not None:
            cq, ck, cv = cross_weights[layer]
            if not cache.is_updated.get(layer):
                cross_k, cross_v = cache.cross_attention_cache.update(split_heads(memory @ ck),
                                                                      split_heads(memory @ cv), layer)
                cache.is_updated[layer] = True
                projections.append(layer)
            else:
                cross_k, cross_v = cache.cross_attention_cache[layer]
            x = x + merge_heads(F.scaled_dot_product_attention(split_heads(x @ cq), cross_k, cross_v), n)
    return x


def decode(x, weights, cache, kwargs=lambda past, n: None, **extra):
    outs, past = [], 0
    for n in CHUNKS:
        outs.append(lucid_step(x[:, past:past + n], weights, cache, past, kwargs(past, n), **extra))
        past += n
    return lucid.cat(outs, dim=1)


CACHES = {
    "dynamic": (DynamicCache, lambda past, n: None),
    "static": (lambda: StaticCache(max_cache_len=T + 3), lambda past, n: None),
    "static-cache_position": (lambda: StaticCache(T + 3),
                              lambda past, n: {"cache_position": lucid.arange(past, past + n)}),
    "static-read_len": (lambda: StaticCache(T + 3), lambda past, n: {"read_len": past + n}),
}


@pytest.mark.parametrize("kind", list(CACHES))
def test_incremental_decoding_matches_the_whole_sequence(kind, dev):
    make, kwargs = CACHES[kind]
    weights = decoder_weights(2)
    x = rand(B, T, E, seed=7)
    expected = torch_decoder(x, weights)
    cache = make()
    got = decode(to_lucid(x, dev), [[to_lucid(w, dev) for w in ws] for ws in weights], cache, kwargs)
    assert got.device.type == dev
    close(got, expected)
    assert len(cache) == 2
    assert [cache.get_seq_length(i) for i in range(2)] == [T, T]
    assert cache.seen_tokens == T
    if isinstance(cache, StaticCache):
        assert cache.key_cache[0].shape == (B, H, T + 3, D) and cache.key_cache[1].device.type == dev
        np.testing.assert_array_equal(arr(cache.key_cache[0])[:, :, T:], 0)


def test_incremental_decoding_with_cross_attention(dev):
    weights, cross_weights = decoder_weights(2), decoder_weights(2, seed=50)
    x, memory = rand(B, T, E, seed=7), rand(B, 5, E, seed=8)
    expected = torch_decoder(x, weights, memory, cross_weights)
    cache = EncoderDecoderCache(DynamicCache(), DynamicCache())
    assert cache.is_updated == {}
    projections = []
    got = decode(to_lucid(x, dev), [[to_lucid(w, dev) for w in ws] for ws in weights], cache,
                 memory=to_lucid(memory, dev), cross_weights=[[to_lucid(w, dev) for w in ws] for ws in cross_weights],
                 projections=projections)
    close(got, expected)
    assert projections == [0, 1]  # the encoder's output is projected once per layer, at the first step
    assert cache.is_updated == {0: True, 1: True}
    assert cache.get_seq_length() == T and cache.cross_attention_cache.get_seq_length(1) == 5


# ---- DynamicCache ----------------------------------------------------------------------------

def test_update_returns_the_concatenation():
    cache = DynamicCache()
    k1, v1, tk1, tv1 = states(t=3, seed=0)
    k2, v2, tk2, tv2 = states(t=2, seed=1)
    keys, values = cache.update(k1, v1, 0)
    assert keys is k1 and values is v1  # the first update stores the tensors as they are
    keys, values = cache.update(k2, v2, 0)
    close(keys, torch.cat([tk1, tk2], dim=2))
    close(values, torch.cat([tv1, tv2], dim=2))
    assert cache[0][0] is keys and cache.key_cache[0] is keys and cache.value_cache[0] is values


def test_values_may_be_narrower_than_keys():
    cache = DynamicCache()
    k, v = lucid.randn(1, 2, 3, 8), lucid.randn(1, 2, 3, 4)
    keys, values = cache.update(k, v, 0)
    keys, values = cache.update(k, v, 0)
    assert keys.shape == (1, 2, 6, 8) and values.shape == (1, 2, 6, 4)


def test_seq_length_per_layer():
    cache = DynamicCache()
    assert len(cache) == 0 and cache.get_seq_length() == 0 and cache.seen_tokens == 0
    for layer, t in enumerate([4, 4, 2]):
        cache.update(*states(t=t, seed=layer)[:2], layer)
    cache.update(*states(t=1, seed=9)[:2], 1)
    assert len(cache) == 3
    assert [cache.get_seq_length(i) for i in range(3)] == [4, 5, 2]
    assert cache.get_seq_length(3) == 0 and cache.get_seq_length(100) == 0
    assert cache.seen_tokens == 4  # counted at layer 0
    assert cache.get_max_cache_shape() is None and cache.get_max_length() is None
    assert cache.get_usable_length(10) == 4  # unbounded: everything cached is usable
    assert repr(cache) == "DynamicCache(layers=3, seq_length=4)"


def test_getitem_and_iteration():
    cache = DynamicCache()
    pairs = [states(t=2, seed=i)[:2] for i in range(3)]
    for layer, (k, v) in enumerate(pairs):
        cache.update(k, v, layer)
    assert [(k is pk, v is pv) for (k, v), (pk, pv) in zip(cache, pairs)] == [(True, True)] * 3
    assert cache[2][0] is pairs[2][0]
    with pytest.raises(KeyError, match="DynamicCache only has 3 layers, attempted to access layer with index 3"):
        cache[3]
    with pytest.raises(KeyError, match="index -1"):
        cache[-1]


def test_legacy_round_trip():
    cache = DynamicCache()
    for layer in range(3):
        cache.update(*states(t=3, seed=layer)[:2], layer)
    cache.update(*states(t=1, seed=5)[:2], 0)
    legacy = cache.to_legacy_cache()
    assert isinstance(legacy, tuple) and len(legacy) == 3
    assert all(isinstance(pair, tuple) and len(pair) == 2 for pair in legacy)
    assert legacy[1][0] is cache.key_cache[1] and legacy[2][1] is cache.value_cache[2]
    again = DynamicCache.from_legacy_cache(legacy)
    assert [again.get_seq_length(i) for i in range(3)] == [4, 3, 3]
    for (k, v), (k2, v2) in zip(cache, again):
        np.testing.assert_array_equal(arr(k), arr(k2))
        np.testing.assert_array_equal(arr(v), arr(v2))
    assert again.seen_tokens == 4
    assert len(DynamicCache.from_legacy_cache(None)) == 0 and len(DynamicCache.from_legacy_cache(())) == 0


def test_reorder_cache_for_beam_search():
    cache = DynamicCache()
    for layer in range(2):
        cache.update(*states(b=3, t=2, seed=layer)[:2], layer)
    before = [(arr(k), arr(v)) for k, v in cache]
    cache.reorder_cache(lucid.tensor([2, 0, 0]))
    for (k, v), (bk, bv) in zip(cache, before):
        np.testing.assert_array_equal(arr(k), bk[[2, 0, 0]])
        np.testing.assert_array_equal(arr(v), bv[[2, 0, 0]])
    cache.reorder_cache([1, 2])  # a list works too; the batch may shrink (finished beams)
    np.testing.assert_array_equal(arr(cache.key_cache[1]), before[1][0][[0, 0]])
    cache.update(*states(b=2, t=1, seed=9)[:2], 0)  # and decoding goes on with the new batch
    assert cache.get_seq_length(0) == 3


def test_batch_select_and_repeat():
    cache = DynamicCache()
    k, v, tk, tv = states(b=2, t=3)
    cache.update(k, v, 0)
    cache.batch_repeat_interleave(3)
    close(cache.key_cache[0], tk.repeat_interleave(3, dim=0))
    close(cache.value_cache[0], tv.repeat_interleave(3, dim=0))
    cache.batch_select_indices(lucid.tensor([5, 0]))
    close(cache.key_cache[0], tk[[1, 0]])
    with pytest.raises(ValueError, match="repeats must be >= 1, but got 0"):
        cache.batch_repeat_interleave(0)


def test_crop():
    cache = DynamicCache()
    k, v, tk, tv = states(t=6)
    cache.update(k, v, 0)
    cache.update(k, v, 1)
    cache.crop(4)
    assert [cache.get_seq_length(i) for i in range(2)] == [4, 4] and cache.seen_tokens == 4
    close(cache.key_cache[1], tk[:, :, :4])
    close(cache.value_cache[0], tv[:, :, :4])
    cache.crop(-1)  # drops one token off the end
    assert cache.get_seq_length() == 3 and cache.seen_tokens == 3
    cache.crop(10)  # longer than the cache: nothing to do
    assert cache.get_seq_length() == 3
    keys, _ = cache.update(k[:, :, :1], v[:, :, :1], 0)
    close(keys, torch.cat([tk[:, :, :3], tk[:, :, :1]], dim=2))
    cache.crop(-10)
    assert cache.get_seq_length(0) == 0 and cache.get_seq_length(1) == 0


def test_reset():
    cache = DynamicCache()
    cache.update(*states()[:2], 0)
    cache.reset()
    assert len(cache) == 0 and cache.get_seq_length() == 0 and cache.seen_tokens == 0
    cache.update(*states(b=1, t=2)[:2], 0)  # a new prompt, of another batch
    assert cache.get_seq_length() == 2


@pytest.mark.parametrize("call, error, match", [
    (lambda c, k, v: c.update(k.tolist(), v, 0), TypeError, "key_states must be a lucid.Tensor, but got list"),
    (lambda c, k, v: c.update(k, None, 0), TypeError, "value_states must be a lucid.Tensor, but got NoneType"),
    (lambda c, k, v: c.update(k[0], v[0], 0), ValueError,
     r"key_states must be 4-D \(batch, heads, seq, head_dim\), but got shape \(3, 4, 5\)"),
    (lambda c, k, v: c.update(k, v[:, :, :2], 0), ValueError,
     r"key_states and value_states must agree on \(batch, heads, seq\), but got shapes \(2, 3, 4, 5\) and "
     r"\(2, 3, 2, 5\)"),
    (lambda c, k, v: c.update(k, v, 2), IndexError,
     "DynamicCache fills layers in order: it holds 1 layers, so the next update is for layer 1"),
    (lambda c, k, v: c.update(k, v, -1), ValueError, "layer_idx must be >= 0, but got -1"),
    (lambda c, k, v: c.update(k, v, 0.0), TypeError, "layer_idx must be an int, but got float"),
    (lambda c, k, v: c.update(k, v, True), TypeError, "layer_idx must be an int, but got bool"),
    (lambda c, k, v: c.update(k[:, :2], v[:, :2], 0), ValueError,
     r"layer 0 caches keys of shape \(2, 3, 4, 5\); the new keys of shape \(2, 2, 4, 5\) must match it in "
     r"batch, heads and head_dim"),
    (lambda c, k, v: c.update(k, v[..., :2], 0), ValueError,
     r"layer 0 caches values of shape \(2, 3, 4, 5\); the new values of shape \(2, 3, 4, 2\)"),
    (lambda c, k, v: c.get_seq_length("0"), TypeError, "layer_idx must be an int, but got str"),
    (lambda c, k, v: c.reorder_cache(lucid.tensor([0.0, 1.0])), TypeError,
     "beam_idx must hold integers, but got a tensor of lucid.float32"),
    (lambda c, k, v: c.reorder_cache(lucid.tensor([[0, 1]])), ValueError, r"beam_idx must be 1-D, but got shape"),
    (lambda c, k, v: c.reorder_cache([0, 2]), IndexError, "beam_idx holds 2, out of range for the cached batch of 2"),
    (lambda c, k, v: c.reorder_cache("01"), TypeError, "beam_idx must be a lucid.Tensor or a list of ints"),
    (lambda c, k, v: c.batch_select_indices([0, 1.5]), TypeError, "every entry of indices must be an int"),
    (lambda c, k, v: c.crop(2.5), TypeError, "max_length must be an int, but got float"),
    (lambda c, k, v: DynamicCache.from_legacy_cache(((k, v), (k,))), ValueError,
     "a legacy cache holds one \\(keys, values\\) pair per layer, but layer 1 holds a tuple of 1"),
])
def test_dynamic_cache_errors(call, error, match):
    cache = DynamicCache()
    k, v = states()[:2]
    cache.update(k, v, 0)
    with pytest.raises(error, match=match):
        call(cache, k, v)
    assert cache.get_seq_length() == 4 and len(cache) == 1  # a refused call changes nothing


# ---- StaticCache -----------------------------------------------------------------------------

def test_static_cache_writes_at_its_positions():
    cache = StaticCache(max_cache_len=6)
    assert len(cache) == 0 and cache.get_seq_length() == 0 and cache.get_max_cache_shape() == 6
    k, v, tk, tv = states(t=3)
    keys, values = cache.update(k, v, 0)
    assert keys.shape == (2, 3, 6, 5) and keys.dtype == f64  # the whole buffer
    close(keys[:, :, :3], tk)
    np.testing.assert_array_equal(arr(keys)[:, :, 3:], 0)
    k1, v1, tk1, tv1 = states(t=1, seed=4)
    keys, values = cache.update(k1, v1, 0)  # goes right after the three
    close(keys[:, :, 3:4], tk1)
    close(values[:, :, :4], torch.cat([tv, tv1], dim=2))
    assert cache.get_seq_length() == 4 and cache.seen_tokens == 4
    assert cache[0][0] is keys and repr(cache) == "StaticCache(max_cache_len=6, layers=1, seq_length=4)"


def test_static_cache_position():
    cache = StaticCache(8)
    k, v, tk, tv = states(t=2)
    keys, _ = cache.update(k, v, 0, {"cache_position": lucid.arange(3, 5)})
    close(keys[:, :, 3:5], tk)
    np.testing.assert_array_equal(arr(keys)[:, :, :3], 0)
    assert cache.get_seq_length() == 5  # one past the highest position written
    keys, _ = cache.update(k[:, :, :1], v[:, :, :1], 0, {"cache_position": [0], "sin": None})
    close(keys[:, :, 0], tk[:, :, 0])
    assert cache.get_seq_length() == 5 and cache.seen_tokens == 3


def test_static_cache_read_len():
    cache = StaticCache(8)
    k, v, tk, tv = states(t=3)
    keys, values = cache.update(k, v, 0, {"read_len": 3})
    assert keys.shape == (2, 3, 3, 5) and values.shape == (2, 3, 3, 5)
    close(values, tv)
    assert cache.key_cache[0].shape == (2, 3, 8, 5)  # what is stored stays whole
    keys, _ = cache.update(k[:, :, :1], v[:, :, :1], 0, {"read_len": 8})
    assert keys.shape == (2, 3, 8, 5)


def test_static_cache_overflow():
    cache = StaticCache(max_cache_len=4)
    k, v = states(t=3)[:2]
    cache.update(k, v, 0)
    with pytest.raises(ValueError, match=r"StaticCache overflow: layer 0 holds 3 of max_cache_len=4 positions and "
                                         r"cannot take 2 more; allocate a larger max_cache_len, or crop\(\) / "
                                         r"reset\(\) the cache"):
        cache.update(k[:, :, :2], v[:, :, :2], 0)
    assert cache.get_seq_length() == 3
    cache.update(k[:, :, :1], v[:, :, :1], 0)  # exactly full is fine
    assert cache.get_seq_length() == 4 and cache.get_usable_length(2) == 2
    with pytest.raises(ValueError, match="holds 4 of max_cache_len=4 positions and cannot take 1 more"):
        cache.update(k[:, :, :1], v[:, :, :1], 0)
    with pytest.raises(ValueError, match="StaticCache overflow: cache_position 4 is outside the max_cache_len=4 "
                                         "positions of layer 0"):
        cache.update(k[:, :, :1], v[:, :, :1], 0, {"cache_position": lucid.tensor([4])})
    fresh = StaticCache(4)
    with pytest.raises(ValueError, match="holds 0 of max_cache_len=4 positions and cannot take 5 more"):
        fresh.update(*states(t=5)[:2], 0)
    assert len(fresh) == 0  # nothing allocated by a refused update


def test_static_cache_crop_reset_and_batch():
    cache = StaticCache(6)
    k, v, tk, tv = states(b=2, t=4)
    cache.update(k, v, 0)
    cache.update(k, v, 1)
    cache.crop(-2)
    assert [cache.get_seq_length(i) for i in range(2)] == [2, 2] and cache.seen_tokens == 2
    k2, v2, tk2, _ = states(t=1, seed=3)
    keys, _ = cache.update(k2, v2, 0)  # writes over the cropped position 2
    close(keys[:, :, :3], torch.cat([tk[:, :, :2], tk2], dim=2))
    cache.batch_repeat_interleave(2)
    cache.reorder_cache([3, 0])
    close(cache.key_cache[1][:, :, :4], tk[[1, 0]])
    assert cache.key_cache[0].shape == (2, 3, 6, 5)
    cache.batch_select_indices([1])
    assert cache.value_cache[1].shape == (1, 3, 6, 5)
    cache.reset()
    assert len(cache) == 2 and cache.get_seq_length() == 0 and cache.seen_tokens == 0
    assert cache.key_cache[0].shape == (1, 3, 6, 5)
    np.testing.assert_array_equal(arr(cache.key_cache[0]), 0)


def test_static_cache_allocation():
    cache = StaticCache(5)
    k, v = lucid.randn(1, 2, 2, 4, dtype=lucid.float32), lucid.randn(1, 2, 2, 3, dtype=lucid.float32)
    cache.update(k, v, 2)  # a layer that skips the cache leaves a gap of zero buffers
    assert len(cache) == 3 and [cache.get_seq_length(i) for i in range(3)] == [0, 0, 2]
    assert cache.key_cache[0].shape == (1, 2, 5, 4) and cache.value_cache[0].shape == (1, 2, 5, 3)
    assert cache.key_cache[2].dtype == lucid.float32 and cache.key_cache[2].device == k.device
    keys, values = cache.update(k.to(f64), v.to(f64), 2)  # cast to the buffers' dtype
    assert keys.dtype == lucid.float32
    np.testing.assert_allclose(arr(values)[:, :, 2:4], arr(v), rtol=1e-6)


@pytest.mark.parametrize("call, error, match", [
    (lambda: StaticCache(0), ValueError, "max_cache_len must be >= 1, but got 0"),
    (lambda: StaticCache(4.0), TypeError, "max_cache_len must be an int, but got float"),
    (lambda: StaticCache(4).update(*states(t=2)[:2], 0, {"cache_position": [0]}), ValueError,
     "cache_position holds 1 positions, but the update brings 2 tokens"),
    (lambda: StaticCache(4).update(*states(t=1)[:2], 0, {"cache_position": lucid.tensor([1.0])}), TypeError,
     "cache_position must hold integers, but got a tensor of lucid.float32"),
    (lambda: StaticCache(4).update(*states(t=1)[:2], 0, {"cache_position": 0}), TypeError,
     "cache_position must be a lucid.Tensor or a list of ints, but got int"),
    (lambda: StaticCache(4).update(*states(t=1)[:2], 0, {"cache_position": [-1]}), ValueError,
     "cache_position -1 is outside the max_cache_len=4 positions"),
    (lambda: StaticCache(4).update(*states(t=1)[:2], 0, {"read_len": 5}), ValueError,
     "read_len=5 exceeds max_cache_len=4"),
    (lambda: StaticCache(4).update(*states(t=1)[:2], 0, {"read_len": 0}), ValueError, "read_len must be >= 1"),
    (lambda: StaticCache(4).update(*states(t=1)[:2], 0, [("read_len", 2)]), TypeError,
     "cache_kwargs must be a dict or None, but got list"),
    (lambda: StaticCache(4).update(lucid.zeros(1, 2, 3), lucid.zeros(1, 2, 3), 0), ValueError,
     "key_states must be 4-D"),
    (lambda: StaticCache(4)[0], KeyError, "StaticCache only has 0 layers, attempted to access layer with index 0"),
])
def test_static_cache_errors(call, error, match):
    with pytest.raises(error, match=match):
        call()


def test_static_cache_checks_shapes_against_its_buffers():
    cache = StaticCache(4)
    cache.update(*states(b=2, t=1)[:2], 0)
    with pytest.raises(ValueError, match=r"layer 0 caches keys of shape \(2, 3, 4, 5\); the new keys of shape "
                                         r"\(1, 3, 1, 5\) must match it in batch, heads and head_dim"):
        cache.update(*states(b=1, t=1)[:2], 0)
    assert cache.get_seq_length() == 1


# ---- EncoderDecoderCache ---------------------------------------------------------------------

def filled(layers, t, seed=0):
    cache = DynamicCache()
    for layer in range(layers):
        cache.update(*states(t=t, seed=seed + layer)[:2], layer)
    return cache


def test_is_updated_flags():
    assert EncoderDecoderCache(DynamicCache(), DynamicCache()).is_updated == {}
    cross = filled(2, 5)
    cross_static = StaticCache(5)
    cross_static.update(*states(t=5)[:2], 1)  # layer 0: allocated, nothing written
    assert EncoderDecoderCache(DynamicCache(), cross).is_updated == {0: True, 1: True}
    assert EncoderDecoderCache(DynamicCache(), cross_static).is_updated == {0: False, 1: True}
    # a pair rebuilt around filled buffers whose counts say nothing names its flags
    explicit = EncoderDecoderCache(StaticCache(4), StaticCache(5), is_updated={0: True, 1: 1})
    assert explicit.is_updated == {0: True, 1: True}
    flags = {0: False}
    cache = EncoderDecoderCache(DynamicCache(), DynamicCache(), is_updated=flags)
    cache.is_updated[0] = True
    assert flags == {0: False}  # the cache keeps its own dict


def test_encoder_decoder_cache_routes_to_its_caches():
    self_cache, cross_cache = DynamicCache(), filled(2, 5, seed=20)
    cache = EncoderDecoderCache(self_cache, cross_cache)
    k, v, tk, _ = states(t=2)
    for layer in range(2):
        keys, values = cache.update(k, v, layer)
    keys, _ = cache.update(k[:, :, :1], v[:, :, :1], 0)
    close(keys, torch.cat([tk, tk[:, :, :1]], dim=2))
    assert self_cache.get_seq_length(0) == 3 and cross_cache.get_seq_length(0) == 5
    assert cache.get_seq_length() == 3 and cache.get_seq_length(1) == 2 and len(cache) == 2
    assert cache.get_max_cache_shape() is None
    sk, sv, ck, cv = cache[1]
    assert sk is self_cache.key_cache[1] and cv is cross_cache.value_cache[1]
    assert [entry[2] is cross_cache.key_cache[i] for i, entry in enumerate(cache)] == [True, True]
    with pytest.raises(KeyError, match="EncoderDecoderCache only has 2 layers, attempted to access layer with index 2"):
        cache[2]
    cache.crop(1)  # the decoder's tokens only: the encoder's keys stay whole
    assert cache.get_seq_length() == 1 and cross_cache.get_seq_length(0) == 5
    cache.reorder_cache([1, 1])
    np.testing.assert_array_equal(arr(cross_cache.key_cache[0])[0], arr(cross_cache.key_cache[0])[1])
    cache.batch_repeat_interleave(2)
    assert self_cache.key_cache[0].shape[0] == 4 and cross_cache.value_cache[1].shape[0] == 4
    cache.batch_select_indices([0])
    assert self_cache.key_cache[1].shape[0] == 1 and cross_cache.key_cache[1].shape[0] == 1
    cache.reset()
    assert cache.is_updated == {} and len(self_cache) == 0 and len(cross_cache) == 0


def test_encoder_decoder_with_static_caches():
    cache = EncoderDecoderCache(StaticCache(6), StaticCache(5))
    assert cache.get_max_cache_shape() == 6
    cache.update(*states(t=2)[:2], 0)
    cache.cross_attention_cache.update(*states(t=5)[:2], 0)
    cache.is_updated[0] = True
    cache.crop(1)
    assert cache.get_seq_length() == 1 and cache.cross_attention_cache.get_seq_length() == 5
    cache.reset()
    assert cache.is_updated == {} and cache.get_seq_length() == 0


def test_encoder_decoder_legacy_round_trip():
    cache = EncoderDecoderCache(filled(2, 3), filled(2, 5, seed=10))
    legacy = cache.to_legacy_cache()
    assert len(legacy) == 2 and all(len(entry) == 4 for entry in legacy)
    assert legacy[1][2] is cache.cross_attention_cache.key_cache[1]
    again = EncoderDecoderCache.from_legacy_cache(legacy)
    assert again.is_updated == {0: True, 1: True}
    assert again.get_seq_length() == 3 and again.cross_attention_cache.get_seq_length(1) == 5
    for entry, entry2 in zip(legacy, again.to_legacy_cache()):
        for a, b in zip(entry, entry2):
            np.testing.assert_array_equal(arr(a), arr(b))
    # without cross-attention keys, a layer is the (self_k, self_v) pair of transformers
    self_only = EncoderDecoderCache(filled(2, 3), DynamicCache())
    assert [len(entry) for entry in self_only.to_legacy_cache()] == [2, 2]
    back = EncoderDecoderCache.from_legacy_cache(self_only.to_legacy_cache())
    assert back.is_updated == {} and back.get_seq_length(1) == 3
    assert len(EncoderDecoderCache.from_legacy_cache()) == 0


@pytest.mark.parametrize("call, error, match", [
    (lambda: EncoderDecoderCache(DynamicCache(), None), TypeError,
     "cross_attention_cache must be a DynamicCache or a StaticCache, but got NoneType"),
    (lambda: EncoderDecoderCache(EncoderDecoderCache(DynamicCache(), DynamicCache()), DynamicCache()), TypeError,
     "self_attention_cache must be a DynamicCache or a StaticCache, but got EncoderDecoderCache"),
    (lambda: EncoderDecoderCache(DynamicCache(), DynamicCache(), is_updated=[True]), TypeError,
     "is_updated must be a dict of layer -> bool, but got list"),
    (lambda: EncoderDecoderCache(DynamicCache(), DynamicCache(), {0: True}), TypeError, "positional argument"),
    (lambda: EncoderDecoderCache.from_legacy_cache(((1, 2, 3),)), ValueError,
     r"a legacy encoder-decoder cache holds one \(self_k, self_v, cross_k, cross_v\) tuple per layer, but layer 0 "
     r"holds a tuple of 3"),
])
def test_encoder_decoder_errors(call, error, match):
    with pytest.raises(error, match=match):
        call()


# ---- the interface ---------------------------------------------------------------------------

def test_cache_is_abstract_and_its_helpers_use_the_subclass():
    with pytest.raises(TypeError):
        Cache()

    class Bounded(Cache):
        def update(self, key_states, value_states, layer_idx, cache_kwargs=None):
            return key_states, value_states

        def get_seq_length(self, layer_idx=0):
            return 7

        def get_max_cache_shape(self):
            return 8

        def reorder_cache(self, beam_idx):
            pass

    bounded = Bounded()
    assert bounded.get_max_length() == 8
    assert bounded.get_usable_length(1) == 7 and bounded.get_usable_length(3) == 5
    assert all(issubclass(c, Cache) for c in (DynamicCache, StaticCache, EncoderDecoderCache))


def test_import():
    code = ("import sys, lucid; assert lucid.utils.cache.DynamicCache is not None; "
            "from lucid.utils.cache import Cache, DynamicCache, EncoderDecoderCache, StaticCache; "
            "assert lucid.utils.cache.__all__ == ['Cache', 'DynamicCache', 'EncoderDecoderCache', 'StaticCache']; "
            "assert 'numpy' not in sys.modules and 'torch' not in sys.modules, 'lucid imported numpy or torch'")
    subprocess.run([sys.executable, "-c", code], check=True)
