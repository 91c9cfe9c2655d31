"""lucid.gpu.Event, Stream and memory_stats, as torch.cuda's: timing work on the device,
ordering, the allocator's counters. The argument checks run everywhere; the rest needs
a GPU."""

import pytest

import lucid

gpu_only = pytest.mark.skipif(not lucid.gpu.is_available(), reason="lucid has no GPU here")


def test_event_argument_checks_without_a_device():
    start, end = lucid.gpu.Event(), lucid.gpu.Event(enable_timing=True)
    assert start.query()  # nothing recorded: nothing to wait for
    start.synchronize()
    with pytest.raises(RuntimeError, match="enable_timing=True"):
        start.elapsed_time(end)
    with pytest.raises(RuntimeError, match="must be recorded"):
        lucid.gpu.Event(enable_timing=True).elapsed_time(end)
    with pytest.raises(NotImplementedError):
        lucid.gpu.Event(interprocess=True)


@gpu_only
def test_events_time_the_work_between_them():
    a = lucid.randn(2048, 2048, device="gpu")
    start, end = lucid.gpu.Event(enable_timing=True), lucid.gpu.Event(enable_timing=True)
    start.record()
    for _ in range(20):
        a = a @ a / 2048
    end.record()
    end.synchronize()
    assert end.query() and start.query()
    ms = start.elapsed_time(end)
    assert isinstance(ms, float) and ms > 0
    assert 0 <= end.elapsed_time(end) < 1e-3 + ms


@gpu_only
def test_event_on_the_current_stream_and_wait():
    s = lucid.gpu.current_stream()
    assert s == lucid.gpu.Stream(0) and isinstance(s.cuda_stream, int)
    x = lucid.ones(1 << 20, device="gpu")
    e = s.record_event()
    e.wait()  # the stream waits for itself: a no-op, but a legal one
    s.wait_event(e)
    y = (x * 2).sum()
    e2 = lucid.gpu.Event()
    e2.record(s)
    e2.synchronize()
    assert y.item() == 2 * (1 << 20)
    s.synchronize()


@gpu_only
def test_memory_stats_names_match_the_counters():
    lucid.gpu.synchronize()
    x = lucid.empty(1 << 22, device="gpu")
    stats = lucid.gpu.memory_stats()
    assert stats["allocated_bytes.all.current"] == lucid.gpu.memory_allocated() >= x.numel() * 4
    assert stats["allocated_bytes.all.peak"] == lucid.gpu.max_memory_allocated()
    assert stats["reserved_bytes.all.current"] == lucid.gpu.memory_reserved()
    del x
    lucid.gpu.reset_max_memory_allocated()
    assert lucid.gpu.max_memory_allocated() == lucid.gpu.memory_allocated()
