"""lucid.profiler: the ops a block runs (from the engine's op tally), record_function
ranges with their wall-clock spans, and the GPU allocator's counters.

torch.profiler reports the same op names for the same calls only loosely (aten::
prefixes, views), so the recorded ops are checked against what the code launched.
"""

import json
import time

import pytest

import lucid
import lucid.profiler as profiler

# The ops' devices are checked: CPU tensors unless a test names the GPU (conftest.py).
pytestmark = pytest.mark.usefixtures("cpu_default")


def test_public_names_and_the_autograd_path():
    names = {"MemoryStats", "OpEvent", "ProfileSummary", "Profiler", "profile", "record_function"}
    assert names <= set(profiler.__all__)
    for name in names:
        assert getattr(lucid.autograd.profiler, name) is getattr(profiler, name)
    assert lucid.profiler is profiler


def test_ops_are_recorded_in_launch_order_with_shapes():
    a, b = lucid.ones(3, 4), lucid.ones(4, 5, dtype=lucid.float64)
    with profiler.profile() as prof:
        c = a @ a.T
        d = (b * 2.0).sum()
    events = prof.events()
    assert [e.name for e in events] == ["matmul", "mul", "sum"]
    assert events[0].shape == [3, 3] and events[0].dtype == "float32" and events[0].device == "cpu"
    assert events[1].shape == [4, 5] and events[1].dtype == "float64" and events[1].numel == 20
    assert events[2].shape == [] and events[2].numel == 1
    assert [e.index for e in events] == [0, 1, 2]
    assert not any(e.recorded for e in events)
    assert c.shape == (3, 3) and d.item() == 40.0
    # nothing after the session ends is recorded
    _ = a + a
    assert len(prof.events()) == 3


def test_backward_ops_and_key_averages():
    x = lucid.ones(2, 3, requires_grad=True)
    with profiler.profile() as prof:
        y = (x.relu() * 3.0).sum()
        y.backward()
    names = [e.name for e in prof.events()]
    assert names[:3] == ["relu", "mul", "sum"]
    assert len(names) > 3  # the backward pass's ops are the thread's ops too
    summaries = prof.key_averages()
    by_name = {s.name: s for s in summaries}
    assert sum(s.count for s in summaries) == len(names)
    assert by_name["relu"].count == names.count("relu") and by_name["relu"].shapes == [[2, 3]]
    assert by_name["relu"].total_numel == 6 * names.count("relu")
    assert [s.count for s in summaries] == sorted((s.count for s in summaries), reverse=True)
    table = summaries.table(row_limit=2)
    assert "Calls" in table and summaries[0].name in table and len(table.splitlines()) == 2 + 3 + 1
    with pytest.raises(ValueError, match="sort_by"):
        summaries.table(sort_by="time")


def test_record_function_ranges_hold_their_ops_and_real_time():
    a = lucid.ones(8)
    with profiler.profile() as prof:
        _ = a + 1.0
        with profiler.record_function("outer"):
            _ = a * 2.0
            with profiler.record_function("inner"):
                _ = a.exp()
                time.sleep(0.02)
            _ = a.sin()
        _ = a.cos()
    outer, inner = prof.ranges()
    assert (outer.name, outer.depth, inner.name, inner.depth) == ("outer", 0, "inner", 1)
    assert [e.name for e in outer.ops] == ["mul", "exp", "sin"]
    assert [e.name for e in inner.ops] == ["exp"]
    assert inner.time_ns >= 20_000_000 and outer.time_ns >= inner.time_ns
    assert inner.time_ms == pytest.approx(inner.time_ns / 1e6)
    assert prof.total_time_ns >= outer.time_ns
    assert not inner.synchronized


def test_record_function_as_decorator_and_without_a_session():
    @profiler.record_function("step")
    def step(x):
        return x.neg()

    x = lucid.ones(2)
    assert step(x).tolist() == [-1.0, -1.0]  # no session: records nothing, still runs
    with profiler.record_function("nothing"):
        pass
    with profiler.profile() as prof:
        step(x)
        step(x)
    assert [r.name for r in prof.ranges()] == ["step", "step"]
    assert all([e.name for e in r.ops] == ["neg"] for r in prof.ranges())
    with pytest.raises(TypeError, match="name must be a str"):
        profiler.record_function(3)


