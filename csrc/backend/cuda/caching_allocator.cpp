#include "backend/cuda/caching_allocator.h"

#include <algorithm>
#include <cstdint>

#include <cuda_runtime_api.h>

#include "backend/cuda/check.h"
#include "backend/cuda/device_guard.h"
#include "backend/cuda/flush_graphs.h"
#include "backend/cuda/stream.h"

namespace lucid::cuda {

namespace {

constexpr size_t kSmallRound = 512;              // granularity of small blocks
constexpr size_t kSmallMax = size_t(1) << 20;    // requests up to 1 MiB are small
constexpr size_t kLargeRound = size_t(2) << 20;  // granularity of large blocks
// Largest request whose rounding cannot overflow size_t.
constexpr size_t kMaxRequest = SIZE_MAX - kLargeRound;

size_t round_up(size_t n, size_t m) { return (n + m - 1) / m * m; }

}  // namespace

// Returns a block to the cache when the last DataPtr owning it dies.
struct CachingAllocator::BlockDeleter {
  int device;
  size_t size;  // the block's (rounded) size, as counted in the statistics
  void operator()(std::byte* p) const noexcept { instance().free_block(p, device, size); }
};

CachingAllocator& CachingAllocator::instance() {
  // Never deleted: see the header. Construction touches no CUDA API, so creating
  // the allocator does not create a context.
  static CachingAllocator* allocator = new CachingAllocator();
  return *allocator;
}

size_t CachingAllocator::round_size(size_t nbytes) {
  // An empty tensor still gets a real (minimum) block, as CPU storage does, so a
  // storage's data pointer is never null and every DataPtr owns a block.
  if (nbytes == 0) return kSmallRound;
  if (nbytes <= kSmallMax) return round_up(nbytes, kSmallRound);
  return round_up(nbytes, kLargeRound);
}

CachingAllocator::DeviceState& CachingAllocator::state_locked(int device) {
  if (devices_.empty()) devices_.resize(static_cast<size_t>(device_count()));
  return devices_[static_cast<size_t>(device)];
}

std::byte* CachingAllocator::take_cached_locked(DeviceState& st, size_t size,
                                                size_t* block_size) {
  auto it = st.cached.lower_bound(size);  // smallest block >= size
  if (it == st.cached.end() || it->first > size + size / 4) return nullptr;
  std::byte* p = it->second;
  *block_size = it->first;
  st.cached.erase(it);
  return p;
}

std::byte* CachingAllocator::malloc_locked(int device, size_t size, size_t requested) {
  DeviceGuard guard(device);
  {
    DeviceState& st = devices_[static_cast<size_t>(device)];
    if (st.reserved + size > st.limit) release_cached_locked(device);
    if (st.reserved + size > st.limit)
      fail<OutOfMemoryError>("GPU out of memory: tried to allocate ", requested, " bytes on gpu:", device, " (",
                             st.allocated, " bytes allocated by lucid, ", st.reserved, " bytes reserved, and this "
                             "process is limited to ", st.limit, " bytes by set_per_process_memory_fraction)");
  }
  void* p = nullptr;
  cudaError_t err = cudaMalloc(&p, size);
  if (err == cudaErrorMemoryAllocation) {
    // Out-of-memory is not sticky: clear it, give the cached blocks back to the
    // driver (they may be enough, or fragmented into the wrong sizes) and retry once.
    (void)cudaGetLastError();
    release_cached_locked(device);
    err = cudaMalloc(&p, size);
  }
  if (err == cudaErrorMemoryAllocation) {
    (void)cudaGetLastError();
    const DeviceState& st = devices_[static_cast<size_t>(device)];
    size_t free = 0, total = 0;
    if (cudaMemGetInfo(&free, &total) != cudaSuccess) (void)cudaGetLastError();
    fail<OutOfMemoryError>("GPU out of memory: tried to allocate ", requested, " bytes on gpu:", device, " (",
                           st.allocated, " bytes allocated by lucid, ", st.reserved, " bytes reserved, ", free,
                           " of ", total, " bytes free on the device)");
  }
  if (err != cudaSuccess) throw_cuda_error(err, "cudaMalloc", __FILE__, __LINE__);
  return static_cast<std::byte*>(p);
}

namespace {
thread_local size_t t_allocations = 0;
}  // namespace

size_t CachingAllocator::allocations_on_this_thread() { return t_allocations; }

GpuStorage CachingAllocator::allocate(size_t nbytes, int device) {
  check_device(device);
  ++t_allocations;
  if (nbytes > kMaxRequest)
    fail<OutOfMemoryError>("GPU out of memory: tried to allocate ", nbytes, " bytes on gpu:", device,
                           " (the size exceeds the address space)");
  const size_t size = round_size(nbytes);
  std::byte* p = nullptr;
  size_t block = size;
  {
    std::lock_guard<std::mutex> lock(mu_);
    DeviceState& st = state_locked(device);
    p = take_cached_locked(st, size, &block);
    if (p == nullptr) {
      p = malloc_locked(device, size, nbytes);
      block = size;
      st.reserved += size;
      st.max_reserved = std::max(st.max_reserved, st.reserved);
    }
    st.allocated += block;
    st.max_allocated = std::max(st.max_allocated, st.allocated);
  }
  // Built outside the lock: the deleter takes it. The DataPtr is made before the
  // GpuStorage (whose version counter allocates): if make_shared throws bad_alloc,
  // the shared_ptr constructor itself runs the deleter, so the block goes back to
  // the cache instead of leaking.
  DataPtr data(p, BlockDeleter{device, block});
  GpuStorage storage;
  storage.data = std::move(data);
  storage.nbytes = nbytes;
  storage.device = device;
  return storage;
}

void CachingAllocator::free_block(std::byte* p, int device, size_t size) noexcept {
  // Runs inside a shared_ptr deleter, possibly during interpreter shutdown after the
  // CUDA runtime has unloaded: it therefore only touches host bookkeeping, makes no
  // CUDA call on the normal path, and swallows every exception.
  try {
    std::lock_guard<std::mutex> lock(mu_);
    DeviceState& st = devices_[static_cast<size_t>(device)];
    st.allocated -= size;
    try {
      st.cached.emplace(size, p);
    } catch (...) {
      // No host memory for the map node: hand the block straight to the driver
      // (cudaFree waits for work still using it). Errors are ignored on purpose.
      if (cudaFree(p) != cudaSuccess) (void)cudaGetLastError();
      st.reserved -= size;
    }
  } catch (...) {
    // Locking failed: leak the block rather than throw from a deleter.
  }
}

void CachingAllocator::release_cached_locked(int device) {
  DeviceState& st = devices_[static_cast<size_t>(device)];
  if (st.cached.empty()) return;
  refuse_in_capture("freeing cached GPU memory (which waits for the device)");
  DeviceGuard guard(device);
  // A cached block may still be used by work queued before its tensor died (see the
  // header); memory must not go back to the driver before that work has finished.
  if (cudaStream_t s = stream_if_created(device)) LUCID_CUDA_CHECK(cudaStreamSynchronize(s));
  cudaError_t first_error = cudaSuccess;
  for (const auto& [size, p] : st.cached) {
    const cudaError_t err = cudaFree(p);
    if (err != cudaSuccess && first_error == cudaSuccess) first_error = err;
    st.reserved -= size;  // a failed free leaves the context broken; forget the block
  }
  st.cached.clear();
  if (first_error != cudaSuccess) throw_cuda_error(first_error, "cudaFree", __FILE__, __LINE__);
}

MemoryStats CachingAllocator::stats(int device) {
  check_device(device);
  std::lock_guard<std::mutex> lock(mu_);
  const DeviceState& st = state_locked(device);
  MemoryStats out;
  out.allocated = st.allocated;
  out.max_allocated = st.max_allocated;
  out.reserved = st.reserved;
  out.max_reserved = st.max_reserved;
  return out;
}

void CachingAllocator::reset_peak(int device) {
  check_device(device);
  std::lock_guard<std::mutex> lock(mu_);
  DeviceState& st = state_locked(device);
  st.max_allocated = st.allocated;
  st.max_reserved = st.reserved;
}

void CachingAllocator::set_limit(size_t bytes, int device) {
  check_device(device);
  std::lock_guard<std::mutex> lock(mu_);
  state_locked(device).limit = bytes;
}

void CachingAllocator::empty_cache() {
  std::lock_guard<std::mutex> lock(mu_);
  // devices_ is empty until the first allocation or stats call: nothing cached then,
  // and no context gets created just to empty an empty cache.
  for (size_t d = 0; d < devices_.size(); ++d) release_cached_locked(static_cast<int>(d));
}

}  // namespace lucid::cuda
