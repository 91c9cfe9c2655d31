#include "backend/cuda/pinned_memory.h"

#include <utility>

#include <cuda_runtime_api.h>

#include "backend/cuda/check.h"
#include "backend/cuda/device_guard.h"
#include "backend/cuda/stream.h"

namespace lucid::cuda {

namespace {

// Frees a shared block when its last tensor dies. Unlike device blocks (which are
// only recycled in stream order), pinned memory goes back to the OS, and a kernel
// still queued on the device's stream might read or write it: drain the stream
// first. Never throws; CUDA errors are ignored because at interpreter shutdown the
// runtime may already be unloaded (then the process is exiting anyway).
struct PinnedDeleter {
  int device;
  void operator()(std::byte* p) const noexcept {
    if (cudaStream_t s = stream_if_created(device)) {
      if (cudaStreamSynchronize(s) != cudaSuccess) (void)cudaGetLastError();
    }
    if (cudaFreeHost(p) != cudaSuccess) (void)cudaGetLastError();
  }
};

}  // namespace

SharedStorage allocate_pinned_mapped(size_t nbytes, int device) {
  check_device(device);
  // The mapping is made in the device's context; Portable makes the pinning valid
  // for every context, so a later copy issued from another device works too.
  DeviceGuard guard(device);
  void* host = nullptr;
  // cudaHostAlloc(0) may return a null pointer; allocate a byte so that the storage
  // always owns a real buffer (as CPU and GPU storages do).
  const size_t size = nbytes > 0 ? nbytes : 1;
  const cudaError_t err =
      cudaHostAlloc(&host, size, cudaHostAllocMapped | cudaHostAllocPortable);
  if (err == cudaErrorMemoryAllocation) {
    (void)cudaGetLastError();
    fail<RuntimeError>("out of pinned host memory: tried to allocate ", nbytes,
                       " bytes of shared (host-mapped) memory for gpu:", device);
  }
  if (err != cudaSuccess) throw_cuda_error(err, "cudaHostAlloc", __FILE__, __LINE__);
  // From here on the DataPtr owns the buffer: any throw below frees it (and if the
  // shared_ptr constructor itself fails it calls the deleter).
  DataPtr data(static_cast<std::byte*>(host), PinnedDeleter{device});

  void* dev = nullptr;
  LUCID_CUDA_CHECK(cudaHostGetDevicePointer(&dev, host, 0));
  SharedStorage storage;
  storage.data = std::move(data);
  storage.nbytes = nbytes;
  storage.device_ptr = static_cast<std::byte*>(dev);
  storage.device = device;
  return storage;
}

}  // namespace lucid::cuda
