"""layer_norm / rms_norm, and softmax / log_softmax over the last dim, fused with their
elementwise neighbours at a GPU flush (csrc/ops/fusion_rows.cpp, Note [Fused norm rows]):
the chain computing the row op's input runs as the row is read, the chain taking its
result as it is written, in one generated kernel whose results are the unfused calls'
bit for bit. Every test needs a GPU."""

import numpy as np
import pytest

import lucid
import lucid.nn as nn
import lucid.nn.functional as F

GPU = lucid.gpu.is_available()
needs_gpu = pytest.mark.skipif(not GPU, reason="lucid has no GPU here")


def fused_norms():
    stats = lucid.gpu.generated_kernel_stats()
    return stats["fused_norm_launches"], stats["fused_norm_backward_launches"]


def fused_softmaxes():
    """Fused softmax launches, fused norm launches and calls replaced by fused kernels."""
    stats = lucid.gpu.generated_kernel_stats()
    return stats["fused_softmax_launches"], stats["fused_norm_launches"], lucid.gpu.pending_stats()["fused_calls"]


def as_numpy(t):
    return t.float().cpu().numpy() if t.dtype in (lucid.float16, lucid.bfloat16) else t.cpu().numpy()


def three_ways(fn, counters=fused_norms):
    """fn() with fusion off, with fusion on but no generated kernels (the norms stay
    unfused), and with fusion and the generated kernels (compiled at once): the results
    as NumPy arrays, which must agree bit for bit, and how much each of `counters`
    (fused norms and norm backwards) rose in the last run."""
    lazy, was, mode = lucid.gpu.is_lazy(), lucid.gpu.is_fusion(), lucid.gpu.kernel_compile()
    norms = lucid.gpu.is_norm_fusion()
    lucid.gpu.set_lazy(True)
    lucid.gpu.set_norm_fusion(True)
    try:
        out = []
        for fusion, compiled in ((False, "off"), (True, "off"), (True, "sync")):
            lucid.gpu.set_fusion(fusion)
            lucid.gpu.set_kernel_compile(compiled)
            before = counters()
            got = fn()
            lucid.gpu.flush()  # (fn's calls alone: the reads below record casts of their own)
            got = got if isinstance(got, (tuple, list)) else (got,)
            out.append([as_numpy(g) for g in got])
            fused = tuple(a - b for a, b in zip(counters(), before))
        for other in out[1:]:
            assert_bitwise(out[0], other)
        return (out[2], *fused)
    finally:
        lucid.gpu.set_kernel_compile(mode)
        lucid.gpu.set_norm_fusion(norms)
        lucid.gpu.set_fusion(was)
        lucid.gpu.set_lazy(lazy)


def assert_bitwise(a, b):
    assert len(a) == len(b)
    for x, y in zip(a, b):
        assert x.dtype == y.dtype and x.shape == y.shape
        # bytes, not values: NaNs and signed zeros must match too
        np.testing.assert_array_equal(np.atleast_1d(x).view(np.uint8), np.atleast_1d(y).view(np.uint8))


def gpu(a, dtype=lucid.float32):
    return lucid.tensor(np.asarray(a), device="gpu").to(dtype)


def normal(shape, seed, scale=1.0):
    return np.random.default_rng(seed).standard_normal(shape) * scale


def test_the_norm_fusion_switch():
    was = lucid.gpu.is_norm_fusion()
    try:
        for enabled in (True, False):
            lucid.gpu.set_norm_fusion(enabled)
            assert lucid.gpu.is_norm_fusion() is enabled
    finally:
        lucid.gpu.set_norm_fusion(was)


@needs_gpu
@pytest.mark.parametrize("n", [64, 1000, 1024, 2048, 3000, 6000])  # every forward layout
@pytest.mark.parametrize("rms", [False, True])
def test_residual_add_norm_and_cast_are_one_kernel(n, rms):
    a, h = gpu(normal((96, n), 0), lucid.bfloat16), gpu(normal((96, n), 1), lucid.bfloat16)
    w, b = gpu(normal(n, 2) * 0.1 + 1), gpu(normal(n, 3) * 0.1)

    def block():
        s = (a + h).float()
        y = F.rms_norm(s, (n,), w, eps=1e-6) if rms else F.layer_norm(s, (n,), w, b)
        return y.to(lucid.bfloat16)

    (z,), fused, _ = three_ways(block)
    assert fused == 1
    assert z.shape == (96, n)


