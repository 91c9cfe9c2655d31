"""Repeated flushes replayed as CUDA graphs (csrc/backend/cuda/flush_graphs.h, Note
[Flush graphs]): a list of recorded ops whose signature was flushed before is captured
into a graph and replayed with the new addresses. Results must be those of running the
ops one by one, bitwise; a list that needs the host while captured falls back to running
op by op. (The switch is tested in test_gpu_lazy.py.) Every test needs a GPU."""

import numpy as np
import pytest

import lucid

GPU = lucid.gpu.is_available()
needs_gpu = pytest.mark.skipif(not GPU, reason="lucid has no GPU here")


def stats():
    return lucid.gpu.pending_stats()


@pytest.fixture
def graphs():
    lazy, replay, fusion = lucid.gpu.is_lazy(), lucid.gpu.is_graph_replay(), lucid.gpu.is_fusion()
    lucid.gpu.set_lazy(True)
    lucid.gpu.set_graph_replay(True)
    if GPU:
        lucid.gpu.synchronize()
    yield
    lucid.gpu.set_fusion(fusion)
    lucid.gpu.set_graph_replay(replay)
    lucid.gpu.set_lazy(lazy)


def _step(x, w):
    # a few elementwise ops, a product and a reduction: new outputs (addresses) each time
    return (((x @ w) * 0.5 + 1).tanh() - x.mean()).relu()


@needs_gpu
def test_a_repeated_flush_replays_with_new_addresses_and_values(graphs):
    rng = np.random.default_rng(0)
    xn, wn = rng.standard_normal((8, 16)).astype(np.float32), rng.standard_normal((16, 16)).astype(np.float32)
    x, w = lucid.tensor(xn, device="gpu"), lucid.tensor(wn, device="gpu")
    lucid.gpu.set_graph_replay(False)
    expected = []
    for i in range(5):
        expected.append(_step(x + i, w).cpu().numpy())
    lucid.gpu.set_graph_replay(True)
    before = stats()["graph_runs"]
    got = []
    for i in range(5):
        got.append(_step(x + i, w).cpu().numpy())  # one flush per iteration, same ops
    # The first iteration of this signature runs op by op; at least the last three replay.
    assert stats()["graph_runs"] - before >= 3
    for a, b in zip(got, expected):
        np.testing.assert_array_equal(a, b)


@needs_gpu
def test_in_place_updates_between_replays_are_seen(graphs):
    lucid.gpu.set_fusion(False)  # (fused, the three ops are one call: too short a list for a graph)
    x = lucid.zeros(1000, device="gpu")
    before = stats()["graph_runs"]
    for i in range(6):
        x.add_(1)
        x.mul_(2)
        x.sub_(1)
        lucid.eval(x)
    assert stats()["graph_runs"] - before >= 4
    v = 0.0
    for _ in range(6):
        v = (v + 1) * 2 - 1
    assert x.cpu().numpy().tolist() == [v] * 1000


@needs_gpu
def test_a_host_read_inside_a_captured_list_falls_back(graphs):
    # A single row of 64-bit keys longer than the block path: the sort reads which bits
    # differ back to the host, which a graph cannot hold.
    rng = np.random.default_rng(1)
    n = 1 << 17
    before = stats()
    for i in range(4):
        a = rng.standard_normal(n)
        x = lucid.tensor(a, device="gpu")
        y = lucid.sort(x * 2 + 1).values.exp()
        np.testing.assert_allclose(y.cpu().numpy(), np.exp(np.sort(a * 2 + 1)), rtol=1e-14)
    after = stats()
    # The second iteration tried to capture and gave way once; later ones are not tried.
    assert after["graph_abandoned"] - before["graph_abandoned"] == 1


@needs_gpu
def test_replay_off_runs_no_graph(graphs):
    lucid.gpu.set_graph_replay(False)
    before = stats()["graph_runs"]
    x = lucid.ones(10, device="gpu")
    for _ in range(4):
        x = (x + 1) * 1.5 - 2
        lucid.eval(x)
    assert stats()["graph_runs"] == before
    v = 1.0
    for _ in range(4):
        v = (v + 1) * 1.5 - 2
    assert x.tolist() == [v] * 10


@needs_gpu
def test_many_signatures_stay_within_the_cache(graphs):
    # More distinct repeated lists than the cache holds graphs: old ones are evicted, none
    # fails, every result is right.
    x = lucid.arange(4.0, device="gpu")
    for size in range(1, 80):
        y = lucid.arange(float(size), device="gpu")
        lucid.eval(y)
        for _ in range(3):
            z = ((y + 1) * 2 - 1).abs()
            assert z.tolist() == [abs((v + 1) * 2 - 1) for v in range(size)]
    assert (x + 1).tolist() == [1.0, 2.0, 3.0, 4.0]
