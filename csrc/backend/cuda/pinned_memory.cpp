#include "backend/cuda/pinned_memory.h"

#include <map>
#include <mutex>
#include <utility>

#include <cuda_runtime_api.h>

#include "backend/cuda/caching_allocator.h"
#include "backend/cuda/check.h"
#include "backend/cuda/device_guard.h"
#include "backend/cuda/stream.h"

namespace lucid::cuda {

namespace {

// Note [Cached pinned blocks]
// A DataLoader with pin_memory=True pins every batch, so pinned blocks come and go
// each step. cudaHostAlloc/cudaFreeHost cost milliseconds, and freeing needs the
// device's stream drained first (a queued copy may still read the block): a host wait
// per batch, which is what pinning is meant to avoid. So a block whose last tensor
// dies is not freed: an event is recorded on its device's stream (after every use
// already queued), and the block waits in a free list until that event has passed.
// Reuse never waits: a block is handed out only when its event has completed; else a
// new one is pinned. Sizes round as the device allocator's; a block is reused for a
// request of at least three quarters of its size, on the same device.
struct FreeBlock {
  std::byte* host;
  int device;
  cudaEvent_t last_use;  // null: no GPU work was ever queued on the device
};

class PinnedCache {
 public:
  // Leaked, as CachingAllocator: tensors may die during interpreter shutdown.
  static PinnedCache& instance() {
    static PinnedCache* cache = new PinnedCache();
    return *cache;
  }

  // A cached block of at least `size` bytes for `device` whose last use has finished.
  std::byte* take(size_t size, int device) {
    std::lock_guard<std::mutex> lock(mu_);
    for (auto it = free_.lower_bound(size); it != free_.end() && it->first <= size + size / 3; ++it) {
      FreeBlock& b = it->second;
      if (b.device != device || !passed(b.last_use)) continue;
      std::byte* host = b.host;
      if (b.last_use) cudaEventDestroy(b.last_use);
      free_.erase(it);
      return host;
    }
    return nullptr;
  }

  void give_back(std::byte* host, size_t size, int device) noexcept {
    cudaEvent_t last_use = nullptr;
    if (cudaStream_t s = stream_if_created(device)) {
      // The event must belong to the stream's device. (Not DeviceGuard: it throws, and
      // this runs in a deleter, possibly at interpreter shutdown.)
      int previous = -1;
      if (cudaGetDevice(&previous) != cudaSuccess) previous = -1;
      if (previous != device) (void)cudaSetDevice(device);
      if (cudaEventCreateWithFlags(&last_use, cudaEventDisableTiming) != cudaSuccess ||
          cudaEventRecord(last_use, s) != cudaSuccess) {
        // No event (the runtime is shutting down, or broken): fall back to waiting.
        (void)cudaGetLastError();
        if (last_use) cudaEventDestroy(last_use);
        last_use = nullptr;
        if (cudaStreamSynchronize(s) != cudaSuccess) (void)cudaGetLastError();
      }
      if (previous >= 0 && previous != device) (void)cudaSetDevice(previous);
    }
    std::lock_guard<std::mutex> lock(mu_);
    free_.emplace(size, FreeBlock{host, device, last_use});
  }

  // Frees every cached block (waiting for the last use of those still in flight).
  void release() {
    std::lock_guard<std::mutex> lock(mu_);
    for (auto& [size, b] : free_) {
      if (b.last_use) {
        if (cudaEventSynchronize(b.last_use) != cudaSuccess) (void)cudaGetLastError();
        cudaEventDestroy(b.last_use);
      }
      if (cudaFreeHost(b.host) != cudaSuccess) (void)cudaGetLastError();
    }
    free_.clear();
  }

 private:
  static bool passed(cudaEvent_t e) {
    if (!e) return true;
    const cudaError_t status = cudaEventQuery(e);
    if (status == cudaSuccess) return true;
    (void)cudaGetLastError();  // cudaErrorNotReady is not an error; anything else: keep the block
    return false;
  }

  std::mutex mu_;
  std::multimap<size_t, FreeBlock> free_;  // by size, for best fit
};

// Returns the block to the cache when its last tensor dies. Never throws.
struct PinnedDeleter {
  size_t size;
  int device;
  void operator()(std::byte* p) const noexcept { PinnedCache::instance().give_back(p, size, device); }
};

}  // namespace

SharedStorage allocate_pinned_mapped(size_t nbytes, int device) {
  check_device(device);
  // The mapping is made in the device's context; Portable makes the pinning valid
  // for every context, so a later copy issued from another device works too.
  DeviceGuard guard(device);
  // Rounded as device blocks are, so that the batches of a loader share blocks; never
  // zero bytes (cudaHostAlloc(0) may return a null pointer), so the storage always
  // owns a real buffer, as CPU and GPU storages do.
  const size_t size = CachingAllocator::round_size(nbytes);
  std::byte* host = PinnedCache::instance().take(size, device);
  if (!host) {
    void* fresh = nullptr;
    cudaError_t err = cudaHostAlloc(&fresh, size, cudaHostAllocMapped | cudaHostAllocPortable);
    if (err == cudaErrorMemoryAllocation) {  // the cache may be holding what we need
      (void)cudaGetLastError();
      PinnedCache::instance().release();
      err = cudaHostAlloc(&fresh, size, cudaHostAllocMapped | cudaHostAllocPortable);
    }
    if (err == cudaErrorMemoryAllocation) {
      (void)cudaGetLastError();
      fail<RuntimeError>("out of pinned host memory: tried to allocate ", nbytes,
                         " bytes of shared (host-mapped) memory for gpu:", device);
    }
    if (err != cudaSuccess) throw_cuda_error(err, "cudaHostAlloc", __FILE__, __LINE__);
    host = static_cast<std::byte*>(fresh);
  }
  // From here on the DataPtr owns the block: any throw below returns it to the cache
  // (and if the shared_ptr constructor itself fails it calls the deleter).
  DataPtr data(host, PinnedDeleter{size, device});

  void* dev = nullptr;
  LUCID_CUDA_CHECK(cudaHostGetDevicePointer(&dev, host, 0));
  SharedStorage storage;
  storage.data = std::move(data);
  storage.nbytes = nbytes;
  storage.device_ptr = static_cast<std::byte*>(dev);
  storage.device = device;
  return storage;
}

void release_cached_pinned_memory() { PinnedCache::instance().release(); }

}  // namespace lucid::cuda
