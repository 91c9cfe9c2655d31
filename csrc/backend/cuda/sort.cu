// SortRows and SearchSorted on the GPU (ops/prims/reduce.h). SortRows: CUB's stable segmented sort, one segment
// a row, of (order key, position) pairs (ops/prims/search.h's order_key: ascending
// keys are PyTorch's order of the values; descending sorts their complement). Two key
// widths (32 and 64 bits) keep CUB's instantiations, and this file's compile time, to two.
// Long rows go to CUB's radix sort instead (its segmented sort took 165 ms for one row of
// 16M float32, torch's radix sort 0.8 ms): one row sorts its keys directly; several rows
// of 32-bit keys sort (row << 32 | key) keys, the row's bits only as many as the rows need.
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_segmented_sort.cuh>

#include <climits>
#include <cstdint>
#include <type_traits>

#include "backend/cuda/caching_allocator.h"
#include "backend/cuda/check.h"
#include "backend/cuda/device_guard.h"
#include "backend/cuda/elementwise_launch.cuh"
#include "backend/cuda/register.h"
#include "backend/cuda/stream.h"
#include "core/half.h"
#include "ops/prims/reduce.h"
#include "ops/prims/search.h"

namespace lucid::cuda {

namespace {

template <typename T>
using KeyOf = ops::OrderKey<T>;

template <typename T>
__global__ void keys_kernel(const T* x, KeyOf<T>* keys, int64_t* pos, int64_t total, int64_t n, bool descending) {
  for (int64_t i = int64_t(blockIdx.x) * kEwThreads + threadIdx.x; i < total; i += int64_t(gridDim.x) * kEwThreads) {
    const KeyOf<T> k = ops::order_key(x[i]);
    keys[i] = descending ? KeyOf<T>(~k) : k;
    pos[i] = i % n;
  }
}

__global__ void row_offsets_kernel(int64_t* offsets, int64_t rows, int64_t n) {
  for (int64_t r = int64_t(blockIdx.x) * kEwThreads + threadIdx.x; r <= rows; r += int64_t(gridDim.x) * kEwThreads)
    offsets[r] = r * n;
}

// Keys of the radix path: each value's order key, above it its row (rows > 1), and its
// position in the row as the payload.
template <typename T, typename Wide>
__global__ void radix_keys_kernel(const T* x, Wide* keys, uint32_t* pos, int64_t total, int64_t n, bool descending) {
  for (int64_t i = int64_t(blockIdx.x) * kEwThreads + threadIdx.x; i < total; i += int64_t(gridDim.x) * kEwThreads) {
    const KeyOf<T> k = ops::order_key(x[i]);
    Wide key = Wide(descending ? KeyOf<T>(~k) : k);
    if constexpr (sizeof(Wide) > sizeof(KeyOf<T>)) key |= Wide(i / n) << (8 * sizeof(KeyOf<T>));
    keys[i] = key;
    pos[i] = uint32_t(i % n);
  }
}

__global__ void widen_kernel(const uint32_t* pos, int64_t* out, int64_t total) {
  for (int64_t i = int64_t(blockIdx.x) * kEwThreads + threadIdx.x; i < total; i += int64_t(gridDim.x) * kEwThreads)
    out[i] = int64_t(pos[i]);
}

// The radix path, with Wide the sorted key type (KeyOf<T> for one row, uint64_t for rows of 32-bit keys).
template <typename T, typename Wide>
void radix_sort_rows(const ops::SortRows& p, const TensorImpl& x, int64_t* result, int dev) {
  const int64_t total = p.rows * p.n;
  cudaStream_t s = stream(dev);
  CachingAllocator& alloc = CachingAllocator::instance();
  GpuStorage keys = alloc.allocate(size_t(total) * sizeof(Wide), dev);
  GpuStorage sorted_keys = alloc.allocate(size_t(total) * sizeof(Wide), dev);
  GpuStorage pos = alloc.allocate(size_t(total) * sizeof(uint32_t), dev);
  GpuStorage sorted_pos = alloc.allocate(size_t(total) * sizeof(uint32_t), dev);
  auto* k = reinterpret_cast<Wide*>(keys.ptr());
  auto* sk = reinterpret_cast<Wide*>(sorted_keys.ptr());
  auto* ps = reinterpret_cast<uint32_t*>(pos.ptr());
  auto* sps = reinterpret_cast<uint32_t*>(sorted_pos.ptr());
  radix_keys_kernel<T, Wide><<<ew_grid(total), kEwThreads, 0, s>>>(reinterpret_cast<const T*>(x.data_ptr()), k, ps,
                                                                   total, p.n, p.descending);
  LUCID_CUDA_CHECK(cudaGetLastError());
  int row_bits = 0;
  while ((int64_t(1) << row_bits) < p.rows) ++row_bits;
  const int end_bit = int(8 * sizeof(KeyOf<T>)) + (sizeof(Wide) > sizeof(KeyOf<T>) ? row_bits : 0);
  size_t temp_bytes = 0;
  LUCID_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(nullptr, temp_bytes, k, sk, ps, sps, total, 0, end_bit, s));
  GpuStorage temp = alloc.allocate(std::max<size_t>(temp_bytes, 1), dev);
  LUCID_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(temp.ptr(), temp_bytes, k, sk, ps, sps, total, 0, end_bit, s));
  widen_kernel<<<ew_grid(total), kEwThreads, 0, s>>>(sps, result, total);
  LUCID_CUDA_CHECK(cudaGetLastError());
}