def test_start_stop_and_a_range_left_open():
    prof = profiler.Profiler(with_memory=False)
    prof.start()
    _ = lucid.ones(2) + 1.0
    rf = profiler.record_function("left open")
    rf.__enter__()
    _ = lucid.ones(2) * 3.0
    prof.stop()
    rf.__exit__(None, None, None)
    (r,) = prof.ranges()
    assert [e.name for e in r.ops] == ["mul"] and r.time_ns is not None
    prof.start()  # a second span appends to the first
    _ = lucid.ones(2).exp()
    prof.stop()
    assert [e.name for e in prof.events()] == ["add", "mul", "exp"]
    assert prof.memory_stats() is None
    prof.clear()
    assert prof.events() == [] and prof.ranges() == []


def test_session_errors():
    prof = profiler.Profiler()
    with pytest.raises(RuntimeError, match="not running"):
        prof.stop()
    with prof:
        with pytest.raises(RuntimeError, match="already running"):
            prof.start()
        with pytest.raises(RuntimeError, match="already running on this thread"):
            profiler.Profiler().start()
        with pytest.raises(RuntimeError, match="stopped"):
            prof.clear()
    with pytest.raises(ValueError, match="unknown profiler activity"):
        profiler.profile(activities=["tpu"])
    with pytest.raises(ValueError, match="when"):
        prof.memory_stats(when="middle")


def test_activities_select_devices():
    a = lucid.ones(4)
    with profiler.profile(activities=["cuda"], with_memory=False) as prof:
        _ = a + a
    if not lucid.gpu.is_available():
        assert prof.events() == []
    with profiler.profile(activities=["CPU"]) as prof:
        _ = a + a
    assert [e.name for e in prof.events()] == ["add"]


def test_chrome_trace(tmp_path):
    a = lucid.ones(4)
    with profiler.profile() as prof:
        with profiler.record_function("block"):
            _ = a.exp()
            _ = a.exp()
            time.sleep(0.005)
    path = tmp_path / "trace.json"
    prof.export_chrome_trace(str(path))
    trace = json.loads(path.read_text())["traceEvents"]
    session, block = trace
    assert block["name"] == "block" and block["ph"] == "X" and block["args"]["ops"] == {"exp": 2}
    assert block["dur"] >= 5000 and session["dur"] >= block["dur"]
    assert block["ts"] >= 0 and block["ts"] + block["dur"] <= session["dur"] + 1


def test_memory_stats_without_a_gpu_is_none():
    if lucid.gpu.is_available():
        pytest.skip("this machine has a GPU: test_gpu_memory_stats covers it")
    with profiler.profile() as prof:
        _ = lucid.ones(4) + 1.0
    assert prof.memory_stats() is None and prof.memory_stats("start") is None


@pytest.mark.skipif(not lucid.gpu.is_available(), reason="needs a GPU")
def test_gpu_ops_and_memory_stats():
    lucid.gpu.synchronize()
    with profiler.profile(activities=["gpu"]) as prof:
        with profiler.record_function("alloc"):
            x = lucid.ones(1024, 1024, device="gpu")  # 4 MiB
            y = x * 2.0
    start, stop = prof.memory_stats("start"), prof.memory_stats("stop")
    assert isinstance(start, profiler.MemoryStats)
    assert stop.current_bytes - start.current_bytes >= 2 * 4 * 1024 * 1024
    assert stop.peak_bytes >= stop.current_bytes and stop.reserved_bytes >= stop.current_bytes
    assert stop.current_bytes == lucid.gpu.memory_allocated()
    events = prof.events()
    assert "mul" in [e.name for e in events] and all(e.device == "gpu" for e in events)
    (r,) = prof.ranges()
    assert r.synchronized
    del x, y
