// CUDA kernels of layer_norm / rms_norm over rows of n contiguous elements (NormRows,
// NormRowsBackward in ops/prims/seq.h), float32 or float64. The CPU kernel
// (backend/cpu/seq_kernels.cpp) is the specification: the mean and 1/std kept per
// row in T, the row centred on the rounded mean before squaring.
//
// One group of threads per row: a warp for rows of up to kWarpRowsUpTo elements (8
// rows a block), the whole block of 256 beyond. The group's threads stride the row,
// sum in double, and meet in a deterministic group sum (Note [Deterministic group
// sums]). The forward makes three passes over a row (mean, variance, result) and the
// backward two; the row is read from memory once (Note [Rows in registers]). The
// backward's dx is the same per-row structure; d weight and d bias are sums over the
// rows, a column reduction on the engine of reduce.cuh (deterministic, no atomics).
//
// Note [Rows in registers]
// The passes used to read the row again from L1/L2. With 8 rows of 1024 floats a block
// and 8 blocks an SM, the rows the resident blocks read (256 KB an SM, and two arrays
// in the backward) outgrow L1 and, over the GPU, the 50 MB L2, so the later passes went
// back to memory: the backward of layer_norm over [16384, 1024] float32 took 138 us on
// an H100 where one read of g and x and one write of dx take about 65 us.
// - The backward keeps each thread's share of the row (element lane + k * threads for
//   k < kCached) in registers, loaded once, coalesced as before; a row longer than
//   threads * kCached reads its remainder at each pass. 57 us on an H200.
// - The forward did the same at first and got slower (91 us against torch's 55, H200):
//   ptxas gave it 176 registers for 32 cached floats (as many without the affine
//   loads), so one block an SM and too few rows in flight. It
//   stages the row in shared memory instead (40 registers, 7 blocks an SM): each thread
//   reads back only what it wrote, so no barrier.
// The sums run over each thread's elements in the same order as before, so the results
// are the same bits.
#include <algorithm>
#include <cmath>
#include <cstdint>

#include "backend/cuda/norm.h"
#include "backend/cuda/norm_group_sum.cuh"
#include "backend/cuda/reduce.cuh"
#include "backend/cuda/tensor_data.h"
#include "ops/prims/seq.h"

