// The GPU sort's shared parts: its keys and their values, the kernel that writes the
// device-wide sorts' positions and values out (sort.cu), the block sort of short rows
// (sort_block.cu) and the selection of topk's first k (topk_select.cu).
#pragma once

#include <cuda_runtime.h>

#include <cmath>
#include <cstdint>
#include <type_traits>

#include "backend/cuda/elementwise_loop.cuh"
#include "core/tensor_impl.h"
#include "ops/prims/reduce.h"
#include "ops/prims/search.h"

namespace lucid::cuda {

template <typename T>
using KeyOf = ops::OrderKey<T>;

// x's sort key: its order key (ops/prims/search.h), the complement for a descending sort
// (which reverses the order and keeps equal keys in position order).
template <typename T>
__device__ inline KeyOf<T> sort_key(T x, bool descending) {
  const KeyOf<T> k = ops::order_key(x);
  return descending ? KeyOf<T>(~k) : k;
}

// The sorted value whose sort key is `key`: order_value, except where order_key merged
// values (-0.0 into 0.0, every NaN into one NaN); those are read_input() (the value at
// the entry's position), keeping their own bits. The decode replaces a gather of every
// value (a random read each, 30% of a 16M sort).
template <typename T, typename Read>
__device__ inline T value_of_key(KeyOf<T> key, bool descending, Read read_input) {
  using C = ops::SearchType<T>;
  const KeyOf<T> k = descending ? KeyOf<T>(~key) : key;
  if constexpr (std::is_floating_point_v<C>) {
    if (k == ops::order_key(T(C(0))) || k == ops::order_key(T(C(NAN)))) return read_input();
  }
  return ops::order_value<T>(k);
}

// Each row's first k sorted entries from a [rows, stride] buffer of sorted keys and
// positions (row r of x [rows, n] sorted): the positions into out_pos (unless null: they
// are there already) and, unless null, the values into out_values, both [rows, k].
// Wide keys hold the sort key in their low bits (the radix path's row number above it).
template <typename T, typename Wide, typename P>
__global__ void emit_sorted_kernel(const Wide* keys, const P* pos, const T* x, int64_t* out_pos, T* out_values,
                                   int64_t rows, int64_t stride, int64_t k, int64_t n, bool descending) {
  const int64_t total = rows * k;
  for (int64_t i = int64_t(blockIdx.x) * kEwThreads + threadIdx.x; i < total; i += int64_t(gridDim.x) * kEwThreads) {
    const int64_t src = stride == k ? i : (i / k) * stride + i % k;  // (no division for whole rows)
    if (out_pos) out_pos[i] = int64_t(pos[src]);
    if (out_values)
      out_values[i] = value_of_key<T>(KeyOf<T>(keys[src]), descending,
                                      [&] { return x[(src / stride) * n + int64_t(pos[src])]; });
  }
}

// Rows up to this long are sorted one block per row, in shared memory (sort_block.cu).
inline constexpr int64_t kBlockSortMax = 4096;

// Where a block sort also writes the sorted values (out null: positions only): decoded
// from the keys as value_of_key does, x [rows, row_len] of dtype the input sorted.
struct SortedValues {
  Dtype dtype = Dtype::F32;
  const void* x = nullptr;
  void* out = nullptr;
  int64_t row_len = 0;
  bool descending = false;
};

// Sorts each row of keys [rows, n] (n <= kBlockSortMax) ascending and stably, one block
// a row, and writes each row's first k: their positions into out_pos [rows, k] (the
// payload's entries at those positions when payload [rows, n] is given) and their
// values as `values` says.
template <typename Key>
void block_sort_rows(const Key* keys, const uint32_t* payload, int64_t rows, int64_t n, int64_t k, int64_t* out_pos,
                     const SortedValues& values, cudaStream_t s);

// Whether topk's first k of rows n long are selected (select_first_k) rather than sorted:
// k up to what a block sorts, and a small part of a row (a block sorts a whole short row
// faster than the selection's passes over it).
inline bool selects_first_k(int64_t n, int64_t k) {
  return k < n && k <= kBlockSortMax && (n > kBlockSortMax || k * 16 <= n);
}

// topk's first k of each row without sorting the row (selects_first_k): a radix
// select of each row's k-th key, the k entries up to it gathered in position order, and
// those block-sorted. outs: positions int64 [rows, k], and the values when p.values.
void select_first_k(const ops::SortRows& p, const TensorImpl& x, TensorImpl& out_pos, TensorImpl* out_values,
                    int dev);

}  // namespace lucid::cuda