// Rows at least this long take the radix path (rows of 32-bit keys; one row of any).
constexpr int64_t kRadixRow = 2048;

// Each row's whole sorting permutation into result [rows, n].
template <typename T>
void sort_rows(const ops::SortRows& p, const TensorImpl& x, int64_t* result, int dev) {
  using Key = KeyOf<T>;
  const int64_t total = p.rows * p.n;
  if (total == 0) return;
  LUCID_CHECK(total <= INT_MAX && p.rows <= INT_MAX, RuntimeError, "sort on the GPU: at most ", INT_MAX,
              " elements (got ", total, ")");
  if (p.rows == 1 && p.n >= kRadixRow) return radix_sort_rows<T, Key>(p, x, result, dev);
  if (sizeof(Key) == 4 && p.n >= kRadixRow && p.rows <= (int64_t(1) << 31))
    return radix_sort_rows<T, uint64_t>(p, x, result, dev);
  cudaStream_t s = stream(dev);
  CachingAllocator& alloc = CachingAllocator::instance();
  GpuStorage keys = alloc.allocate(size_t(total) * sizeof(Key), dev);
  GpuStorage sorted_keys = alloc.allocate(size_t(total) * sizeof(Key), dev);
  GpuStorage pos = alloc.allocate(size_t(total) * sizeof(int64_t), dev);
  GpuStorage offsets = alloc.allocate(size_t(p.rows + 1) * sizeof(int64_t), dev);
  auto* k = reinterpret_cast<Key*>(keys.ptr());
  auto* sk = reinterpret_cast<Key*>(sorted_keys.ptr());
  auto* ps = reinterpret_cast<int64_t*>(pos.ptr());
  auto* off = reinterpret_cast<int64_t*>(offsets.ptr());
  keys_kernel<T><<<ew_grid(total), kEwThreads, 0, s>>>(reinterpret_cast<const T*>(x.data_ptr()), k, ps, total, p.n,
                                                       p.descending);
  LUCID_CUDA_CHECK(cudaGetLastError());
  row_offsets_kernel<<<ew_grid(p.rows + 1), kEwThreads, 0, s>>>(off, p.rows, p.n);
  LUCID_CUDA_CHECK(cudaGetLastError());
  size_t temp_bytes = 0;
  LUCID_CUDA_CHECK(cub::DeviceSegmentedSort::StableSortPairs(nullptr, temp_bytes, k, sk, ps, result, int(total),
                                                             int(p.rows), off, off + 1, s));
  GpuStorage temp = alloc.allocate(std::max<size_t>(temp_bytes, 1), dev);
  LUCID_CUDA_CHECK(cub::DeviceSegmentedSort::StableSortPairs(temp.ptr(), temp_bytes, k, sk, ps, result, int(total),
                                                             int(p.rows), off, off + 1, s));
}

