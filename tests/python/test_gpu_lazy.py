"""Lazy GPU execution (csrc/core/pending.h, Note [Lazy GPU execution]): GPU ops are
recorded and run at a flush, with eager mode's results and errors. Each flush trigger,
the memory bound of a program that never reads a value, writes through views seen by
later reads, version errors at the same statement, out-of-memory recovery, and a
training run bitwise equal to eager mode. The switch itself is checked everywhere; the
rest needs a GPU."""

import gc
import io

import numpy as np
import pytest

import lucid

GPU = lucid.gpu.is_available()
needs_gpu = pytest.mark.skipif(not GPU, reason="lucid has no GPU here")


def pending():
    return lucid.gpu.pending_stats()["ops"]


@pytest.fixture
def lazy():
    was = lucid.gpu.is_lazy()
    lucid.gpu.set_lazy(True)
    if GPU:
        lucid.gpu.synchronize()
    yield
    lucid.gpu.set_lazy(was)


@pytest.mark.parametrize("name", ["lazy", "graph_replay", "fusion"])
def test_switches(name):
    # laziness, the replay of repeated flushes as CUDA graphs, elementwise fusion
    get, put = getattr(lucid.gpu, f"is_{name}"), getattr(lucid.gpu, f"set_{name}")
    was = get()
    try:
        put(False)
        assert get() is False
        put(True)
        assert get() is True
    finally:
        put(was)


def test_pending_stats():
    s = lucid.gpu.pending_stats()
    assert set(s) == {"ops", "bytes", "flushes", "graph_runs", "graph_abandoned", "fused_calls",
                      "region_breaks", "replays", "fixed_replays"} and all(isinstance(v, int) and v >= 0 for v in s.values())
    lucid.gpu.flush()  # nothing recorded: a no-op on any machine


def test_eval_function_takes_trees_of_tensors():
    a, b = lucid.ones(2), lucid.zeros(3)
    assert lucid.eval(a, [b, (a,)], {"k": b}) is None
    assert lucid.eval() is None
    with pytest.raises(TypeError, match="eval\\(\\) takes tensors"):
        lucid.eval(a, 3)


@needs_gpu
def test_ops_are_recorded_until_a_read(lazy):
    x = lucid.arange(6.0, device="gpu")
    y = (x * 2 + 1).exp()
    assert pending() >= 3
    assert lucid.gpu.memory_stats()["pending_ops.current"] == pending()
    assert lucid.gpu.pending_stats()["bytes"] > 0
    np.testing.assert_allclose(y.tolist(), np.exp(np.arange(6.0) * 2 + 1), rtol=1e-6)
    assert pending() == 0


@needs_gpu
def test_eager_mode_records_nothing():
    was = lucid.gpu.is_lazy()
    try:
        lucid.gpu.set_lazy(False)
        x = lucid.ones(4, device="gpu") * 3
        assert pending() == 0
        assert x.tolist() == [3.0] * 4
    finally:
        lucid.gpu.set_lazy(was)


def _record():
    x = lucid.arange(8.0, device="gpu")
    y = x * 3 - 1
    assert pending() > 0
    return y


@needs_gpu
@pytest.mark.parametrize("trigger", [
    "item", "tolist", "repr", "bool", "data_ptr", "save", "cpu", "nonzero", "mask", "unique",
    "lucid.eval", "Tensor.eval", "synchronize", "flush", "dlpack",
])
def test_every_flush_trigger(lazy, trigger):
    y = _record()
    flushes = lucid.gpu.pending_stats()["flushes"]
    if trigger == "item":
        assert y[2].item() == 5.0
    elif trigger == "tolist":
        assert y.tolist()[-1] == 20.0
    elif trigger == "repr":
        assert "20." in repr(y)
    elif trigger == "bool":
        assert bool(y[1] == 2.0)
    elif trigger == "data_ptr":
        assert y.data_ptr() != 0
    elif trigger == "save":
        f = io.BytesIO()
        lucid.save(y, f)
        f.seek(0)
        assert lucid.load(f).tolist()[3] == 8.0
    elif trigger == "cpu":
        assert y.cpu().tolist()[0] == -1.0
    elif trigger == "nonzero":
        assert lucid.nonzero(y > 10).shape == (4, 1)
    elif trigger == "mask":
        assert y[y > 10].shape == (4,)
    elif trigger == "unique":
        assert lucid.unique(y).shape == (8,)
    elif trigger == "lucid.eval":
        lucid.eval(y)
    elif trigger == "Tensor.eval":
        assert y.eval() is y
    elif trigger == "synchronize":
        lucid.gpu.synchronize()
    elif trigger == "flush":
        lucid.gpu.flush()
    elif trigger == "dlpack":
        capsule = y.__dlpack__()
        assert capsule is not None
    assert lucid.gpu.pending_stats()["flushes"] > flushes
    if trigger not in ("nonzero", "mask", "unique"):  # (those record the ops that fill their result)
        assert pending() == 0


