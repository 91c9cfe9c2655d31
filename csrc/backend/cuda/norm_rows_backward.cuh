// dx of layer_norm / rms_norm over rows (NormRowsBackward, ops/prims/seq.h) as a
// template over where dx goes, one text for nvcc (norm_rows.cu: a plain store) and for
// NVRTC (fused_rows.cpp: a store that runs the chain taking dx; Note [Fused norm rows]),
// embedded for NVRTC with norm_rows_forward.cuh (backend/cuda/CMakeLists.txt).
//
// dx = rstd * (g w - mean(g w) - xhat * mean(g w xhat)) per row (rms: no mean(g w)).
// One group of threads a row as in the forward; each thread keeps its share of the
// row's g and x (element lane + k * kThreads, k < kCached) in registers, loaded once
// (Note [Rows in registers]), and a row longer than kThreads * kCached reads the rest
// again at each of the two passes.
#pragma once

#include "backend/cuda/norm_group_sum.cuh"
#include "backend/cuda/norm_rows_forward.cuh"

namespace lucid::cuda {

#if defined(__CUDACC__)

template <typename T>
struct NormRowsBackwardArgs {
  const T *g, *x, *w, *mean, *rstd;  // w and mean may be null
  long long rows, n;
  bool rms;
};

// This lane's share of N rows of n elements: the first kCached elements of the share
// (i = lane + k * kThreads) into registers.
template <int kThreads, int kCached, int N, typename T>
__device__ __forceinline__ void load_share(T (&cache)[N][kCached], const T* const (&rows)[N], int lane, long long n) {
#pragma unroll
  for (int k = 0; k < kCached; ++k) {
    const long long i = lane + (long long)k * kThreads;
#pragma unroll
    for (int j = 0; j < N; ++j) cache[j][k] = i < n ? rows[j][i] : T(0);
  }
}

// f(i, v) for each element i of this lane's share, in order, v[j] being rows[j][i]:
// from the registers, then (a row longer than kThreads * kCached) from memory.
template <int kThreads, int kCached, int N, typename T, typename F>
__device__ __forceinline__ void for_share(const T (&cache)[N][kCached], const T* const (&rows)[N], int lane,
                                          long long n, F f) {
  T v[N];
#pragma unroll
  for (int k = 0; k < kCached; ++k) {
    const long long i = lane + (long long)k * kThreads;
    if (i < n) {
#pragma unroll
      for (int j = 0; j < N; ++j) v[j] = cache[j][k];
      f(i, v);
    }
  }
  for (long long i = lane + (long long)kCached * kThreads; i < n; i += kThreads) {
#pragma unroll
    for (int j = 0; j < N; ++j) v[j] = rows[j][i];
    f(i, v);
  }
}

// Rows of a.n elements, kThreads threads a row, blocks of kNormRowBlock threads. Io,
// for element i of row r: `DxIn load_dx(r, i) const` reads what storing dx needs
// besides it, and `void store_dx(r, i, T dx, const DxIn&) const` stores it.
template <typename T, int kThreads, int kCached, class Io>
__device__ __forceinline__ void norm_rows_backward(const Io& io, const NormRowsBackwardArgs<T>& a) {
  constexpr int kRowsPerBlock = kNormRowBlock / kThreads;
  __shared__ double scratch[kThreads / 32 * 2];
  const int lane = int(threadIdx.x) % kThreads;
  const long long n = a.n;
  for (long long r = (long long)blockIdx.x * kRowsPerBlock + threadIdx.x / kThreads; r < a.rows;
       r += (long long)gridDim.x * kRowsPerBlock) {
    const T* const gx[2] = {a.g + r * n, a.x + r * n};
    T cache[2][kCached];
    load_share<kThreads>(cache, gx, lane, n);
    const T m = a.mean ? a.mean[r] : T(0), rs = a.rstd[r];
    double s[2] = {0.0, 0.0};
    for_share<kThreads>(cache, gx, lane, n, [&](long long i, const T (&v)[2]) {
      const T gi = a.w ? v[0] * a.w[i] : v[0];
      s[0] += double(gi);
      s[1] += double(gi * (v[1] - m) * rs);
    });
    group_sum<kThreads>(s, scratch);
    const T am = a.rms ? T(0) : T(s[0] / double(n)), bm = T(s[1] / double(n));
    for_share<kThreads>(cache, gx, lane, n, [&](long long i, const T (&v)[2]) {
      const T gi = a.w ? v[0] * a.w[i] : v[0];
      const T xh = (v[1] - m) * rs;
      io.store_dx(r, i, rs * (gi - am - xh * bm), io.load_dx(r, i));
    });
  }
}

#endif  // __CUDACC__

}  // namespace lucid::cuda
