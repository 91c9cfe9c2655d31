// lucid.gpu (alias lucid.cuda): device queries and allocator statistics.
#include <nanobind/stl/string.h>

#include "bindings/common.h"
#include "core/gpu_runtime.h"
#include "core/pending.h"
#ifdef LUCID_WITH_CUDA
#include "backend/cuda/fused_codegen.h"
#include "backend/cuda/generated_kernels.h"
#endif

namespace lucid::bindings {

void init_gpu(nb::module_& m) {
  m.def("gpu_device_count", [] {
    GpuRuntime* rt = gpu_runtime_or_null();
    return rt ? rt->device_count() : 0;
  });
  m.def("gpu_synchronize", [](int device) {
    nb::gil_scoped_release release;
    gpu_runtime(device).synchronize(device);
  });
  m.def("gpu_stream_handle", [](int device) { return gpu_runtime(device).stream_handle(device); });
  m.def("gpu_memory_stats", [](int device) {
    MemoryStats s = gpu_runtime(device).memory_stats(device);
    nb::dict d;
    d["allocated"] = s.allocated;
    d["max_allocated"] = s.max_allocated;
    d["reserved"] = s.reserved;
    return d;
  });
  // Note [Lazy GPU execution] (core/pending.h).
  m.def("gpu_lazy", [] { return pending::lazy_enabled(); });
  m.def("gpu_set_lazy", [](bool enabled) {
    nb::gil_scoped_release release;
    pending::set_lazy(enabled);
  });
  m.def("gpu_flush", [](int device) {  // runs the recorded work; no wait (-1: every device)
    nb::gil_scoped_release release;
    if (device < 0) pending::flush_all();
    else pending::flush(device);
  });
  m.def("gpu_pending_stats", [](int device) {
    pending::Stats s = pending::stats(device);
    nb::dict d;
    d["ops"] = s.ops;
    d["bytes"] = s.bytes;
    d["flushes"] = s.flushes;
    d["graph_runs"] = s.graph_runs;
    d["graph_abandoned"] = s.graph_abandoned;
    d["fused_calls"] = s.fused_calls;
    return d;
  });
  // Note [Flush graphs] (backend/cuda/flush_graphs.h).
  m.def("gpu_graph_replay", [] { return pending::graphs_enabled(); });
  m.def("gpu_set_graph_replay", [](bool enabled) { pending::set_graphs_enabled(enabled); });
  // Note [Elementwise fusion] (ops/fusion.h).
  m.def("gpu_fusion", [] { return pending::fusion_enabled(); });
  m.def("gpu_set_fusion", [](bool enabled) { pending::set_fusion_enabled(enabled); });
  // Note [Generated kernels] (backend/cuda/generated_kernels.h); a build without CUDA
  // has none to compile.
  m.def("gpu_kernel_compile", [] {
#ifdef LUCID_WITH_CUDA
    switch (cuda::compile_mode()) {
      case cuda::CompileMode::Background: return "background";
      case cuda::CompileMode::Sync: return "sync";
      case cuda::CompileMode::Off: break;
    }
#endif
    return "off";
  });
  m.def("gpu_set_kernel_compile", [](const std::string& mode) {
    LUCID_CHECK(mode == "background" || mode == "sync" || mode == "off", ValueError,
                "set_kernel_compile: mode must be 'background', 'sync' or 'off', got '", mode, "'");
#ifdef LUCID_WITH_CUDA
    cuda::set_compile_mode(mode == "background" ? cuda::CompileMode::Background
                           : mode == "sync"     ? cuda::CompileMode::Sync
                                                : cuda::CompileMode::Off);
#endif
  });
  m.def("gpu_generated_kernel_stats", [] {
    nb::dict d;
#ifdef LUCID_WITH_CUDA
    const cuda::GeneratedStats s = cuda::generated_stats();
    d["compiled"] = s.compiled;
    d["loaded"] = s.loaded;
    d["failed"] = s.failed;
    d["compiling"] = s.compiling;
    d["last_error"] = s.last_error;
    d["fused_launches"] = cuda::generated_fused_launches();
#else
    for (const char* k : {"compiled", "loaded", "failed", "compiling", "fused_launches"}) d[k] = 0;
    d["last_error"] = "";
#endif
    return d;
  });
  // lucid.gpu.Event's handle operations (python/lucid/gpu.py).
  m.def("gpu_event_create", [](int device, bool timing) { return gpu_runtime(device).event_create(device, timing); });
  m.def("gpu_event_destroy", [](uintptr_t e, int device) {
    if (GpuRuntime* rt = gpu_runtime_or_null()) rt->event_destroy(e, device);
  });
  m.def("gpu_event_record", [](uintptr_t e, int device) { gpu_runtime(device).event_record(e, device); });
  m.def("gpu_event_wait", [](uintptr_t e, int device) { gpu_runtime(device).event_wait(e, device); });
  m.def("gpu_event_query", [](uintptr_t e, int device) { return gpu_runtime(device).event_query(e, device); });
  m.def("gpu_event_synchronize", [](uintptr_t e, int device) {
    nb::gil_scoped_release release;
    gpu_runtime(device).event_synchronize(e, device);
  });
  m.def("gpu_event_elapsed_ms", [](uintptr_t start, uintptr_t end, int device) {
    return gpu_runtime(device).event_elapsed_ms(start, end, device);
  });
  m.def("gpu_reset_peak_memory_stats", [](int device) { gpu_runtime(device).reset_peak_memory_stats(device); });
  m.def("gpu_empty_cache", [] {
    if (GpuRuntime* rt = gpu_runtime_or_null()) rt->empty_cache();
  });
}

}  // namespace lucid::bindings
