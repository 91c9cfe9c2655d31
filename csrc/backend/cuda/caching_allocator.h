// Caching allocator for device memory, one pool per GPU.
//
// cudaMalloc and cudaFree are slow (cudaFree synchronises the device), and a
// training loop allocates and frees the same sizes every step. So freed blocks are
// not returned to the driver but kept in a per-device free list and handed out again.
//
// - Sizes are rounded: to 512 bytes up to 1 MiB ("small"), to 2 MiB above ("large"),
//   so that slightly different requests share blocks.
// - Reuse is best-fit: the smallest cached block that is at least the rounded size,
//   accepted only when it wastes at most a quarter of the request (blocks are never
//   split, so a big block must not be pinned down by a small tensor).
// - Stream safety: a block is returned to the cache as soon as its last tensor dies,
//   possibly while kernels using it are still queued. This is safe because all of
//   lucid's work on a device is queued on that device's single stream (stream.h):
//   whatever the next owner queues runs after the old owner's work has finished.
//   Only handing memory back to the driver needs a stream synchronisation.
// - Out of memory: the device's cache is released and cudaMalloc retried once; then
//   a RuntimeError "GPU out of memory: ..." is thrown and the allocator stays usable.
// - Statistics per device: allocated (bytes of live blocks, rounded sizes) and reserved
//   (bytes held from the driver, cached ones included), each with a resettable peak.
// - A cap per device (set_limit, torch.cuda.set_per_process_memory_fraction): a block
//   that would take reserved past it is out of memory, after the cache is released.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <vector>

#include "core/gpu_runtime.h"
#include "core/storage.h"

namespace lucid::cuda {

class CachingAllocator {
 public:
  // The process-wide allocator. Leaked on purpose: tensors owned by Python objects
  // can be destroyed during interpreter shutdown, after C++ static destructors have
  // run; their deleters must still find a live allocator (mutex and free lists).
  static CachingAllocator& instance();

  GpuStorage allocate(size_t nbytes, int device);
  MemoryStats stats(int device);
  void reset_peak(int device);
  void set_limit(size_t bytes, int device);  // SIZE_MAX: none
  // Returns every cached (free) block of every device to the driver.
  void empty_cache();

  // The block size a request of nbytes occupies (exposed for tests).
  static size_t round_size(size_t nbytes);

  // Blocks this thread has asked for since it started: a call that allocates while it
  // is captured into a graph kept for later (Note [Fixed replays]) uses a block that
  // returns to the cache when the call ends, which a later replay would write into.
  static size_t allocations_on_this_thread();

 private:
  struct DeviceState {
    std::multimap<size_t, std::byte*> cached;  // free blocks by size, for best fit
    size_t allocated = 0;
    size_t max_allocated = 0;
    size_t reserved = 0;
    size_t max_reserved = 0;
    size_t limit = SIZE_MAX;
  };
  struct BlockDeleter;

  CachingAllocator() = default;

  DeviceState& state_locked(int device);
  std::byte* take_cached_locked(DeviceState& st, size_t size, size_t* block_size);
  std::byte* malloc_locked(int device, size_t size, size_t requested);
  void release_cached_locked(int device);
  void free_block(std::byte* p, int device, size_t size) noexcept;

  std::mutex mu_;                     // guards everything below
  std::vector<DeviceState> devices_;  // sized to device_count() on first use
};

}  // namespace lucid::cuda
