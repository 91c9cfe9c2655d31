// SortRows and SearchSorted on the GPU (ops/prims/reduce.h). SortRows sorts (sort key,
// position) pairs, sort.cuh's keys (ascending keys are PyTorch's order of the values;
// descending sorts their complement), by one of four paths:
// - topk of a few entries (k up to a block's 4096 and a small part of the row): selected,
//   not sorted (topk_select.cu);
// - rows of 512 to 4096 entries: one block per row, in shared memory (sort_block.cu);
// - longer rows: CUB's device radix sort (its segmented sort took 165 ms for one row of
//   16M float32, torch's radix sort 0.8 ms). One row sorts its keys directly, and for
//   64-bit keys only the bits in which they differ (int64 of a narrow range: 3 of 8
//   passes); several rows of 32-bit keys sort (row << 32 | key) keys, the row's bits only
//   as many as the rows need;
// - the rest (short rows; rows of 64-bit keys longer than a block): CUB's stable
//   segmented sort.
// Positions are 32-bit while sorting (a row is at most INT_MAX long) and widened, and
// values decoded from the sorted keys, as they are written out: by the block kernel
// itself, else by emit_sorted_kernel, which also keeps only the first k columns. Two key
// widths (32 and 64 bits) keep CUB's instantiations, and the compile time, down.
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_segmented_sort.cuh>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <tuple>
#include <utility>

#include "backend/cuda/caching_allocator.h"
#include "backend/cuda/check.h"
#include "backend/cuda/device_guard.h"
#include "backend/cuda/elementwise_launch.cuh"
#include "backend/cuda/flush_graphs.h"
#include "backend/cuda/register.h"
#include "backend/cuda/sort.cuh"
#include "backend/cuda/stream.h"
#include "ops/prims/reduce.h"
#include "ops/prims/search.h"