namespace lucid::cuda {

namespace {

using ops::Inputs;
using ops::Outputs;

constexpr int kRowBlock = 256;
constexpr int64_t kWarpRowsUpTo = 1024;

template <typename T>
struct RowsForward {
  const T *x, *w, *b;
  T *y, *mean, *rstd;
  int64_t rows, n;
  double eps;
  bool rms;
};

// This lane's share of N rows of n elements: the first kCached elements of the share
// (i = lane + k * kThreads) into registers (Note [Rows in registers]).
template <int kThreads, int kCached, int N, typename T>
__device__ __forceinline__ void load_share(T (&cache)[N][kCached], const T* const (&rows)[N], int lane, int64_t n) {
#pragma unroll
  for (int k = 0; k < kCached; ++k) {
    const int64_t i = lane + int64_t(k) * kThreads;
#pragma unroll
    for (int j = 0; j < N; ++j) cache[j][k] = i < n ? rows[j][i] : T(0);
  }
}

// f(i, v) for each element i of this lane's share, in order, v[j] being rows[j][i]:
// from the registers, then (a row longer than kThreads * kCached) from memory.
template <int kThreads, int kCached, int N, typename T, typename F>
__device__ __forceinline__ void for_share(const T (&cache)[N][kCached], const T* const (&rows)[N], int lane, int64_t n,
                                          F f) {
  T v[N];
#pragma unroll
  for (int k = 0; k < kCached; ++k) {
    const int64_t i = lane + int64_t(k) * kThreads;
    if (i < n) {
#pragma unroll
      for (int j = 0; j < N; ++j) v[j] = cache[j][k];
      f(i, v);
    }
  }
  for (int64_t i = lane + int64_t(kCached) * kThreads; i < n; i += kThreads) {
#pragma unroll
    for (int j = 0; j < N; ++j) v[j] = rows[j][i];
    f(i, v);
  }
}

// kThreads threads per row (32: a warp; kRowBlock: the block). kStaged: the row is
// copied into shared memory as it is read, and the later passes read it there (Note
// [Rows in registers]); each thread reads back only the elements it wrote, so no
// barrier is needed.
template <typename T, int kThreads, bool kStaged>
__global__ void __launch_bounds__(kRowBlock) norm_rows_forward_dev(RowsForward<T> a) {
  constexpr int kRowsPerBlock = kRowBlock / kThreads;
  __shared__ double scratch[kThreads / 32];
  extern __shared__ __align__(16) unsigned char staging[];
  const int lane = int(threadIdx.x) % kThreads;
  const int64_t n = a.n;
  T* staged = reinterpret_cast<T*>(staging) + int64_t(threadIdx.x / kThreads) * n;
  for (int64_t r = int64_t(blockIdx.x) * kRowsPerBlock + threadIdx.x / kThreads; r < a.rows;
       r += int64_t(gridDim.x) * kRowsPerBlock) {
    const T* xr = a.x + r * n;
    if constexpr (kStaged) {
#pragma unroll 8
      for (int64_t i = lane; i < n; i += kThreads) staged[i] = xr[i];
      xr = staged;
    }
    T mt = 0;
    if (!a.rms) {
      double s[1] = {0.0};
      for (int64_t i = lane; i < n; i += kThreads) s[0] += double(xr[i]);
      group_sum<kThreads>(s, scratch);
      mt = T(s[0] / double(n));
    }
    double ss[1] = {0.0};
    for (int64_t i = lane; i < n; i += kThreads) {
      const T d = xr[i] - mt;
      ss[0] += double(d * d);
    }
    group_sum<kThreads>(ss, scratch);
    const T rs = T(1.0 / sqrt(ss[0] / double(n) + a.eps));
    if (lane == 0) {
      if (a.mean) a.mean[r] = mt;
      a.rstd[r] = rs;
    }
    T* yr = a.y + r * n;
    for (int64_t i = lane; i < n; i += kThreads) {
      T v = (xr[i] - mt) * rs;
      if (a.w) v = v * a.w[i];
      if (a.b) v = v + a.b[i];
      yr[i] = v;
    }
  }
}

template <typename T>
struct RowsBackward {
  const T *g, *x, *w, *mean, *rstd;
  T* dx;
  int64_t rows, n;
  bool rms;
};

// dx = rstd * (g w - mean(g w) - xhat * mean(g w xhat)) per row (rms: no mean(g w)).
template <typename T, int kThreads, int kCached>
__global__ void __launch_bounds__(kRowBlock) norm_rows_backward_dev(RowsBackward<T> a) {
  constexpr int kRowsPerBlock = kRowBlock / kThreads;
  __shared__ double scratch[kThreads / 32 * 2];
  const int lane = int(threadIdx.x) % kThreads;
  const int64_t n = a.n;
  for (int64_t r = int64_t(blockIdx.x) * kRowsPerBlock + threadIdx.x / kThreads; r < a.rows;
       r += int64_t(gridDim.x) * kRowsPerBlock) {
    const T* const gx[2] = {a.g + r * n, a.x + r * n};
    T cache[2][kCached];
    load_share<kThreads>(cache, gx, lane, n);
    const T m = a.mean ? a.mean[r] : T(0), rs = a.rstd[r];
    double s[2] = {0.0, 0.0};
    for_share<kThreads>(cache, gx, lane, n, [&](int64_t i, const T (&v)[2]) {
      const T gi = a.w ? v[0] * a.w[i] : v[0];
      s[0] += double(gi);
      s[1] += double(gi * (v[1] - m) * rs);
    });
    group_sum<kThreads>(s, scratch);
    const T am = a.rms ? T(0) : T(s[0] / double(n)), bm = T(s[1] / double(n));
    T* dxr = a.dx + r * n;
    for_share<kThreads>(cache, gx, lane, n, [&](int64_t i, const T (&v)[2]) {
      const T gi = a.w ? v[0] * a.w[i] : v[0];
      const T xh = (v[1] - m) * rs;
      dxr[i] = rs * (gi - am - xh * bm);
    });
  }
}

struct SumPair {
  double dw, db;
};

// d weight[i] = sum_r g[r, i] xhat[r, i], d bias[i] = sum_r g[r, i]: the columns of
// [rows, n] (the engine's load gets element e of row j).
template <typename T>
struct AffineGradReducer {
  using Acc = SumPair;
  const T *g, *x, *mean, *rstd;
  T *dw, *db;
  __device__ Acc init() const { return {0.0, 0.0}; }
  __device__ Acc load(int64_t e, int64_t j) const {
    const T m = mean ? mean[j] : T(0);
    return {double(g[e] * (x[e] - m) * rstd[j]), double(g[e])};
  }
  __device__ Acc combine(Acc a, Acc b) const { return {a.dw + b.dw, a.db + b.db}; }
  __device__ void store(int64_t i, Acc a) const {
    if (dw) dw[i] = T(a.dw);
    if (db) db[i] = T(a.db);
  }
};

// Launch<T, threads per row>::run over the rows on the stream of `device`.
template <template <typename, int> class Launch, typename T, typename Args>
void launch_rows(const Args& args, int64_t rows, int64_t n, int device) {
  if (rows == 0 || n == 0) return;
  DeviceGuard guard(device);
  cudaStream_t s = stream(device);
  const int64_t per_block = n <= kWarpRowsUpTo ? kRowBlock / 32 : 1;
  const unsigned grid = unsigned(std::min<int64_t>((rows + per_block - 1) / per_block, int64_t(1) << 20));
  if (n <= kWarpRowsUpTo) Launch<T, 32>::run(args, grid, s, n);
  else Launch<T, kRowBlock>::run(args, grid, s, n);
  LUCID_CUDA_CHECK(cudaGetLastError());
}

// The forward stages its rows in shared memory where a block's rows fit in the 48 KB a
// block may take without opting in (rows of up to 1024 floats a warp, 12288 a block);
// longer rows are read again at each pass.
constexpr int64_t kStagingBytes = 48 << 10;

template <typename T, int kThreads>
struct ForwardLaunch {
  static void run(const RowsForward<T>& a, unsigned grid, cudaStream_t s, int64_t n) {
    const int64_t bytes = kRowBlock / kThreads * n * int64_t(sizeof(T));
    if (bytes <= kStagingBytes) {
      // as much shared memory as the SM has, not L1: the passes read the staged rows
      static const cudaError_t set = cudaFuncSetAttribute(
          norm_rows_forward_dev<T, kThreads, true>, cudaFuncAttributePreferredSharedMemoryCarveout,
          int(cudaSharedmemCarveoutMaxShared));
      LUCID_CUDA_CHECK(set);
      norm_rows_forward_dev<T, kThreads, true><<<grid, kRowBlock, size_t(bytes), s>>>(a);
    } else {
      norm_rows_forward_dev<T, kThreads, false><<<grid, kRowBlock, 0, s>>>(a);
    }
  }
};

// The backward keeps kCached elements of each thread's share in registers: 8 where the
// share is no longer (and for double, whose 32 would take 64 registers an array), 32
// otherwise.
template <typename T, int kThreads>
struct BackwardLaunch {
  static void run(const RowsBackward<T>& a, unsigned grid, cudaStream_t s, int64_t n) {
    constexpr int kMost = sizeof(T) == 8 ? 8 : 32;
    if ((n + kThreads - 1) / kThreads <= 8) norm_rows_backward_dev<T, kThreads, 8><<<grid, kRowBlock, 0, s>>>(a);
    else norm_rows_backward_dev<T, kThreads, kMost><<<grid, kRowBlock, 0, s>>>(a);
  }
};

}  // namespace

void norm_rows_kernel(const ops::Primitive& prim, Outputs outs, Inputs ins) {
  const auto& p = ops::prim_cast<ops::NormRows>(prim);
  const auto t = p.tensors(outs, ins);
  const int64_t rows = p.rows(ins);
  visit_float32_or_64(t.x->dtype(), [&](auto z) {
    using T = decltype(z);
    const RowsForward<T> a{cdata<T>(t.x), cdata<T>(t.weight), cdata<T>(t.bias), mdata<T>(t.y), mdata<T>(t.mean),
                           mdata<T>(t.rstd), rows, p.n, p.eps, p.rms};
    launch_rows<ForwardLaunch, T>(a, rows, p.n, t.y->device().index);
  });
}

void norm_rows_backward_kernel(const ops::Primitive& prim, Outputs outs, Inputs ins) {
  const auto& p = ops::prim_cast<ops::NormRowsBackward>(prim);
  const auto t = p.tensors(outs, ins);
  const int64_t rows = p.rows(ins);
  const int device = t.dx->device().index;
  visit_float32_or_64(t.x->dtype(), [&](auto z) {
    using T = decltype(z);
    const RowsBackward<T> a{cdata<T>(t.dy), cdata<T>(t.x), cdata<T>(t.weight), cdata<T>(t.mean), cdata<T>(t.rstd),
                            mdata<T>(t.dx), rows, p.n, p.rms};
    launch_rows<BackwardLaunch, T>(a, rows, p.n, device);
    if (t.dweight || t.dbias) {
      const AffineGradReducer<T> r{cdata<T>(t.dy), cdata<T>(t.x), cdata<T>(t.mean), cdata<T>(t.rstd),
                                   mdata<T>(t.dweight), mdata<T>(t.dbias)};
      reduce_block(r, 1, rows, p.n, device);
    }
  });
}

}  // namespace lucid::cuda
