#include "core/gpu_runtime.h"

#include "core/error.h"

namespace lucid {

namespace {
GpuRuntime* g_runtime = nullptr;
}

void register_gpu_runtime(GpuRuntime* runtime) { g_runtime = runtime; }
GpuRuntime* gpu_runtime_or_null() { return g_runtime; }

GpuRuntime& gpu_runtime(int device) {
  LUCID_CHECK(g_runtime, RuntimeError,
              "lucid was built without CUDA support: no GPU device is available "
              "(expected a build on a machine with nvcc)");
  int n = g_runtime->device_count();
  LUCID_CHECK(n > 0, RuntimeError, "no GPU is available: CUDA found no device");
  LUCID_CHECK(device >= 0 && device < n, RuntimeError, "invalid GPU index ", device, ": ", n,
              " GPU", n == 1 ? " is" : "s are", " available (valid indices 0..", n - 1, ")");
  return *g_runtime;
}

}  // namespace lucid
