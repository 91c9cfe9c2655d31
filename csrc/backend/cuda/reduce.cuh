// The CUDA reduction engine: every (o, i) of a contiguous [outer, n, inner] block
// reduced along n by a reducer R, deterministically (Note [Deterministic reductions]).
//
// A reducer provides
//   using Acc;                                   a trivially copyable accumulator
//   Acc init() const;                            the identity
//   Acc load(int64_t e, int64_t j) const;        element e = (o * n + j) * inner + i, at j along n
//   Acc combine(Acc a, Acc b) const;             associative and commutative up to rounding
//                                                (a result that depends on which element came
//                                                first, argmax's ties, compares indices)
//   void store(int64_t out, Acc a) const;        the result of output out = o * inner + i
// and may provide, for 16-byte loads along contiguous rows (inner == 1),
//   const E* x;                                  the block's elements
//   Acc lift(E v, int64_t e, int64_t j) const;   load(e, j) given the element's value v
//
// Note [Deterministic reductions]
// No atomics: each block reduces a fixed slice with a fixed tree, and when one output
// is split over several blocks (few outputs, long rows: a full sum), the partial
// results go to a scratch buffer that one thread per output combines in order. The
// same input gives the same bits on every run, as on the CPU.
#pragma once

#include <algorithm>
#include <cstdint>
#include <type_traits>
#include <utility>

#include "backend/cuda/check.h"
#include "backend/cuda/device_guard.h"
#include "backend/cuda/elementwise_loop.cuh"
#include "backend/cuda/reduce_rows_walk.cuh"
#include "backend/cuda/stream.h"
#include "core/tensor_impl.h"