namespace lucid::cuda {

namespace {

// Rows from this long up to kBlockSortMax take the block path (its smallest block holds
// 1024 keys: a shorter row would mostly sort padding).
constexpr int64_t kBlockSortMin = 512;

// keys[i]: x[i]'s sort key, with above it its row when Wide is wider than the key (the
// radix path's rows); pos[i] (unless null): its position in the row. bits (unless
// null): the AND and the OR of all keys, for the bits in which they differ.
template <typename T, typename Wide>
__global__ void keys_kernel(const T* x, Wide* keys, uint32_t* pos, int64_t total, int64_t n, bool descending,
                            unsigned long long* bits) {
  Wide all = Wide(~Wide(0)), any = 0;
  for (int64_t i = int64_t(blockIdx.x) * kEwThreads + threadIdx.x; i < total; i += int64_t(gridDim.x) * kEwThreads) {
    Wide key = Wide(sort_key(x[i], descending));
    if constexpr (sizeof(Wide) > sizeof(KeyOf<T>)) key |= Wide(i / n) << (8 * sizeof(KeyOf<T>));
    keys[i] = key;
    if (pos) pos[i] = uint32_t(i % n);
    all &= key;
    any |= key;
  }
  if (bits) {
    unsigned long long a = all, o = any;
    for (int d = 16; d > 0; d /= 2) {
      a &= __shfl_xor_sync(0xffffffffu, a, d);
      o |= __shfl_xor_sync(0xffffffffu, o, d);
    }
    if (threadIdx.x % 32 == 0) {
      atomicAnd(&bits[0], a);
      atomicOr(&bits[1], o);
    }
  }
}

__global__ void row_offsets_kernel(int64_t* offsets, int64_t rows, int64_t n) {
  for (int64_t r = int64_t(blockIdx.x) * kEwThreads + threadIdx.x; r <= rows; r += int64_t(gridDim.x) * kEwThreads)
    offsets[r] = r * n;
}

// The bits [begin, end) in which one row's 64-bit keys differ (begin == end: all equal),
// from keys_kernel's AND and OR. A device-to-host read, but a narrow range saves up to
// five of the radix sort's eight passes over 16M keys.
std::pair<int, int> differing_bits(const unsigned long long* bits, cudaStream_t s) {
  refuse_in_capture("sort's read of the keys' differing bits");
  unsigned long long host[2];
  LUCID_CUDA_CHECK(cudaMemcpyAsync(host, bits, sizeof host, cudaMemcpyDeviceToHost, s));
  LUCID_CUDA_CHECK(cudaStreamSynchronize(s));
  const unsigned long long differ = host[0] ^ host[1];
  if (differ == 0) return {0, 0};
  return {__builtin_ctzll(differ), 64 - __builtin_clzll(differ)};
}

// The radix path, with Wide the sorted key type (KeyOf<T> for one row, uint64_t for rows of 32-bit keys).
template <typename T, typename Wide>
void radix_sort_rows(const ops::SortRows& p, const T* x, int64_t* out_pos, T* out_values, int dev) {
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
  const bool narrow = sizeof(KeyOf<T>) == 8 && p.rows == 1;
  GpuStorage bits;
  unsigned long long* b = nullptr;
  if (narrow) {
    bits = alloc.allocate(2 * sizeof(unsigned long long), dev);
    b = reinterpret_cast<unsigned long long*>(bits.ptr());
    LUCID_CUDA_CHECK(cudaMemsetAsync(b, 0xff, sizeof(unsigned long long), s));
    LUCID_CUDA_CHECK(cudaMemsetAsync(b + 1, 0, sizeof(unsigned long long), s));
  }
  // (a bounded grid: each thread sums many keys' bits before the atomics)
  keys_kernel<T, Wide><<<std::min(ew_grid(total), 4096u), kEwThreads, 0, s>>>(x, k, ps, total, p.n, p.descending, b);
  LUCID_CUDA_CHECK(cudaGetLastError());
  int row_bits = 0;
  while ((int64_t(1) << row_bits) < p.rows) ++row_bits;
  int begin_bit = 0, end_bit = int(8 * sizeof(KeyOf<T>)) + (sizeof(Wide) > sizeof(KeyOf<T>) ? row_bits : 0);
  if (narrow) std::tie(begin_bit, end_bit) = differing_bits(b, s);
  if (begin_bit == end_bit) {  // all keys equal: already in order
    sk = k;
    sps = ps;
  } else {
    size_t temp_bytes = 0;
    LUCID_CUDA_CHECK(
        cub::DeviceRadixSort::SortPairs(nullptr, temp_bytes, k, sk, ps, sps, total, begin_bit, end_bit, s));
    GpuStorage temp = alloc.allocate(std::max<size_t>(temp_bytes, 1), dev);
    LUCID_CUDA_CHECK(
        cub::DeviceRadixSort::SortPairs(temp.ptr(), temp_bytes, k, sk, ps, sps, total, begin_bit, end_bit, s));
  }
  emit_sorted_kernel<T, Wide, uint32_t><<<ew_grid(p.rows * p.k), kEwThreads, 0, s>>>(
      sk, sps, x, out_pos, out_values, p.rows, p.n, p.k, p.n, p.descending);
  LUCID_CUDA_CHECK(cudaGetLastError());
}

// The block path: the keys, then one block per row (sort_block.cu), which also writes the values.
template <typename T>
void block_sort(const ops::SortRows& p, const T* x, int64_t* out_pos, T* out_values, int dev) {
  using Key = KeyOf<T>;
  const int64_t total = p.rows * p.n;
  cudaStream_t s = stream(dev);
  GpuStorage keys = CachingAllocator::instance().allocate(size_t(total) * sizeof(Key), dev);
  auto* k = reinterpret_cast<Key*>(keys.ptr());
  keys_kernel<T, Key><<<ew_grid(total), kEwThreads, 0, s>>>(x, k, nullptr, total, p.n, p.descending, nullptr);
  LUCID_CUDA_CHECK(cudaGetLastError());
  block_sort_rows<Key>(k, nullptr, p.rows, p.n, p.k, out_pos, {DtypeOf<T>::value, x, out_values, p.n, p.descending}, s);
}

// The segmented path: CUB's stable segmented sort of every row at once.
template <typename T>
void segmented_sort(const ops::SortRows& p, const T* x, int64_t* out_pos, T* out_values, int dev) {
  using Key = KeyOf<T>;
  const int64_t total = p.rows * p.n;
  cudaStream_t s = stream(dev);
  CachingAllocator& alloc = CachingAllocator::instance();
  GpuStorage keys = alloc.allocate(size_t(total) * sizeof(Key), dev);
  GpuStorage sorted_keys = alloc.allocate(size_t(total) * sizeof(Key), dev);
  GpuStorage pos = alloc.allocate(size_t(total) * sizeof(uint32_t), dev);
  GpuStorage sorted_pos = alloc.allocate(size_t(total) * sizeof(uint32_t), dev);
  GpuStorage offsets = alloc.allocate(size_t(p.rows + 1) * sizeof(int64_t), dev);
  auto* k = reinterpret_cast<Key*>(keys.ptr());
  auto* sk = reinterpret_cast<Key*>(sorted_keys.ptr());
  auto* ps = reinterpret_cast<uint32_t*>(pos.ptr());
  auto* sps = reinterpret_cast<uint32_t*>(sorted_pos.ptr());
  auto* off = reinterpret_cast<int64_t*>(offsets.ptr());
  keys_kernel<T, Key><<<ew_grid(total), kEwThreads, 0, s>>>(x, k, ps, total, p.n, p.descending, nullptr);
  LUCID_CUDA_CHECK(cudaGetLastError());
  row_offsets_kernel<<<ew_grid(p.rows + 1), kEwThreads, 0, s>>>(off, p.rows, p.n);
  LUCID_CUDA_CHECK(cudaGetLastError());
  size_t temp_bytes = 0;
  LUCID_CUDA_CHECK(cub::DeviceSegmentedSort::StableSortPairs(nullptr, temp_bytes, k, sk, ps, sps, int(total),
                                                             int(p.rows), off, off + 1, s));
  GpuStorage temp = alloc.allocate(std::max<size_t>(temp_bytes, 1), dev);
  LUCID_CUDA_CHECK(cub::DeviceSegmentedSort::StableSortPairs(temp.ptr(), temp_bytes, k, sk, ps, sps, int(total),
                                                             int(p.rows), off, off + 1, s));
  emit_sorted_kernel<T, Key, uint32_t><<<ew_grid(p.rows * p.k), kEwThreads, 0, s>>>(
      sk, sps, x, out_pos, out_values, p.rows, p.n, p.k, p.n, p.descending);
  LUCID_CUDA_CHECK(cudaGetLastError());
}

// Each row's first k positions (and values) by the path its length takes.
template <typename T>
void sort_rows(const ops::SortRows& p, const T* x, int64_t* out_pos, T* out_values, int dev) {
  using Key = KeyOf<T>;
  if (p.n >= kBlockSortMin && p.n <= kBlockSortMax) return block_sort<T>(p, x, out_pos, out_values, dev);
  if (p.rows == 1 && p.n > kBlockSortMax) return radix_sort_rows<T, Key>(p, x, out_pos, out_values, dev);
  if (sizeof(Key) == 4 && p.n > kBlockSortMax) return radix_sort_rows<T, uint64_t>(p, x, out_pos, out_values, dev);
  segmented_sort<T>(p, x, out_pos, out_values, dev);
}

void sort_rows_kernel(const ops::Primitive& prim, ops::Outputs outs, ops::Inputs ins) {
  const auto& p = ops::prim_cast<ops::SortRows>(prim);
  if (p.rows * p.k == 0) return;
  const int64_t total = p.rows * p.n;
  LUCID_CHECK(total <= INT_MAX && p.rows <= INT_MAX, RuntimeError, "sort on the GPU: at most ", INT_MAX,
              " elements (got ", total, ")");
  const int dev = outs[0]->device().index;
  DeviceGuard guard(dev);
  TensorImpl* values = p.values ? outs[1] : nullptr;
  visit_dtype(ins[0]->dtype(), [&]<typename T>() {
    if constexpr (kIsComplexValue<T>) {
      fail<RuntimeError>("sort: complex values have no order");
    } else if (selects_first_k(p.n, p.k)) {
      select_first_k(p, *ins[0], *outs[0], values, dev);
    } else {
      sort_rows<T>(p, reinterpret_cast<const T*>(ins[0]->data_ptr()), reinterpret_cast<int64_t*>(outs[0]->data_ptr()),
                   values ? reinterpret_cast<T*>(values->data_ptr()) : nullptr, dev);
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