@needs_gpu
def test_longer_chains_on_both_sides():
    x = gpu(normal((64, 512), 4))
    w = gpu(normal(512, 5))

    def run():
        s = lucid.tanh(x * 1.5 + 0.25) - x
        y = F.layer_norm(s, (512,), w, None)
        return F.gelu(y * 2.0 + 1.0) * y

    (z,), fused, _ = three_ways(run)
    assert fused == 1


@needs_gpu
def test_float64_rows():
    x, r = gpu(normal((40, 300), 6), lucid.float64), gpu(normal((40, 300), 7), lucid.float64)

    def run():
        return F.layer_norm(x + r, (300,)).relu() * 3.0

    _, fused, _ = three_ways(run)
    assert fused == 1


@needs_gpu
def test_results_held_elsewhere_are_stored_too():
    x, r = gpu(normal((32, 256), 8)), gpu(normal((32, 256), 9))

    def run():
        s = x + r  # (the caller keeps the norm's input and result as well)
        y = F.layer_norm(s, (256,))
        return s, y, y.half()

    (s, y, z), fused, _ = three_ways(run)
    assert fused == 1
    np.testing.assert_array_equal(s, as_numpy(x) + as_numpy(r))


@needs_gpu
def test_a_norm_alone_or_with_one_side():
    x = gpu(normal((16, 128), 10))

    def prologue_only():
        return F.layer_norm(x * 2.0, (128,))

    def epilogue_only():
        return F.rms_norm(x, (128,)).sigmoid()

    def alone():
        return F.layer_norm(x, (128,))

    assert three_ways(prologue_only)[1] == 1
    assert three_ways(epilogue_only)[1] == 1
    assert three_ways(alone)[1] == 0


@needs_gpu
def test_rows_too_long_to_stage_stay_unfused():
    x = gpu(normal((4, 16384), 11))

    def run():
        return F.layer_norm(x + 1.0, (16384,)) * 2.0

    _, fused, _ = three_ways(run)
    assert fused == 0


@needs_gpu
def test_a_prologue_writing_the_norms_weight_is_left_out():
    x = gpu(normal((1, 64), 12))

    def run():
        w = gpu(np.linspace(0.5, 1.5, 64))
        lucid.gpu.synchronize()
        s = x * 2.0
        w.mul_(2.0)  # (one program with s: it writes an operand the norm reads)
        return F.layer_norm(s, (64,), w).exp(), w

    _, fused, _ = three_ways(run)
    assert fused == 1  # (the norm with its epilogue alone)


@needs_gpu
def test_gradients_through_fused_norms_are_bitwise():
    x0, r0 = normal((48, 384), 13), normal((48, 384), 14)
    w0, b0 = normal(384, 15) * 0.1 + 1, normal(384, 16) * 0.1

    def run():
        x = gpu(x0).requires_grad_()
        r = gpu(r0)
        w, b = gpu(w0).requires_grad_(), gpu(b0).requires_grad_()
        y = F.layer_norm(x * 0.5 + r, (384,), w, b)
        loss = (F.gelu(y) * 1.5).sum()
        loss.backward()
        return loss, x.grad, w.grad, b.grad

    _, fused, fused_backward = three_ways(run)
    assert fused == 1
    assert fused_backward == 1  # (dx scaled by 0.5 for x's gradient: the backward's epilogue)


@needs_gpu
def test_repeated_steps_replay_the_fused_norm():
    x, r = gpu(normal((64, 256), 17)), gpu(normal((64, 256), 18))
    w = gpu(normal(256, 19))

    def run():
        outs = []
        for _ in range(4):  # (one flush each: a repeated flush replays as a CUDA graph)
            outs.append(F.layer_norm(x + r, (256,), w).to(lucid.bfloat16))
            lucid.gpu.synchronize()
        return outs

    outs, fused, _ = three_ways(run)
    assert fused == 4
    for o in outs[1:]:
        np.testing.assert_array_equal(o, outs[0])


