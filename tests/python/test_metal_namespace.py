"""lucid.metal, upstream Lucid's GPU namespace, on lucid's GPU; Tensor.metal / is_metal
and Module.metal."""

import pytest

import lucid

GPU = lucid.cuda.is_available()
needs_gpu = pytest.mark.skipif(not GPU, reason="needs a GPU")


def test_upstream_names_exist():
    for name in ("is_available", "synchronize", "empty_cache", "manual_seed", "memory_allocated",
                 "max_memory_allocated", "reset_peak_memory_stats", "get_cache_memory", "get_device_name",
                 "MetalStream", "MetalEvent", "shared_tensor", "to_shared", "is_shared"):
        assert hasattr(lucid.metal, name), name
    assert lucid.metal.is_available() == GPU


def test_cpu_tensors_are_not_metal_or_shared():
    t = lucid.ones(3, device="cpu")
    assert t.is_metal is False and lucid.metal.is_shared(t) is False


@pytest.mark.skipif(GPU, reason="checks a machine without a GPU")
def test_without_a_gpu_metal_moves_raise():
    with pytest.raises(RuntimeError):
        lucid.ones(2).metal()
    with pytest.raises(RuntimeError):
        lucid.metal.shared_tensor((2,))


@needs_gpu
def test_gpu_metal_moves_and_memory():
    t = lucid.arange(4, dtype=lucid.float32).metal()
    assert t.is_metal and t.device == lucid.device("gpu")
    m = lucid.nn.Linear(2, 3).metal()
    assert all(p.is_metal for p in m.parameters())
    lucid.metal.synchronize()
    lucid.metal.reset_peak_memory_stats()
    assert lucid.metal.max_memory_allocated() >= lucid.metal.memory_allocated() > 0
    assert lucid.metal.get_cache_memory() >= 0
    assert lucid.metal.get_device_name() == lucid.cuda.get_device_name()
    lucid.metal.manual_seed(7)
    a = lucid.rand(3, device="metal")
    lucid.metal.manual_seed(7)
    assert lucid.equal(a, lucid.rand(3, device="metal"))


@needs_gpu
def test_gpu_shared_memory_moves_without_a_copy():
    s = lucid.metal.shared_tensor((2, 3), requires_grad=True)
    assert lucid.metal.is_shared(s) and s.device.type == "cpu" and s.requires_grad
    assert s.tolist() == [[0.0] * 3] * 2
    g = s.detach().to("metal")
    assert lucid.metal.is_shared(g) and g.data_ptr() == s.data_ptr()
    x = lucid.randn(5, device="cpu")
    xs = lucid.metal.to_shared(x)
    assert lucid.metal.is_shared(xs) and lucid.equal(xs, x) and lucid.metal.to_shared(xs) is xs
    xg = lucid.metal.to_shared(x.metal())
    assert lucid.metal.is_shared(xg) and xg.is_metal and lucid.equal(xg.cpu(), x)


@needs_gpu
def test_gpu_stream_and_event():
    start, end = lucid.metal.MetalEvent(enable_timing=True), lucid.metal.MetalEvent(enable_timing=True)
    with lucid.metal.MetalStream():
        start.record()
        y = (lucid.ones(1 << 20, device="metal") * 2).sum()
        end.record()
    end.synchronize()
    assert y.item() == 2 * (1 << 20) and start.elapsed_time(end) >= 0.0
