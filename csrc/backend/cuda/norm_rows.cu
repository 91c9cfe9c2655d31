// CUDA kernels of layer_norm / rms_norm over rows of n contiguous elements (NormRows,
// NormRowsBackward in ops/prims/seq.h), float32 or float64. The CPU kernel
// (backend/cpu/seq_kernels.cpp) is the specification: the mean and 1/std kept per
// row in T, the row centred on the rounded mean before squaring.
//
// One group of threads per row: a warp for rows of up to kWarpRowsUpTo elements (8
// rows a block), the whole block of 256 beyond. The group's threads stride the row,
// sum in double, and meet in a deterministic group sum (Note [Deterministic group
// sums]); the row's later passes read it again, from L1/L2. The backward's dx is the
// same per-row structure; d weight and d bias are sums over the rows, a column
// reduction on the engine of reduce.cuh (deterministic, no atomics).
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

// kThreads threads per row (32: a warp; kRowBlock: the block).
template <typename T, int kThreads>
__global__ void __launch_bounds__(kRowBlock) norm_rows_forward_dev(RowsForward<T> a) {
  constexpr int kRowsPerBlock = kRowBlock / kThreads;
  __shared__ double scratch[kThreads / 32];
  const int lane = int(threadIdx.x) % kThreads;
  const int64_t n = a.n;
  for (int64_t r = int64_t(blockIdx.x) * kRowsPerBlock + threadIdx.x / kThreads; r < a.rows;
       r += int64_t(gridDim.x) * kRowsPerBlock) {
    const T* xr = a.x + r * n;
    T* yr = a.y + r * n;
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
template <typename T, int kThreads>
__global__ void __launch_bounds__(kRowBlock) norm_rows_backward_dev(RowsBackward<T> a) {
  constexpr int kRowsPerBlock = kRowBlock / kThreads;
  __shared__ double scratch[kThreads / 32 * 2];
  const int lane = int(threadIdx.x) % kThreads;
  const int64_t n = a.n;
  for (int64_t r = int64_t(blockIdx.x) * kRowsPerBlock + threadIdx.x / kThreads; r < a.rows;
       r += int64_t(gridDim.x) * kRowsPerBlock) {
    const T* xr = a.x + r * n;
    const T* gr = a.g + r * n;
    const T m = a.mean ? a.mean[r] : T(0), rs = a.rstd[r];
    double s[2] = {0.0, 0.0};
    for (int64_t i = lane; i < n; i += kThreads) {
      const T gi = a.w ? gr[i] * a.w[i] : gr[i];
      s[0] += double(gi);
      s[1] += double(gi * (xr[i] - m) * rs);
    }
    group_sum<kThreads>(s, scratch);
    const T am = a.rms ? T(0) : T(s[0] / double(n)), bm = T(s[1] / double(n));
    T* dxr = a.dx + r * n;
    for (int64_t i = lane; i < n; i += kThreads) {
      const T gi = a.w ? gr[i] * a.w[i] : gr[i];
      const T xh = (xr[i] - m) * rs;
      dxr[i] = rs * (gi - am - xh * bm);
    }
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

// kernel<T, threads per row> over the rows on the stream of `device`.
template <template <typename, int> class Launch, typename T, typename Args>
void launch_rows(const Args& args, int64_t rows, int64_t n, int device) {
  if (rows == 0 || n == 0) return;
  DeviceGuard guard(device);
  cudaStream_t s = stream(device);
  const int64_t per_block = n <= kWarpRowsUpTo ? kRowBlock / 32 : 1;
  const unsigned grid = unsigned(std::min<int64_t>((rows + per_block - 1) / per_block, int64_t(1) << 20));
  if (n <= kWarpRowsUpTo) Launch<T, 32>::run(args, grid, s);
  else Launch<T, kRowBlock>::run(args, grid, s);
  LUCID_CUDA_CHECK(cudaGetLastError());
}

template <typename T, int kThreads>
struct ForwardLaunch {
  static void run(const RowsForward<T>& a, unsigned grid, cudaStream_t s) {
    norm_rows_forward_dev<T, kThreads><<<grid, kRowBlock, 0, s>>>(a);
  }
};
template <typename T, int kThreads>
struct BackwardLaunch {
  static void run(const RowsBackward<T>& a, unsigned grid, cudaStream_t s) {
    norm_rows_backward_dev<T, kThreads><<<grid, kRowBlock, 0, s>>>(a);
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