@needs_gpu
@pytest.mark.parametrize("norm_first", [False, True])
def test_transformer_layer_training_under_bf16_autocast(norm_first):
    def run():
        lucid.manual_seed(0)
        layer = nn.TransformerEncoderLayer(128, 4, 256, dropout=0.0, batch_first=True, norm_first=norm_first,
                                           device="gpu")
        src = gpu(normal((4, 32, 128), 20))
        outs = []
        for _ in range(2):
            with lucid.autocast("cuda", dtype=lucid.bfloat16):
                out = layer(src)
            loss = out.float().square().mean()
            loss.backward()
            outs += [loss, out]
        return outs + [p.grad for p in layer.parameters()]

    _, fused, fused_backward = three_ways(run)
    assert fused >= 2 and fused_backward >= 0  # (counted; the backward's order decides its epilogues)


@needs_gpu
@pytest.mark.parametrize("n", [256, 1024, 4096])
@pytest.mark.parametrize("rms", [False, True])
def test_backward_with_its_epilogue(n, rms):
    a0, g0 = normal((64, n), 21), normal((64, n), 22)
    w0 = normal(n, 23) * 0.1 + 1

    def run():
        a = gpu(a0).requires_grad_()
        w = gpu(w0).requires_grad_()
        x = a * 2.0  # (x's gradient times 2 for a's: the chain that takes dx)
        y = F.rms_norm(x, (n,), w, eps=1e-6) if rms else F.layer_norm(x, (n,), w, None)
        y.backward(gpu(g0))
        return a.grad, w.grad

    _, _, fused_backward = three_ways(run)
    assert fused_backward == 1


@needs_gpu
def test_backward_whose_dx_is_held_stores_it_too():
    a0, g0 = normal((32, 512), 24), normal((32, 512), 25)

    def run():
        a = gpu(a0).requires_grad_()
        x = a * 1.0
        x.retain_grad()  # (x's gradient, dx itself, is kept: stored as well as scaled)
        y = F.layer_norm(x, (512,))
        (y * gpu(g0)).sum().backward()
        return a.grad, x.grad

    (ga, gx), _, _ = three_ways(run)
    np.testing.assert_array_equal(ga, gx)


# ---- softmax / log_softmax ------------------------------------------------------------


@needs_gpu
@pytest.mark.parametrize("n", [64, 1000, 1024, 2048, 3000, 6000])  # every softmax layout
@pytest.mark.parametrize("log", [False, True])
def test_autocast_softmax_casts_and_scale_are_one_kernel(n, log):
    x = gpu(normal((96, n), 30, 3.0), lucid.bfloat16)

    def run():
        s = x.float() * 0.125  # (autocast's cast up, then the scale of attention's scores)
        y = F.log_softmax(s, -1) if log else F.softmax(s, -1)
        return y.to(lucid.bfloat16)  # (the cast for the next product)

    (z,), fused, norms, calls = three_ways(run, fused_softmaxes)
    # (cast and scale, one elementwise program; it, the softmax and the cast down, one kernel)
    assert (fused, norms, calls) == (1, 0, 2 + 3)
    ref = lucid.tensor(as_numpy(x)).float() * 0.125
    ref = (lucid.log_softmax(ref, -1) if log else lucid.softmax(ref, -1)).to(lucid.bfloat16).float().numpy()
    np.testing.assert_allclose(z, ref, rtol=1e-2, atol=1e-2)


@needs_gpu
def test_softmax_results_held_elsewhere_are_stored_and_match_the_cpu():
    x0, m0 = normal((40, 700), 31), np.where(normal((40, 700), 32) > 1.0, -np.inf, 0.0)
    x, m = gpu(x0), gpu(m0)

    def run():
        s = x * 0.5 + m  # (a full-shape mask; the caller keeps the scores and the probabilities)
        y = F.softmax(s, dim=-1)
        return s, y, y * 3.0

    (s, y, z), fused, _, calls = three_ways(run, fused_softmaxes)
    assert (fused, calls) == (1, 2 + 3)
    ref = lucid.softmax(lucid.tensor(x0 * 0.5 + m0).float(), -1).numpy()
    np.testing.assert_allclose(y, ref, rtol=1e-6, atol=1e-7)
    np.testing.assert_array_equal(z, y * np.float32(3.0))


