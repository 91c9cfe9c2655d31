// block_sort_rows (sort.cuh): rows of up to 4096 keys sorted one block per row, in
// shared memory, by CUB's BlockRadixSort. For [4096, 4096] float32 the device-wide
// segmented sort took 2.4x torch's time: it sorts such rows in several global passes,
// where a block holds the whole row. Three sizes of block (up to 1024, 2048 and 4096
// keys) keep a short row from paying for a long one; two key widths, six instantiations
// in all, in a file of their own for compile time.
#include <cub/block/block_radix_sort.cuh>

#include "backend/cuda/check.h"
#include "backend/cuda/sort.cuh"

namespace lucid::cuda {

namespace {

// Row blockIdx.x: loaded in the blocked arrangement (thread t holds entries t * kItems
// up), whose order BlockRadixSort's stable ranking keeps for equal keys, so ties stay in
// position order; the padding past n is the largest key and sorts after every entry
// (after an equal one too, being later). Written back striped: rank i * kThreads + t.
template <typename Key, int kThreads, int kItems>
__global__ void __launch_bounds__(kThreads)
    block_sort_kernel(const Key* keys, const uint32_t* payload, int64_t n, int64_t k, int64_t* out_pos,
                      Key* out_keys) {
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
      out_pos[row * k + rank] = payload ? int64_t(payload[row * n + at[i]]) : int64_t(at[i]);
      if (out_keys) out_keys[row * k + rank] = key[i];
    }
  }
}

template <typename Key, int kThreads, int kItems>
void launch(const Key* keys, const uint32_t* payload, int64_t rows, int64_t n, int64_t k, int64_t* out_pos,
            Key* out_keys, cudaStream_t s) {
  static_assert(kThreads * kItems >= 1024);
  block_sort_kernel<Key, kThreads, kItems><<<unsigned(rows), kThreads, 0, s>>>(keys, payload, n, k, out_pos, out_keys);
  LUCID_CUDA_CHECK(cudaGetLastError());
}

}  // namespace

template <typename Key>
void block_sort_rows(const Key* keys, const uint32_t* payload, int64_t rows, int64_t n, int64_t k, int64_t* out_pos,
                     Key* out_keys, cudaStream_t s) {
  static_assert(kBlockSortMax == 512 * 8);
  if (n <= 1024) launch<Key, 128, 8>(keys, payload, rows, n, k, out_pos, out_keys, s);
  else if (n <= 2048) launch<Key, 256, 8>(keys, payload, rows, n, k, out_pos, out_keys, s);
  else launch<Key, 512, 8>(keys, payload, rows, n, k, out_pos, out_keys, s);
}

template void block_sort_rows<uint32_t>(const uint32_t*, const uint32_t*, int64_t, int64_t, int64_t, int64_t*,
                                        uint32_t*, cudaStream_t);
template void block_sort_rows<uint64_t>(const uint64_t*, const uint32_t*, int64_t, int64_t, int64_t, int64_t*,
                                        uint64_t*, cudaStream_t);

}  // namespace lucid::cuda
