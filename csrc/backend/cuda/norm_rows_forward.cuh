// The forward of layer_norm / rms_norm over rows (NormRows, ops/prims/seq.h) as a
// template over where a row's elements come from and where its results go, so that one
// text serves two compilers (Note [Fused norm rows], ops/fusion_rows.cpp):
//  - nvcc builds the unfused kernel from it with plain loads and stores (norm_rows.cu);
//  - NVRTC builds a fused kernel from it (fused_rows.cpp), whose loads run the
//    elementwise chain that computes the norm's input and whose stores run the chain
//    that takes its result. The build embeds this file's text, and the group sums', in
//    a generated header (backend/cuda/CMakeLists.txt): without their #include lines, so
//    this file includes nothing NVRTC lacks and uses no <cstdint> types.
// The arithmetic is the same text in both, compiled without contraction in both
// (--fmad=false), so fused results are the unfused ones bit for bit.
//
// One group of threads per row: a warp for rows of up to kNormWarpRowsUpTo elements (8
// rows a block), the whole block of kNormRowBlock beyond. The group's threads stride the
// row, sum in double and meet in a deterministic group sum (Note [Deterministic group
// sums]). Three passes over a row: mean, variance, result. With kStaged, the first
// reads the row through the loader into shared memory and the later ones read it there
// (Note [Rows in registers], norm_rows.cu); each thread reads back only the elements
// it wrote, so no barrier. Without it every pass calls the loader (rows too long to
// stage; the fused kernel, whose loader runs a chain, is only made for staged rows).
#pragma once

#include "backend/cuda/norm_group_sum.cuh"

namespace lucid::cuda {

// (Also seen by the host code that launches the kernels, backend/cuda/norm.h.)
constexpr int kNormRowBlock = 256;
constexpr long long kNormWarpRowsUpTo = 1024;

#if defined(__CUDACC__)

// What the three passes need besides the row's elements; w and b may be null, and mean
// is null for rms_norm (whose mean is not subtracted).
template <typename T>
struct NormRowsArgs {
  const T *w, *b;
  T *mean, *rstd;
  long long rows, n;
  double eps;
  bool rms;
};

// Rows of a.n elements, kThreads threads a row (32 or kNormRowBlock), run by blocks of
// kNormRowBlock threads. Io: `T load(long long r, long long i) const` gives element i of
// row r of x; `void store(long long r, long long i, T y) const` takes the result's.
template <typename T, int kThreads, bool kStaged, class Io>
__device__ __forceinline__ void norm_rows_forward(const Io& io, const NormRowsArgs<T>& a) {
  constexpr int kRowsPerBlock = kNormRowBlock / kThreads;
  __shared__ double scratch[kThreads / 32];
  extern __shared__ __align__(16) unsigned char norm_staging[];
  const int lane = int(threadIdx.x) % kThreads;
  const long long n = a.n;
  T* staged = reinterpret_cast<T*>(norm_staging) + (long long)(threadIdx.x / kThreads) * n;
  for (long long r = (long long)blockIdx.x * kRowsPerBlock + threadIdx.x / kThreads; r < a.rows;
       r += (long long)gridDim.x * kRowsPerBlock) {
    if constexpr (kStaged) {
#pragma unroll 8
      for (long long i = lane; i < n; i += kThreads) staged[i] = io.load(r, i);
    }
    auto x = [&](long long i) -> T {
      if constexpr (kStaged) return staged[i];
      else return io.load(r, i);
    };
    T mt = 0;
    if (!a.rms) {
      double s[1] = {0.0};
      for (long long i = lane; i < n; i += kThreads) s[0] += double(x(i));
      group_sum<kThreads>(s, scratch);
      mt = T(s[0] / double(n));
    }
    double ss[1] = {0.0};
    for (long long i = lane; i < n; i += kThreads) {
      const T d = x(i) - mt;
      ss[0] += double(d * d);
    }
    group_sum<kThreads>(ss, scratch);
    const T rs = T(1.0 / sqrt(ss[0] / double(n) + a.eps));
    if (lane == 0) {
      if (a.mean) a.mean[r] = mt;
      a.rstd[r] = rs;
    }
    for (long long i = lane; i < n; i += kThreads) {
      T v = (x(i) - mt) * rs;
      if (a.w) v = v * a.w[i];
      if (a.b) v = v + a.b[i];
      io.store(r, i, v);
    }
  }
}

#endif  // __CUDACC__

}  // namespace lucid::cuda