@needs_gpu
@pytest.mark.parametrize("t", [48, 1000])
def test_masks_broadcast_over_batch_and_heads_fuse_into_the_softmax(t):
    """Attention's masks as written: a causal [T, T] mask over batch and heads and a key
    padding mask [B, 1, 1, T] are read through their views in the prologue, a per-head
    gate [1, H, 1, 1] in the epilogue: scores in, probabilities out, one kernel."""
    b, h = 2, 3
    x0 = normal((b, h, t, t), 36)
    causal0 = np.triu(np.full((t, t), -np.inf), 1)
    keys0 = np.zeros((b, 1, 1, t))
    keys0[1, ..., t // 2:] = -np.inf  # (the second sequence is padded: its later keys masked)
    gate0 = normal((1, h, 1, 1), 37)
    x, causal, keys, gate = gpu(x0), gpu(causal0), gpu(keys0), gpu(gate0)

    def run():
        s = x * 0.125 + causal + keys  # (one elementwise program reading two views)
        return F.softmax(s, dim=-1) * gate

    (y,), fused, _, calls = three_ways(run, fused_softmaxes)
    assert (fused, calls) == (1, 3 + 3)
    ref = lucid.softmax(lucid.tensor(x0 * 0.125 + causal0 + keys0).float(), -1).numpy() * gate0.astype(np.float32)
    np.testing.assert_allclose(y, ref, rtol=1e-5, atol=1e-7)


@needs_gpu
def test_float64_log_softmax_and_fully_masked_rows():
    x0 = normal((8, 300), 33)
    x0[3] = -np.inf  # (every element masked: NaNs, as torch gives)
    x = gpu(x0, lucid.float64)

    def run():
        return F.log_softmax(x - 1.0, -1).exp()

    (y,), fused, _, calls = three_ways(run, fused_softmaxes)
    assert (fused, calls) == (1, 3)
    assert np.isnan(y[3]).all() and np.isfinite(np.delete(y, 3, axis=0)).all()
    ref = lucid.log_softmax(lucid.tensor(x0 - 1.0), -1).exp().numpy()
    np.testing.assert_allclose(y, ref, rtol=1e-12, atol=1e-15)


@needs_gpu
def test_softmax_gradients_through_the_fused_kernel_are_bitwise():
    x0, w0 = normal((64, 512), 34), normal((64, 512), 35)

    def run():
        x = gpu(x0).requires_grad_()
        y = F.softmax(x * 0.5, -1)
        loss = (y * gpu(w0)).sum()
        loss.backward()
        return loss, x.grad

    _, fused, _, _ = three_ways(run, fused_softmaxes)
    assert fused == 1


@needs_gpu
def test_softmax_over_other_dims_and_long_rows_stay_unfused():
    x = gpu(normal((64, 32), 36))
    long_rows = gpu(normal((2, 16384), 37))

    def run():
        return F.softmax(x * 2.0, 0) + 1.0, F.softmax(long_rows * 2.0, -1) + 1.0

    _, fused, _, _ = three_ways(run, fused_softmaxes)
    assert fused == 0


@needs_gpu
@pytest.mark.parametrize("dtype", [lucid.float16, lucid.bfloat16, lucid.float32, lucid.float64])
@pytest.mark.parametrize("n", [1, 64, 1000, 3000, 6000, 20000])  # every layout, read-again rows too
def test_unfused_softmax_rows_match_the_cpu(dtype, n):
    x0 = normal((7, n), 38, 4.0)
    x0[1, n // 2] = np.inf
    x0[2, 0] = np.nan
    x0[4] = -np.inf
    for log in (False, True):
        f = F.log_softmax if log else F.softmax
        got = as_numpy(f(gpu(x0, dtype), -1))
        want = as_numpy(f(lucid.tensor(x0).to(dtype), -1))
        np.testing.assert_allclose(got, want, rtol=2e-6 if dtype == lucid.float32 else 1e-12 if dtype == lucid.float64
                                   else 1e-2, atol=1e-7 if dtype != lucid.float64 else 1e-15, equal_nan=True)
