"""Sums, means, sums of magnitudes and values-only maxima and minima over the last dims,
fused with the elementwise chain computing their input at a GPU flush
(csrc/ops/fusion_rows.cpp, Note [Fused norm rows]): the chain runs as the reduction
reads its row, in the unfused reduction's order, so the results are the unfused calls'
bit for bit (reduce_rows_walk.cuh). Every test needs a GPU."""

import numpy as np
import pytest

import lucid
from test_gpu_fused_norms import gpu, needs_gpu, normal, three_ways

pytestmark = needs_gpu


def fused_sums():
    """Fused row reduction launches and the calls replaced by fused kernels."""
    return lucid.gpu.generated_kernel_stats()["fused_reduce_launches"], lucid.gpu.pending_stats()["fused_calls"]


# n: 16-byte groups of float32 (1024, 1000, 6000 over 600 rows: one block a row), single
# elements (1001, 4099)
@pytest.mark.parametrize("rows, n", [(64, 1024), (8, 1000), (32, 1001), (600, 6000), (600, 4099)])
def test_a_hand_written_rms_statistic_is_one_kernel(rows, n):
    x0 = normal((rows, n), 1)

    def run():
        x = gpu(x0, lucid.bfloat16)
        return (x.float() ** 2).mean(-1, keepdim=True)

    (ms,), fused, _ = three_ways(run, fused_sums)
    assert fused == 1
    assert ms.shape == (rows, 1) and ms.dtype == np.float32
    ref = (np.asarray(gpu(x0, lucid.bfloat16).float().cpu().numpy(), np.float64) ** 2).mean(-1, keepdims=True)
    np.testing.assert_allclose(ms, ref, rtol=1e-6)


@pytest.mark.parametrize("n", [998, 999])  # (float64: groups of two, single elements)
def test_float64_sums_and_sums_of_magnitudes(n):
    x0, w0 = normal((40, n), 2), normal((n,), 3)

    def run():
        x, w = gpu(x0, lucid.float64), gpu(w0, lucid.float64)
        return (x * w - 0.25).sum(-1), lucid.linalg.vector_norm(x + w, 1, dim=-1)

    (s, norm1), fused, _ = three_ways(run, fused_sums)
    assert fused == 2
    np.testing.assert_allclose(s, (x0 * w0 - 0.25).sum(-1), rtol=1e-12)
    np.testing.assert_allclose(norm1, np.abs(x0 + w0).sum(-1), rtol=1e-12)


def test_an_input_held_elsewhere_is_stored_too():
    x0 = normal((128, 512), 4)

    def run():
        x = gpu(x0)
        y = (x - 1.0).exp()
        return y, y.sum(-1), y.mean((-2, -1))

    (y, s, m), fused, _ = three_ways(run, fused_sums)
    assert fused == 1  # (the sum takes the chain; the mean over both dims reads y)
    np.testing.assert_allclose(y, np.exp(x0 - 1.0), rtol=1e-6)
    np.testing.assert_allclose(s, np.exp(x0 - 1.0).sum(-1), rtol=1e-5)


def test_special_values_sum_as_unfused():
    x0 = normal((600, 256), 5)
    x0[0, 3], x0[1, 7], x0[2, :] = np.nan, np.inf, -0.0

    def run():
        x = gpu(x0)
        return (x * -1.0).sum(-1), (x * 0.0).mean(-1)

    (s, m), fused, _ = three_ways(run, fused_sums)
    assert fused == 2
    assert np.isnan(s[0]) and s[1] == -np.inf and np.isnan(m[0]) and np.isnan(m[1])


@pytest.mark.parametrize("dtype", [lucid.float32, lucid.float64])
def test_maxima_and_minima_of_a_chain(dtype):
    x0 = normal((700, 1002), 9)
    x0[5, 17], x0[6, :] = np.nan, -0.0

    def run():
        x = gpu(x0, dtype)
        y = (x * 3.0).sin()
        return y.amax(-1), (x - 2.0).amin(-1, keepdim=True), x.abs().max(-1).values

    (mx, mn, with_index), fused, _ = three_ways(run, fused_sums)
    assert fused == 2  # (max with its index stays unfused)
    rtol = 1e-6 if dtype == lucid.float32 else 1e-15
    ref = np.sin(x0 * 3.0).max(-1)
    assert np.isnan(mx[5]) and np.isnan(ref[5])
    np.testing.assert_allclose(np.delete(mx, 5), np.delete(ref, 5), rtol=rtol)
    np.testing.assert_allclose(mn[:, 0], (x0 - 2.0).min(-1), rtol=rtol)
    assert np.isnan(with_index[5])


def test_split_sums_other_dims_and_empty_rows_stay_unfused():
    long0, x0 = normal((4, 20000), 6), normal((64, 32), 7)

    def run():
        long_rows, x = gpu(long0), gpu(x0)
        empty = gpu(np.zeros((8, 0)))
        return (long_rows * 2.0).sum(-1), (x * 2.0).sum(0), (empty + 1.0).sum(-1)

    (s, s0, e), fused, _ = three_ways(run, fused_sums)
    assert fused == 0
    np.testing.assert_allclose(s, (long0 * 2.0).sum(-1), rtol=1e-5)
    np.testing.assert_allclose(s0, (x0 * 2.0).sum(0), rtol=1e-5)
    assert e.tolist() == [0.0] * 8


def test_gradients_through_a_fused_sum_are_bitwise():
    x0 = normal((256, 768), 8)

    def run():
        x = gpu(x0).requires_grad_()
        loss = ((x * 0.5).tanh() ** 2).mean(-1).sum()
        loss.backward()
        return loss.detach(), x.grad

    (loss, grad), fused, _ = three_ways(run, fused_sums)
    assert fused >= 1
    t = np.tanh(x0 * 0.5)
    np.testing.assert_allclose(grad, 2 * t * (1 - t * t) * 0.5 / 768, rtol=1e-4, atol=1e-9)