// values[r, j] = x[r, pos[r, j]] for j < k: SortRows' values, when asked for, from its positions.
template <typename T>
__global__ void sorted_values_kernel(const T* x, const int64_t* pos, T* values, int64_t total, int64_t n, int64_t k) {
  for (int64_t i = int64_t(blockIdx.x) * kEwThreads + threadIdx.x; i < total; i += int64_t(gridDim.x) * kEwThreads)
    values[i] = x[(i / k) * n + pos[i]];
}

// The whole sort of each row; for k < n (topk) into a scratch buffer, whose first k
// columns are then copied out (lucid has no GPU selection yet: see docs/ENGINE.md).
void sort_rows_kernel(const ops::Primitive& prim, ops::Outputs outs, ops::Inputs ins) {
  const auto& p = ops::prim_cast<ops::SortRows>(prim);
  if (p.rows * p.k == 0) return;
  const int dev = outs[0]->device().index;
  DeviceGuard guard(dev);
  cudaStream_t s = stream(dev);
  auto* out = reinterpret_cast<int64_t*>(outs[0]->data_ptr());
  GpuStorage whole;
  if (p.k < p.n) whole = CachingAllocator::instance().allocate(size_t(p.rows * p.n) * sizeof(int64_t), dev);
  int64_t* positions = p.k < p.n ? reinterpret_cast<int64_t*>(whole.ptr()) : out;
  visit_dtype(ins[0]->dtype(), [&]<typename T>() {
    if constexpr (kIsComplexValue<T>) {
      fail<RuntimeError>("sort: complex values have no order");
    } else {
      sort_rows<T>(p, *ins[0], positions, dev);
      const size_t row_bytes = size_t(p.k) * sizeof(int64_t), pitch = size_t(p.n) * sizeof(int64_t);
      if (p.k < p.n)
        LUCID_CUDA_CHECK(cudaMemcpy2DAsync(out, row_bytes, positions, pitch, row_bytes, size_t(p.rows),
                                           cudaMemcpyDeviceToDevice, s));
      if (p.values) {
        const int64_t total = p.rows * p.k;
        sorted_values_kernel<T><<<ew_grid(total), kEwThreads, 0, s>>>(
            reinterpret_cast<const T*>(ins[0]->data_ptr()), out, reinterpret_cast<T*>(outs[1]->data_ptr()), total,
            p.n, p.k);
        LUCID_CUDA_CHECK(cudaGetLastError());
      }
    }
  });
}

// ---- SearchSorted: one thread per value, a binary search of its row --------------------

template <typename T>
__global__ void search_sorted_kernel(const T* boundaries, const T* values, int64_t* out, int64_t total, int64_t n,
                                     int64_t m, bool right, bool shared) {
  for (int64_t i = int64_t(blockIdx.x) * kEwThreads + threadIdx.x; i < total; i += int64_t(gridDim.x) * kEwThreads)
    out[i] = ops::sorted_position(boundaries + (shared ? 0 : (i / m) * n), n, ops::SearchType<T>(values[i]), right);
}

void search_sorted_prim(const ops::Primitive& prim, ops::Outputs outs, ops::Inputs ins) {
  const auto& p = ops::prim_cast<ops::SearchSorted>(prim);
  const int64_t total = p.rows * p.m;
  if (total == 0) return;
  const int dev = outs[0]->device().index;
  DeviceGuard guard(dev);
  cudaStream_t s = stream(dev);
  visit_dtype(ins[0]->dtype(), [&]<typename T>() {
    if constexpr (kIsComplexValue<T>) {
      fail<RuntimeError>("searchsorted: complex values have no order");
    } else {
      search_sorted_kernel<T><<<ew_grid(total), kEwThreads, 0, s>>>(
          reinterpret_cast<const T*>(ins[0]->data_ptr()), reinterpret_cast<const T*>(ins[1]->data_ptr()),
          reinterpret_cast<int64_t*>(outs[0]->data_ptr()), total, p.n, p.m, p.right, p.shared);
    }
  });
  LUCID_CUDA_CHECK(cudaGetLastError());
}

}  // namespace

void register_sort_kernels() {
  ops::register_kernel(ops::Prim::SortRows, DeviceType::GPU, sort_rows_kernel);
  ops::register_kernel(ops::Prim::SearchSorted, DeviceType::GPU, search_sorted_prim);
}

}  // namespace lucid::cuda
