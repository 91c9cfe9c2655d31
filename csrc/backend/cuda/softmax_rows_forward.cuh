// softmax / log_softmax over rows (SoftmaxDim with inner == 1, ops/prims/reduce.h) as a
// template over where a row's elements come from and where its results go, one text
// for nvcc (softmax_rows.cu: plain loads and stores, the unfused kernel) and for NVRTC
// (fused_rows.cpp: loads that run the chain computing the softmax's input, stores that
// run the chain taking its result; Note [Fused norm rows]). It takes the norm forward's
// Io and row helpers (norm_rows_forward.cuh) and is embedded with them.
//
// Three passes over a row, as the CPU's kernel: the maximum m (a NaN wins), the sum of
// exp(x - m) in double, then exp(x - m) / sum, or x - m - log(sum); elements in T
// (float32 for float32 and the 16-bit floats, which the Io reads and writes as they
// are; float64 for float64).
//
// Note [Softmax rows]
// The first version took the norm's layout and arithmetic shape (the maximum summed in
// double, exp computed twice) and ran at half torch's speed over [4096, 4096] float32
// on an H100 (107 us against 62; the old kernel, a block a row reading the row three
// times, had run at 0.89x torch's time on an H200): 70 registers for 16 kept floats,
// three blocks an SM, 35% of the memory's bandwidth. Measured there, one run each:
// staging the row in shared memory (44 registers) took 64 us, 64 registers by launch
// bounds 87, 512 threads a row 89, 1024 threads 138. So rows over 2048 elements are
// staged (softmax_forward_layout, norm.h); the maximum is taken in T (exact), and the
// second pass keeps exp(x - m) where x was, so the third multiplies instead of
// computing exp again: 57 us against torch's 61 (0.93x).
// Rows of 1024 took 62-70 us against torch's 50 over [16384, 1024] float32 (H100) in
// the norm's layout, 128 threads a row keeping 8 floats each. Other layouts of the same
// template, timed alone (benchmarks/profiles/rows_layouts.cu, H100, one run; torch
// 49.5 us): 256 threads keeping 4, 52.0 us (32 registers, 8 blocks an SM); 128 x 8,
// 62.3; 64 x 16, 76.4; a warp a row keeping 32 floats a lane (torch's layout, whose sums
// are float), 142 us with 112 registers (2 blocks of 8 rows an SM) and 103 us when held
// to 64 registers (spilling 104 bytes). So rows of 513 to 1024 take 256 x 4
// (softmax_forward_layout). The norms keep 128 x 8 there: layer_norm's extra passes and
// affine loads took 50 registers in 256 x 4 (4 blocks an SM, 75.8 us against 58.7).
#pragma once

#include "backend/cuda/norm_group_sum.cuh"
#include "backend/cuda/norm_rows_forward.cuh"

namespace lucid::cuda {

#if defined(__CUDACC__)

template <typename T>
__device__ __forceinline__ T softmax_max(T a, T b) {  // a NaN wins
  return (a != a || a > b) ? a : b;
}

template <typename T, int kThreads, int kKept, class Io>
__device__ __forceinline__ void softmax_rows_forward(const Io& io, long long rows, long long n, bool log) {
  constexpr int kRowsPerBlock = kThreads == 32 ? kNormRowBlock / 32 : 1;  // (norm_forward_block, norm.h)
  __shared__ double scratch[kThreads / 32];
  extern __shared__ __align__(16) unsigned char norm_staging[];
  const int lane = int(threadIdx.x) % kThreads;
  T* const staged = reinterpret_cast<T*>(norm_staging) + (long long)(threadIdx.x / kThreads) * n;
  // softmax keeps exp(x - m) where x was (log_softmax needs x itself), unless rows are
  // read again
  const bool keep_exp = !log && kKept != kNormReread;
  for (long long r = (long long)blockIdx.x * kRowsPerBlock + threadIdx.x / kThreads; r < rows;
       r += (long long)gridDim.x * kRowsPerBlock) {
    T kept[kKept > 0 ? kKept : 1];
    make_row<kThreads, kKept>(io, r, lane, n, kept, staged);
    const RowElement<T, kKept, Io> x{io, r, staged};
    T mine = T(-__longlong_as_double(0x7ff0000000000000ll));  // (-inf: NVRTC has no INFINITY)
    each_element<kThreads, kKept>(kept, x, lane, n, [&](long long, T xi) { mine = softmax_max(mine, xi); });
    double m[1] = {double(mine)};
    group_reduce<kThreads>(m, scratch, MaxOf());
    const T mt = T(m[0]);
    double s[1] = {0.0};
    if constexpr (kKept > 0) {
#pragma unroll
      for (int k = 0; k < kKept; ++k) {
        const long long i = lane + (long long)k * kThreads;
        if (i < n) {
          const T e = exp(kept[k] - mt);
          s[0] += double(e);
          if (keep_exp) kept[k] = e;
        }
      }
    } else {
      for (long long i = lane; i < n; i += kThreads) {
        const T e = exp(x(i) - mt);
        s[0] += double(e);
        if (keep_exp) staged[i] = e;
      }
    }
    group_sum<kThreads>(s, scratch);
    const T lse = T(::log(s[0])), inv = T(1.0 / s[0]);
    write_row<kThreads, kKept>(io, r, lane, n, kept, x, [&](long long i, T v, const typename Io::YIn& in) {
      // (v: exp(x - m) where kept, else x)
      io.store_y(r, i, keep_exp ? v * inv : log ? (v - mt) - lse : exp(v - mt) * inv, in);
    });
  }
}

#endif  // __CUDACC__

}  // namespace lucid::cuda
