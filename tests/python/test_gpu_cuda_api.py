"""torch.cuda's module-level API on lucid.cuda (lucid.gpu): device selection, properties,
architectures, memory counters, the per-process memory cap, seeding, streams and NVTX.
The GPU tests compare with torch.cuda on the same GPU; the others check what a machine
without a GPU says."""

import importlib
import threading
import warnings

import pytest
import torch

import lucid

GPU = lucid.cuda.is_available()
needs_gpu = pytest.mark.skipif(not GPU, reason="needs a GPU")
without_gpu = pytest.mark.skipif(GPU, reason="checks a machine without a GPU")
torch_gpu = pytest.mark.skipif(not (GPU and torch.cuda.is_available()), reason="needs a GPU for lucid and torch")

MiB = 1 << 20


def test_the_names_torch_cuda_programs_call_exist():
    for name in ("set_device", "device", "device_of", "is_initialized", "init", "manual_seed", "manual_seed_all",
                 "seed", "seed_all", "initial_seed", "get_rng_state", "set_rng_state", "get_rng_state_all",
                 "set_rng_state_all", "get_device_properties", "get_device_name", "get_device_capability",
                 "is_bf16_supported", "is_tf32_supported", "get_arch_list", "get_gencode_flags", "mem_get_info",
                 "max_memory_reserved", "memory_summary", "set_per_process_memory_fraction",
                 "get_per_process_memory_fraction", "default_stream", "set_stream", "stream", "StreamContext",
                 "is_current_stream_capturing", "nvtx"):
        assert hasattr(torch.cuda, name), name  # (the list is torch's)
        assert hasattr(lucid.cuda, name), f"lucid.cuda lacks {name}"
    # importable as a module, as torch.cuda.nvtx
    assert importlib.import_module("lucid.cuda.nvtx").range is lucid.cuda.nvtx.range


def test_the_memory_fraction_must_be_a_float_in_0_to_1():
    with pytest.raises(TypeError, match="must be `float`"):
        lucid.cuda.set_per_process_memory_fraction(1)
    if GPU:
        with pytest.raises(ValueError, match="Allowed range: 0~1"):
            lucid.cuda.set_per_process_memory_fraction(1.5)


@without_gpu
def test_without_a_gpu():
    assert lucid.cuda.get_arch_list() == []
    assert lucid.cuda.get_gencode_flags() == ""
    assert not lucid.cuda.is_bf16_supported() and not lucid.cuda.is_tf32_supported()
    assert not lucid.cuda.is_initialized()
    with pytest.raises(RuntimeError, match="no GPU"):
        lucid.cuda.init()
    with pytest.raises(RuntimeError, match="does not exist"):
        lucid.cuda.set_device(0)
    with pytest.raises(RuntimeError):
        lucid.cuda.get_device_properties(0)
    with pytest.raises(RuntimeError):
        lucid.cuda.mem_get_info()
    with pytest.raises(RuntimeError):
        lucid.cuda.nvtx.range_push("x")


@torch_gpu
def test_gpu_properties_are_torch_s():
    p, t = lucid.cuda.get_device_properties(0), torch.cuda.get_device_properties(0)
    for field in ("name", "major", "minor", "total_memory", "multi_processor_count", "warp_size",
                  "max_threads_per_multi_processor", "L2_cache_size", "is_integrated", "is_multi_gpu_board"):
        assert getattr(p, field) == getattr(t, field), field
    assert str(p.uuid) == "GPU-" + str(t.uuid)
    assert lucid.cuda.get_device_name() == torch.cuda.get_device_name()
    assert lucid.cuda.get_device_name("cuda:0") == torch.cuda.get_device_name(0)
    assert lucid.cuda.get_device_capability() == torch.cuda.get_device_capability()
    assert lucid.cuda.is_bf16_supported() == torch.cuda.is_bf16_supported()
    assert "name=" in repr(p) and "total_memory=" in repr(p)


@needs_gpu
def test_gpu_arch_list_covers_this_gpu():
    major, minor = lucid.cuda.get_device_capability()
    archs = lucid.cuda.get_arch_list()
    assert archs and all(a.startswith(("sm_", "compute_")) for a in archs)
    # machine code for this GPU, or PTX of an older architecture the driver compiles
    here = major * 10 + minor
    assert any(a == f"sm_{here}" or (a.startswith("compute_") and int(a.split("_")[1]) <= here) for a in archs)
    flags = lucid.cuda.get_gencode_flags().split(" -gencode ")
    assert len(flags) == len(archs) and flags[0].startswith("-gencode compute=compute_")


