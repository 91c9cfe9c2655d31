#include "backend/cuda/stream.h"

#include <atomic>
#include <mutex>

#include "backend/cuda/check.h"
#include "backend/cuda/device_error.h"
#include "backend/cuda/device_guard.h"
#include "backend/cuda/flush_graphs.h"

namespace lucid::cuda {

namespace {

// Zero-initialised at load time (constant initialisation) and trivially destructible,
// so the table is valid before any constructor runs and after every destructor ran:
// deleters executing during interpreter shutdown can still read it. The streams
// themselves are never destroyed: destroying them at exit would race the CUDA
// runtime's own teardown, and the driver reclaims them with the process anyway.
std::atomic<cudaStream_t> g_streams[kMaxDevices];

std::mutex& creation_mutex() {
  static std::mutex* mu = new std::mutex();  // leaked: see g_streams
  return *mu;
}

}  // namespace

cudaStream_t stream(int device) {
  check_device(device);
  LUCID_CHECK(device < kMaxDevices, RuntimeError, "lucid supports at most ", kMaxDevices,
              " GPUs; got index ", device);
  // Fast path: one acquire load per launch once the stream exists.
  if (cudaStream_t s = g_streams[device].load(std::memory_order_acquire)) return s;
  std::lock_guard<std::mutex> lock(creation_mutex());
  if (cudaStream_t s = g_streams[device].load(std::memory_order_acquire)) return s;
  DeviceGuard guard(device);  // a stream belongs to the device current at creation
  cudaStream_t s = nullptr;
  LUCID_CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  g_streams[device].store(s, std::memory_order_release);
  return s;
}

cudaStream_t stream_if_created(int device) noexcept {
  if (device < 0 || device >= kMaxDevices) return nullptr;
  return g_streams[device].load(std::memory_order_acquire);
}

void sync_stream(int device) {
  check_device(device);
  refuse_in_capture("a wait for the device");
  if (cudaStream_t s = stream_if_created(device)) LUCID_CUDA_CHECK(cudaStreamSynchronize(s));
  raise_device_error(device);  // Note [Errors found on the device]
}

}  // namespace lucid::cuda
