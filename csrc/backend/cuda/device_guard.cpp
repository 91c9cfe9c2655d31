#include "backend/cuda/device_guard.h"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <atomic>

#include <pthread.h>

#include "backend/cuda/check.h"

namespace lucid::cuda {

namespace {
std::atomic<bool> g_forked{false};
// Registered when the library loads: any fork after that is a child whose CUDA calls
// fail if the parent had made a context (check.h names the cause).
[[maybe_unused]] const bool g_fork_handler = (pthread_atfork(nullptr, nullptr, [] { g_forked.store(true); }), true);
}  // namespace

bool forked_after_load() noexcept { return g_forked.load(); }

int device_count() noexcept {
  // A function-local static is initialised once, thread-safely. cudaGetDeviceCount
  // starts the driver but creates no context, so calling it is cheap and harmless.
  static const int count = [] {
    int n = 0;
    const cudaError_t err = cudaGetDeviceCount(&n);
    if (err != cudaSuccess) {
      // No driver (cudaErrorInsufficientDriver) or no device (cudaErrorNoDevice):
      // clear the error so it does not resurface from the next CUDA call.
      (void)cudaGetLastError();
      return 0;
    }
    return n;
  }();
  return count;
}

void check_device(int device) {
  const int n = device_count();
  LUCID_CHECK(n > 0, RuntimeError, "no GPU is available: CUDA found no device");
  LUCID_CHECK(device >= 0 && device < n, RuntimeError, "invalid GPU index ", device, ": ", n,
              " GPU", n == 1 ? " is" : "s are", " available (valid indices 0..", n - 1, ")");
}

namespace {

constexpr int kMaxCachedDevices = 64;

// `attribute` of `device`, cached as value + 1 (0: not asked yet; attributes of a device
// never change).
int cached_attribute(cudaDeviceAttr attribute, std::atomic<int> (&cache)[kMaxCachedDevices], int device) {
  if (device >= 0 && device < kMaxCachedDevices)
    if (const int v = cache[device].load(std::memory_order_relaxed)) return v - 1;
  int v = 0;
  LUCID_CUDA_CHECK(cudaDeviceGetAttribute(&v, attribute, device));
  if (device >= 0 && device < kMaxCachedDevices) cache[device].store(v + 1, std::memory_order_relaxed);
  return v;
}

}  // namespace

int multiprocessor_count(int device) {
  static std::atomic<int> cache[kMaxCachedDevices] = {};
  return std::max(cached_attribute(cudaDevAttrMultiProcessorCount, cache, device), 1);
}

int compute_capability(int device) {
  static std::atomic<int> major[kMaxCachedDevices] = {}, minor[kMaxCachedDevices] = {};
  return cached_attribute(cudaDevAttrComputeCapabilityMajor, major, device) * 10 +
         cached_attribute(cudaDevAttrComputeCapabilityMinor, minor, device);
}

DeviceGuard::DeviceGuard(int device) {
  LUCID_CUDA_CHECK(cudaGetDevice(&previous_));
  if (previous_ != device) {
    LUCID_CUDA_CHECK(cudaSetDevice(device));
    switched_ = true;
  }
}

DeviceGuard::~DeviceGuard() {
  // A destructor must not throw. Restoring can only fail if the context is already
  // broken, in which case the next checked call reports the real error; clear this
  // one so it is not misattributed to that call.
  if (switched_ && cudaSetDevice(previous_) != cudaSuccess) (void)cudaGetLastError();
}

}  // namespace lucid::cuda