@needs_gpu
def test_backward_and_optimizer_step_flush(lazy):
    w = lucid.nn.Parameter(lucid.ones(4, device="gpu"))
    opt = lucid.optim.SGD([w], lr=0.5)
    loss = (w * w).sum()
    assert pending() > 0
    loss.backward()
    assert pending() == 0
    opt.step()
    assert pending() == 0
    assert w.tolist() == [0.0] * 4  # w - 0.5 * 2w


@needs_gpu
def test_op_budget_flushes(lazy):
    flushes = lucid.gpu.pending_stats()["flushes"]
    x = lucid.zeros(4, device="gpu")
    for _ in range(2500):
        x = x + 1
    assert pending() < 1024
    assert lucid.gpu.pending_stats()["flushes"] >= flushes + 2
    assert x.tolist() == [2500.0] * 4


@needs_gpu
def test_long_chain_without_eval_stays_in_bounded_memory(lazy):
    x = lucid.zeros(1 << 18, device="gpu")  # 1 MiB
    lucid.gpu.synchronize()
    gc.collect()
    lucid.gpu.reset_peak_memory_stats()
    base = lucid.gpu.memory_allocated()
    for _ in range(100_000):
        x = x + 1
    peak = lucid.gpu.max_memory_allocated() - base
    assert peak <= (1 << 30) + (64 << 20), f"peak {peak} bytes: the byte budget is 1 GiB of recorded outputs"
    assert x[0].item() == 100_000.0


@needs_gpu
def test_byte_budget_flushes(lazy):
    x = lucid.zeros(1 << 26, device="gpu")  # 256 MiB
    for _ in range(6):
        x = x + 1
    assert lucid.gpu.pending_stats()["bytes"] < (1 << 30)  # the budget: 1 GiB
    assert pending() < 6
    assert x[-1].item() == 6.0


@needs_gpu
def test_write_through_a_view_is_seen(lazy):
    x = lucid.arange(4.0, device="gpu")
    y = x[:2]
    x.add_(1)
    assert y.tolist() == [1.0, 2.0]
    z = x.t() if x.ndim == 2 else x.view(2, 2).t()
    x.mul_(2)
    assert z.tolist() == [[2.0, 6.0], [4.0, 8.0]]


@needs_gpu
def test_metadata_changes_after_recording_do_not_reach_the_recorded_op(lazy):
    x = lucid.arange(6.0, device="gpu").view(2, 3)
    y = x * 1
    x.data = x.t()  # a metadata change of x after y's op was recorded
    assert y.tolist() == [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]
    a = lucid.ones(3, device="gpu")
    b = a + 1
    a.data = lucid.zeros(5, device="gpu")
    assert b.tolist() == [2.0, 2.0, 2.0]


@needs_gpu
def test_version_error_at_the_same_statement(lazy):
    a = lucid.ones(3, device="gpu", requires_grad=True)
    b = a.exp()
    b.add_(1)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        b.sum().backward()


@needs_gpu
def test_out_argument_of_a_recorded_tensor_can_be_resized(lazy):
    o = lucid.ones(3, device="gpu") + 1  # o's storage is held by a recorded op
    lucid.add(lucid.ones(4, device="gpu"), 1, out=o)
    assert o.tolist() == [2.0] * 4


