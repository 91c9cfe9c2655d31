// block_sort_rows (sort.cuh): rows of up to 4096 keys sorted one block per row, in
// shared memory, by CUB's BlockRadixSort. For [4096, 4096] float32 the device-wide
// segmented sort took 2.4x torch's time: it sorts such rows in several global passes,
// where a block holds the whole row. Four sizes of block (up to 256, 1024, 2048 and 4096
// keys: the smallest for topk's selected entries) keep a short row from paying for a
// long one; two key widths, eight instantiations in all, in a file of their own for
// compile time.
#include <cub/block/block_radix_sort.cuh>

#include "backend/cuda/check.h"
#include "backend/cuda/sort.cuh"

namespace lucid::cuda {

namespace {

// values.out[at] = the value of the sorted key `key`, of the dtype sorted (a switch, not a
// template: one kernel for every dtype of one key width keeps the instantiations at two
// per block size). Only the dtypes whose keys are Key can come here.
template <typename T, typename Key>
__device__ inline void store_as(const SortedValues& v, Key key, int64_t row, int64_t pos, int64_t at) {
  if constexpr (std::is_same_v<KeyOf<T>, Key>) {
    const T* x = static_cast<const T*>(v.x);
    static_cast<T*>(v.out)[at] = value_of_key<T>(key, v.descending, [&] { return x[row * v.row_len + pos]; });
  }
}

template <typename Key>
__device__ inline void store_value(const SortedValues& v, Key key, int64_t row, int64_t pos, int64_t at) {
  switch (v.dtype) {
    case Dtype::Bool: return store_as<bool>(v, key, row, pos, at);
    case Dtype::U8: return store_as<uint8_t>(v, key, row, pos, at);
    case Dtype::I8: return store_as<int8_t>(v, key, row, pos, at);
    case Dtype::I16: return store_as<int16_t>(v, key, row, pos, at);
    case Dtype::I32: return store_as<int32_t>(v, key, row, pos, at);
    case Dtype::I64: return store_as<int64_t>(v, key, row, pos, at);
    case Dtype::F16: return store_as<Half>(v, key, row, pos, at);
    case Dtype::BF16: return store_as<BFloat16>(v, key, row, pos, at);
    case Dtype::F32: return store_as<float>(v, key, row, pos, at);
    case Dtype::F64: return store_as<double>(v, key, row, pos, at);
    default: return;  // (complex: refused before any kernel)
  }
}

// Row blockIdx.x: loaded in the blocked arrangement (thread t holds entries t * kItems
// up), whose order BlockRadixSort's stable ranking keeps for equal keys, so ties stay in
// position order; the padding past n is the largest key and sorts after every entry
// (after an equal one too, being later). Written back striped: rank i * kThreads + t.
//
// 32-bit keys ask for 1024 resident threads per SM (64 registers a thread): they fit
// with no spills, and two 512-thread blocks per SM hide each other's barriers (measured
// in docs/PERFORMANCE.md). 64-bit keys would spill there, so they keep the compiler's
// choice.
template <typename Key>
constexpr int kMinBlocksPerSM(int threads) { return sizeof(Key) == 4 ? 1024 / threads : 1; }

template <typename Key, int kThreads, int kItems>
__global__ void __launch_bounds__(kThreads, kMinBlocksPerSM<Key>(kThreads))
    block_sort_kernel(const Key* keys, const uint32_t* payload, int64_t n, int64_t k, int64_t* out_pos,
                      SortedValues values) {
  using Sort = cub::BlockRadixSort<Key, kThreads, kItems, uint32_t>;
  __shared__ typename Sort::TempStorage temp;
  const int64_t row = blockIdx.x;
  const Key* in = keys + row * n;
  Key key[kItems];
  uint32_t at[kItems];
#pragma unroll
  for (int i = 0; i < kItems; ++i) {
    const int j = int(threadIdx.x) * kItems + i;
    key[i] = j < n ? in[j] : Key(~Key(0));
    at[i] = uint32_t(j);
  }
  Sort(temp).SortBlockedToStriped(key, at);
#pragma unroll
  for (int i = 0; i < kItems; ++i) {
    const int64_t rank = int64_t(i) * kThreads + threadIdx.x;
    if (rank < k) {
      const int64_t pos = payload ? int64_t(payload[row * n + at[i]]) : int64_t(at[i]);
      out_pos[row * k + rank] = pos;
      if (values.out) store_value(values, key[i], row, pos, row * k + rank);
    }
  }
}

template <typename Key, int kThreads, int kItems>
void launch(const Key* keys, const uint32_t* payload, int64_t rows, int64_t n, int64_t k, int64_t* out_pos,
            const SortedValues& values, cudaStream_t s) {
  block_sort_kernel<Key, kThreads, kItems><<<unsigned(rows), kThreads, 0, s>>>(keys, payload, n, k, out_pos, values);
  LUCID_CUDA_CHECK(cudaGetLastError());
}

}  // namespace

template <typename Key>
void block_sort_rows(const Key* keys, const uint32_t* payload, int64_t rows, int64_t n, int64_t k, int64_t* out_pos,
                     const SortedValues& values, cudaStream_t s) {
  static_assert(kBlockSortMax == 512 * 8);
  if (n <= 256) launch<Key, 128, 2>(keys, payload, rows, n, k, out_pos, values, s);
  else if (n <= 1024) launch<Key, 128, 8>(keys, payload, rows, n, k, out_pos, values, s);
  else if (n <= 2048) launch<Key, 256, 8>(keys, payload, rows, n, k, out_pos, values, s);
  else launch<Key, 512, 8>(keys, payload, rows, n, k, out_pos, values, s);
}

template void block_sort_rows<uint32_t>(const uint32_t*, const uint32_t*, int64_t, int64_t, int64_t, int64_t*,
                                        const SortedValues&, cudaStream_t);
template void block_sort_rows<uint64_t>(const uint64_t*, const uint32_t*, int64_t, int64_t, int64_t, int64_t*,
                                        const SortedValues&, cudaStream_t);

}  // namespace lucid::cuda
