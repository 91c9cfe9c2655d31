// lucid.gpu (alias lucid.cuda): device queries and allocator statistics.
#include "bindings/common.h"
#include "core/gpu_runtime.h"

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
  m.def("gpu_reset_peak_memory_stats", [](int device) { gpu_runtime(device).reset_peak_memory_stats(device); });
  m.def("gpu_empty_cache", [] {
    if (GpuRuntime* rt = gpu_runtime_or_null()) rt->empty_cache();
  });
}

}  // namespace lucid::bindings