@needs_gpu
def test_out_of_memory_raises_and_the_next_op_works(lazy):
    x = lucid.ones(8, device="gpu") * 2
    with pytest.raises(lucid.gpu.OutOfMemoryError):
        lucid.empty(1 << 45, device="gpu")
    assert (x + 1).tolist() == [3.0] * 8


@needs_gpu
def test_in_place_scan_keeps_its_aliasing(lazy):
    x = lucid.tensor([[1, 2, 3], [4, 5, 6]], device="gpu")
    assert lucid.cumsum(x, 1).tolist() == [[1, 3, 6], [4, 9, 15]]


@needs_gpu
def test_argument_errors_come_from_the_call(lazy):
    x = lucid.ones(3, device="gpu")
    with pytest.raises(NotImplementedError, match="bitwise_and is not implemented for dtype float32"):
        lucid.bitwise_and(x, x)
    assert pending() == 0 or (x + 1).tolist() == [2.0] * 3  # nothing bad was left recorded


@needs_gpu
def test_random_argument_errors_at_the_call(lazy):
    p = lucid.full((4,), 2.0, device="gpu")
    with pytest.raises(RuntimeError, match="p_in"):
        lucid.bernoulli(p)


@needs_gpu
def test_device_index_error_reported_at_a_read(lazy):
    x = lucid.arange(4.0, device="gpu")
    i = lucid.tensor([0, 7], device="gpu")
    with pytest.raises(IndexError, match="out of bounds.*found on the GPU by .*index"):
        x[i].tolist()
    assert (x + 1).tolist() == [1.0, 2.0, 3.0, 4.0]


@needs_gpu
def test_a_device_fault_names_its_op(lazy):
    x = lucid.arange(6.0, device="gpu").reshape(2, 3)
    y = (x * 2).exp()
    z = lucid.gather(x, 1, lucid.tensor([[0, 5]], device="gpu")) + 1  # 5 is out of range
    w = y.sum()
    with pytest.raises(RuntimeError, match="out of bounds.*found on the GPU by gather's kernel"):
        w.item()  # (any read after the flush raises it)
    assert (x + 1).sum().item() == 21.0
    del z


def _train(lazy=True, replay=True, fusion=True, steps=20):
    """A small MLP's Adam steps on the GPU in the given modes: its parameters and losses."""
    modes = lucid.gpu.is_lazy(), lucid.gpu.is_graph_replay(), lucid.gpu.is_fusion()
    lucid.gpu.set_lazy(lazy)
    lucid.gpu.set_graph_replay(replay)
    lucid.gpu.set_fusion(fusion)
    try:
        lucid.manual_seed(0)
        model = lucid.nn.Sequential(lucid.nn.Linear(16, 32), lucid.nn.ReLU(), lucid.nn.Linear(32, 4)).to("gpu")
        opt = lucid.optim.Adam(model.parameters(), lr=1e-2)
        x = lucid.randn(64, 16, device="gpu")
        t = lucid.randint(0, 4, (64,), device="gpu")
        losses = []
        for _ in range(steps):
            opt.zero_grad()
            loss = lucid.nn.functional.cross_entropy(model(x), t)
            loss.backward()
            opt.step()
            losses.append(loss)
        return [p.cpu().numpy() for p in model.parameters()], [v.item() for v in losses]
    finally:
        lucid.gpu.set_lazy(modes[0])
        lucid.gpu.set_graph_replay(modes[1])
        lucid.gpu.set_fusion(modes[2])


@needs_gpu
def test_training_is_bitwise_equal_in_every_mode():
    # lazy with fusion and graphs (the default) against eager mode, and against lazy
    # without graphs or without fusion: the same kernels' bits in another order of launch
    before = lucid.gpu.pending_stats()["graph_runs"]
    params, losses = _train()
    assert lucid.gpu.pending_stats()["graph_runs"] - before >= 10  # backward's and step's flushes replay
    for other in (dict(lazy=False), dict(replay=False), dict(fusion=False)):
        other_params, other_losses = _train(**other)
        assert other_losses == losses, other
        for a, b in zip(params, other_params):
            np.testing.assert_array_equal(a, b)