namespace lucid::cuda {

inline constexpr int kReduceThreads = 256;

// How many blocks reduce_block splits each output's n elements over (1: none), given
// the blocks it takes unsplit. About four blocks per multiprocessor (132 on an H200)
// keep the memory busy; long reductions with fewer blocks than that are split, a row's
// part at least 4096 long, a column block's (32 * V columns wide) at least 1024 rows.
inline int64_t reduce_splits(int64_t blocks, int64_t n, bool columns) {
  constexpr int64_t kWantBlocks = 528;
  const int64_t min_part = columns ? 1024 : 4096;
  if (blocks >= kWantBlocks || n <= min_part) return 1;
  return std::min<int64_t>({(kWantBlocks + blocks - 1) / blocks, (n + min_part - 1) / min_part, 1024});
}

#if defined(__CUDACC__)

// A reducer whose elements the rows kernel may read 16 bytes at a time.
template <class R>
concept VectorRows = requires(const R& r) { r.lift(r.x[0], int64_t(0), int64_t(0)); };

// A split's share of a row: a multiple of 16 elements, so that every part starts where
// a 16-byte load of any element type may start.
__device__ __forceinline__ int64_t split_chunk(int64_t n, int splits) {
  return ((n + splits - 1) / splits + 15) / 16 * 16;
}

// inner == 1: block (o, split) reduces its part of row o with 256 threads, walking it
// as walk_row does (reduce_rows_walk.cuh): with VectorRows, aligned rows are read 16
// bytes a load. The split is fixed by the shape: deterministic.
template <class R>
__global__ void __launch_bounds__(kReduceThreads) reduce_rows_kernel(R r, int64_t outer, int64_t n, int splits,
                                                                     typename R::Acc* partial) {
  using Acc = typename R::Acc;
  constexpr int T = kReduceThreads;
  __shared__ Acc s[T];
  const int tid = threadIdx.x;
  const int64_t chunk = split_chunk(n, splits);
  const int64_t j0 = int64_t(blockIdx.y) * chunk, j1 = j0 + chunk < n ? j0 + chunk : n;
  for (int64_t o = blockIdx.x; o < outer; o += gridDim.x) {
    const int64_t base = o * n;
    Acc a;
    bool scalar = true;
    if constexpr (VectorRows<R>) {
      using E = std::remove_cvref_t<decltype(r.x[0])>;
      constexpr int V = ew_vec_width<E>();
      if (V > 1 && reinterpret_cast<uintptr_t>(r.x) % 16 == 0 && n % V == 0) {
        scalar = false;
        auto read = [&](int64_t j) { return *reinterpret_cast<const EwVec<E, V>*>(r.x + base + j); };
        auto fold = [&](Acc acc, const EwVec<E, V>& v, int64_t j) {
#pragma unroll
          for (int k = 0; k < V; ++k) acc = r.combine(acc, r.lift(v.v[k], base + j + k, j + k));
          return acc;
        };
        a = walk_row<T, V>(r.init(), j0, j1, tid, read, fold, r);  // (j0 and j1 are multiples of V)
      }
    }
    if (scalar) {
      auto read = [&](int64_t j) { return r.load(base + j, j); };
      auto fold = [&](Acc acc, const Acc& v, int64_t) { return r.combine(acc, v); };
      a = walk_row<T, 1>(r.init(), j0, j1, tid, read, fold, r);
    }
    a = block_tree(r, s, a, tid, T);
    if (tid == 0) {
      if (splits == 1) r.store(o, a);
      else partial[o * splits + blockIdx.y] = a;
    }
  }
}

// inner > 1: a block of 32 x 8 threads takes 32 * V neighbouring columns of one o,
// V adjacent columns a thread (one 16-byte load of V elements for a VectorRows reducer
// on aligned columns, else V == 1): a warp reads 32 * V * sizeof(E) contiguous bytes a
// row. The 8 rows of threads split n, four accumulators each as in the rows kernel,
// then meet in shared memory in a fixed order.
template <class R, int V>
__global__ void __launch_bounds__(kReduceThreads) reduce_cols_kernel(R r, int64_t outer, int64_t n, int64_t inner,
                                                                     int splits, typename R::Acc* partial) {
  using Acc = typename R::Acc;
  __shared__ Acc s[8][32 * V];
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int64_t i0 = (int64_t(blockIdx.x) * 32 + tx) * V;  // this thread's first column
  const int64_t chunk = split_chunk(n, splits);
  const int64_t j0 = int64_t(blockIdx.z) * chunk, j1 = j0 + chunk < n ? j0 + chunk : n;
  // acc[k] += the V columns of row j (element e of column i0)
  auto fold = [&](Acc* acc, int64_t e, int64_t j) {
    if constexpr (V == 1) {
      acc[0] = r.combine(acc[0], r.load(e, j));
    } else {
      using E = std::remove_cvref_t<decltype(r.x[0])>;
      const EwVec<E, V> v = *reinterpret_cast<const EwVec<E, V>*>(r.x + e);
#pragma unroll
      for (int k = 0; k < V; ++k) acc[k] = r.combine(acc[k], r.lift(v.v[k], e + k, j));
    }
  };
  for (int64_t o = blockIdx.y; o < outer; o += gridDim.y) {
    Acc a[4][V];
#pragma unroll
    for (int c = 0; c < 4; ++c)
#pragma unroll
      for (int k = 0; k < V; ++k) a[c][k] = r.init();
    if (i0 < inner) {
      int64_t j = j0 + ty;
      for (; j + 24 < j1; j += 32) {
        fold(a[0], (o * n + j) * inner + i0, j), fold(a[1], (o * n + j + 8) * inner + i0, j + 8);
        fold(a[2], (o * n + j + 16) * inner + i0, j + 16), fold(a[3], (o * n + j + 24) * inner + i0, j + 24);
      }
      for (; j < j1; j += 8) fold(a[0], (o * n + j) * inner + i0, j);
    }
#pragma unroll
    for (int k = 0; k < V; ++k) s[ty][tx * V + k] = r.combine(r.combine(a[0][k], a[1][k]), r.combine(a[2][k], a[3][k]));
    __syncthreads();
    for (int stride = 4; stride > 0; stride /= 2) {
      if (ty < stride)
#pragma unroll
        for (int k = 0; k < V; ++k) s[ty][tx * V + k] = r.combine(s[ty][tx * V + k], s[ty + stride][tx * V + k]);
      __syncthreads();
    }
    if (ty == 0 && i0 < inner) {
#pragma unroll
      for (int k = 0; k < V; ++k) {
        const int64_t out = o * inner + i0 + k;
        if (splits == 1) r.store(out, s[0][tx * V + k]);
        else partial[out * splits + blockIdx.z] = s[0][tx * V + k];
      }
    }
    __syncthreads();
  }
}

// The second pass of split reductions, in a fixed order either way: few splits, one
// thread per output combines them in turn; many (a full reduction), one block per
// output, thread t combining splits t, t + 256, ... before the block's tree (a single
// thread walking 528 partials was a fifth of a full sum's time).
template <class R>
__global__ void reduce_partials_serial_kernel(R r, int64_t outputs, int splits, const typename R::Acc* partial) {
  for (int64_t out = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; out < outputs;
       out += int64_t(gridDim.x) * blockDim.x) {
    typename R::Acc a = partial[out * splits];
    for (int k = 1; k < splits; ++k) a = r.combine(a, partial[out * splits + k]);
    r.store(out, a);
  }
}
template <class R>
__global__ void __launch_bounds__(kReduceThreads) reduce_partials_tree_kernel(R r, int64_t outputs, int splits,
                                                                              const typename R::Acc* partial) {
  using Acc = typename R::Acc;
  __shared__ Acc s[kReduceThreads];
  const int tid = threadIdx.x;
  for (int64_t out = blockIdx.x; out < outputs; out += gridDim.x) {
    Acc a = r.init();
    for (int k = tid; k < splits; k += kReduceThreads) a = r.combine(a, partial[out * splits + k]);
    a = block_tree(r, s, a, tid, kReduceThreads);
    if (tid == 0) r.store(out, a);
  }
}

// The columns a thread of reduce_cols_kernel takes at most: up to 16 bytes, at most 4,
// and only for accumulators of up to 8 bytes (a thread keeps 4 x V of them: argmax's
// 16-byte {value, index} pairs at V = 4 took 1.5x the time of V = 1 on the H200).
template <class R>
constexpr int cols_max_width() {
  if constexpr (VectorRows<R> && sizeof(typename R::Acc) <= 8) {
    using E = std::remove_cvref_t<decltype(std::declval<R>().x[0])>;
    return std::min(ew_vec_width<E>(), 4);
  } else {
    return 1;
  }
}

// ... and for this block: the most when every row of columns starts aligned for it.
template <class R>
int cols_vector_width(const R& r, int64_t inner) {
  constexpr int V = cols_max_width<R>();
  if constexpr (V > 1) {
    if (inner % V == 0 && reinterpret_cast<uintptr_t>(r.x) % (sizeof(r.x[0]) * V) == 0) return V;
  }
  return 1;
}

template <class R>
void launch_reduce_cols(const R& r, int64_t outer, int64_t n, int64_t inner, int splits, int vec,
                        typename R::Acc* partial, cudaStream_t stream) {
  const dim3 grid(unsigned((inner / vec + 31) / 32), unsigned(std::min<int64_t>(outer, 65535)), unsigned(splits));
  constexpr int V = cols_max_width<R>();
  if (V > 1 && vec == V) reduce_cols_kernel<R, V><<<grid, dim3(32, 8), 0, stream>>>(r, outer, n, inner, splits, partial);
  else reduce_cols_kernel<R, 1><<<grid, dim3(32, 8), 0, stream>>>(r, outer, n, inner, splits, partial);
}

// Runs r over the block on `device`'s stream.
template <class R>
void reduce_block(const R& r, int64_t outer, int64_t n, int64_t inner, int device) {
  using Acc = typename R::Acc;
  const int64_t outputs = outer * inner;
  if (outputs == 0) return;
  DeviceGuard guard(device);
  cudaStream_t stream = cuda::stream(device);
  const int vec = inner > 1 ? cols_vector_width(r, inner) : 1;
  const int64_t blocks = inner > 1 ? (inner / vec + 31) / 32 * outer : outer;
  const int64_t splits = reduce_splits(blocks, n, inner > 1);
  TensorPtr scratch;
  Acc* partial = nullptr;
  if (splits > 1) {
    scratch = TensorImpl::empty({int64_t(outputs * splits * int64_t(sizeof(Acc)))}, Dtype::U8, Device::gpu(device));
    partial = reinterpret_cast<Acc*>(scratch->data_ptr());
  }
  const int s = int(splits);
  if (inner == 1) {
    dim3 grid(unsigned(std::min<int64_t>(outer, 65535)), unsigned(s));
    reduce_rows_kernel<R><<<grid, kReduceThreads, 0, stream>>>(r, outer, n, s, partial);
  } else {
    launch_reduce_cols(r, outer, n, inner, s, vec, partial, stream);
  }
  LUCID_CUDA_CHECK(cudaGetLastError());
  if (splits > 1) {
    if (splits > 32) {
      reduce_partials_tree_kernel<R><<<unsigned(std::min<int64_t>(outputs, 65535)), kReduceThreads, 0, stream>>>(
          r, outputs, s, partial);
    } else {
      const unsigned grid = unsigned(std::min<int64_t>((outputs + 255) / 256, 65535));
      reduce_partials_serial_kernel<R><<<grid, 256, 0, stream>>>(r, outputs, s, partial);
    }
    LUCID_CUDA_CHECK(cudaGetLastError());
  }
  // scratch goes back to the caching allocator now: stream order keeps it alive for
  // the kernels queued above (one stream per device).
}

#endif  // __CUDACC__

}  // namespace lucid::cuda
