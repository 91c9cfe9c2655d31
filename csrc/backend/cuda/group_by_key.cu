// group_by_key (group_by_key.h): cub::DeviceRadixSort::SortPairs over (key, v) pairs,
// stable, so each key's entries keep increasing v; then one thread per bucket finds
// where its keys start by binary search. Only the key bits that can be set are
// sorted (a few passes for the small tables of resample taps).
#include <algorithm>
#include <bit>

#include <cub/device/device_radix_sort.cuh>

#include "backend/cuda/caching_allocator.h"
#include "backend/cuda/check.h"
#include "backend/cuda/device_guard.h"
#include "backend/cuda/elementwise_launch.cuh"
#include "backend/cuda/group_by_key.h"
#include "backend/cuda/stream.h"

namespace lucid::cuda {

namespace {

__global__ void iota_kernel(uint32_t* v, int64_t n) {
  for (int64_t i = int64_t(blockIdx.x) * kEwThreads + threadIdx.x; i < n; i += int64_t(gridDim.x) * kEwThreads)
    v[i] = uint32_t(i);
}

// offset[k] = the first position of a sorted key >= k, for k in [0, buckets].
__global__ void bucket_starts_kernel(const uint64_t* sorted, int64_t n, int64_t* offset, int64_t buckets) {
  for (int64_t k = int64_t(blockIdx.x) * kEwThreads + threadIdx.x; k <= buckets;
       k += int64_t(gridDim.x) * kEwThreads) {
    int64_t lo = 0, hi = n;
    while (lo < hi) {
      const int64_t mid = (lo + hi) / 2;
      if (sorted[mid] < uint64_t(k)) lo = mid + 1;
      else hi = mid;
    }
    offset[k] = lo;
  }
}

}  // namespace

KeyGroups group_by_key(const uint64_t* keys, int64_t n, int64_t buckets, int device) {
  LUCID_CHECK(n < (int64_t(1) << 32), RuntimeError, "internal: group_by_key of 2^32 or more entries");
  CachingAllocator& alloc = CachingAllocator::instance();
  KeyGroups g;
  g.entry = alloc.allocate(size_t(std::max<int64_t>(n, 1)) * sizeof(uint32_t), device);
  g.offset = alloc.allocate(size_t(buckets + 1) * sizeof(int64_t), device);
  GpuStorage sorted_keys = alloc.allocate(size_t(std::max<int64_t>(n, 1)) * sizeof(uint64_t), device);
  GpuStorage order = alloc.allocate(size_t(std::max<int64_t>(n, 1)) * sizeof(uint32_t), device);
  auto* entry = reinterpret_cast<uint32_t*>(g.entry.ptr());
  auto* sorted = reinterpret_cast<uint64_t*>(sorted_keys.ptr());
  auto* iota = reinterpret_cast<uint32_t*>(order.ptr());
  DeviceGuard guard(device);
  cudaStream_t s = stream(device);
  if (n > 0) {
    iota_kernel<<<ew_grid(n), kEwThreads, 0, s>>>(iota, n);
    LUCID_CUDA_CHECK(cudaGetLastError());
    const int bits = std::max(1, int(std::bit_width(uint64_t(buckets))));
    size_t temp_bytes = 0;
    LUCID_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(nullptr, temp_bytes, keys, sorted, iota, entry, n, 0, bits, s));
    GpuStorage temp = alloc.allocate(std::max<size_t>(temp_bytes, 1), device);
    LUCID_CUDA_CHECK(
        cub::DeviceRadixSort::SortPairs(temp.ptr(), temp_bytes, keys, sorted, iota, entry, n, 0, bits, s));
  }
  auto* offset = reinterpret_cast<int64_t*>(g.offset.ptr());
  bucket_starts_kernel<<<ew_grid(buckets + 1), kEwThreads, 0, s>>>(sorted, n, offset, buckets);
  LUCID_CUDA_CHECK(cudaGetLastError());
  return g;
}

}  // namespace lucid::cuda