@torch_gpu
def test_gpu_mem_get_info_and_reserved_peaks():
    free, total = lucid.cuda.mem_get_info()
    assert total == torch.cuda.mem_get_info()[1] and 0 < free <= total
    lucid.cuda.synchronize()
    lucid.cuda.empty_cache()
    lucid.cuda.reset_peak_memory_stats()
    base = lucid.cuda.memory_reserved()
    assert lucid.cuda.max_memory_reserved() == base
    x = lucid.empty(64 * MiB // 4, device="gpu")
    lucid.cuda.synchronize()
    grown = lucid.cuda.memory_reserved()
    assert grown >= base + 64 * MiB and lucid.cuda.max_memory_reserved() >= grown
    del x
    lucid.cuda.empty_cache()
    assert lucid.cuda.memory_reserved() < grown and lucid.cuda.max_memory_reserved() >= grown
    lucid.cuda.reset_peak_memory_stats()
    assert lucid.cuda.max_memory_reserved() == lucid.cuda.memory_reserved()
    with pytest.warns(FutureWarning, match="renamed to lucid.cuda.memory_reserved"):
        assert lucid.cuda.memory_cached() == lucid.cuda.memory_reserved()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        assert lucid.cuda.max_memory_cached() == lucid.cuda.max_memory_reserved()
    summary = lucid.cuda.memory_summary()
    assert "Allocated memory" in summary and "Reserved memory" in summary and "device ID 0" in summary


@needs_gpu
def test_gpu_memory_fraction_caps_the_allocator():
    lucid.cuda.synchronize()
    lucid.cuda.empty_cache()
    total = lucid.cuda.get_device_properties(0).total_memory
    held = lucid.cuda.memory_reserved()
    fraction = (held + 256 * MiB) / total
    try:
        lucid.cuda.set_per_process_memory_fraction(fraction)
        assert lucid.cuda.get_per_process_memory_fraction() == pytest.approx(fraction)
        small = lucid.ones(32 * MiB // 4, device="gpu")  # within the cap
        assert small.sum().item() == 32 * MiB // 4
        with pytest.raises(lucid.cuda.OutOfMemoryError, match="set_per_process_memory_fraction"):
            big = lucid.ones(1024 * MiB // 4, device="gpu")
            big.sum().item()
        assert "Process limit" in lucid.cuda.memory_summary()
    finally:
        lucid.cuda.set_per_process_memory_fraction(1.0)
    # the cap is gone and the device works
    big = lucid.ones(1024 * MiB // 4, device="gpu")
    assert big.sum().item() == 1024 * MiB // 4
    assert lucid.cuda.get_per_process_memory_fraction() == 1.0


@needs_gpu
def test_gpu_current_device_and_its_context_managers():
    assert lucid.cuda.current_device() == 0 and lucid.cuda.is_initialized()
    lucid.cuda.init()
    lucid.cuda.set_device(0)
    lucid.cuda.set_device("cuda:0")
    lucid.cuda.set_device(lucid.device("gpu", 0))
    with pytest.raises(RuntimeError, match="does not exist"):
        lucid.cuda.set_device(lucid.cuda.device_count())
    with pytest.raises(ValueError, match="Expected a gpu device"):
        lucid.cuda.set_device("cpu")
    with lucid.cuda.device(0):
        assert lucid.cuda.current_device() == 0
        assert lucid.zeros(2, device="cuda").device == lucid.device("gpu:0")
    t = lucid.zeros(2, device="gpu")
    with lucid.cuda.device_of(t):
        assert lucid.cuda.current_device() == 0
    with lucid.cuda.device_of(lucid.zeros(2)):  # a CPU tensor changes nothing
        assert lucid.cuda.current_device() == 0
    # the current device is per thread; a new thread starts on gpu:0
    seen = []
    th = threading.Thread(target=lambda: seen.append(lucid.cuda.current_device()))
    th.start()
    th.join()
    assert seen == [0]


@needs_gpu
def test_gpu_seeding_repeats_gpu_draws():
    lucid.cuda.manual_seed(1234)
    a = lucid.randn(1000, device="gpu")
    lucid.cuda.manual_seed_all(1234)
    b = lucid.randn(1000, device="gpu")
    assert lucid.equal(a, b)
    assert lucid.cuda.initial_seed() == 1234
    state = lucid.cuda.get_rng_state()
    c = lucid.rand(100, device="gpu")
    lucid.cuda.set_rng_state(state)
    assert lucid.equal(c, lucid.rand(100, device="gpu"))
    states = lucid.cuda.get_rng_state_all()
    assert len(states) == lucid.cuda.device_count()
    d = lucid.rand(100, device="gpu")
    lucid.cuda.set_rng_state_all(states)
    assert lucid.equal(d, lucid.rand(100, device="gpu"))


@needs_gpu
def test_gpu_streams_keep_results_in_order():
    s = lucid.cuda.Stream(priority=-1)
    x = lucid.arange(1 << 20, dtype=lucid.float32, device="gpu")
    with lucid.cuda.stream(s) as entered:
        assert entered is s
        y = x * 2
    lucid.cuda.current_stream().wait_stream(s)
    assert y[-1].item() == 2 * ((1 << 20) - 1)
    lucid.cuda.synchronize()
    assert s.query() and lucid.cuda.default_stream() == lucid.cuda.current_stream()
    lucid.cuda.set_stream(lucid.cuda.default_stream())
    assert lucid.cuda.is_current_stream_capturing() is False
    with lucid.cuda.stream(None):
        pass
    with pytest.raises(TypeError, match="Stream"):
        lucid.cuda.stream(3)
    with pytest.raises(TypeError, match="Stream"):
        lucid.cuda.set_stream("default")


@needs_gpu
def test_gpu_nvtx_ranges_and_marks():
    depth = lucid.cuda.nvtx.range_push("outer")
    assert isinstance(depth, int)
    lucid.cuda.nvtx.mark("an instant")
    with lucid.cuda.nvtx.range("step {}", 3):
        lucid.ones(4, device="gpu").sum().item()
    assert isinstance(lucid.cuda.nvtx.range_pop(), int)
    rid = lucid.cuda.nvtx.range_start("not nested")
    lucid.cuda.nvtx.range_end(rid)
