// What a softmax over rows of 1024 spends its time on: one kernel written with its
// arithmetic choices as template switches (the sums in double or float, two group
// reductions or one "online" reduction of (max, sum) pairs, a thread's elements strided
// or contiguous in vector loads, exp or a faster exp2), timed alone over [16384, 1024]
// float32 and over attention's bfloat16 scores scaled by 0.125 ([32768, 1024], bf16 in
// and out, the fused kernel's work), next to lucid's template (softmax_rows_forward) in
// the same layout. Standalone, as rows_layouts.cu:
//
//   nvcc -O3 -std=c++20 -arch=sm_90 --fmad=false --expt-relaxed-constexpr -Icsrc \
//        benchmarks/profiles/softmax_variants.cu -o /tmp/sv && /tmp/sv
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "backend/cuda/softmax_rows_forward.cuh"
#include "kernel_timing.cuh"

using namespace lucid::cuda;

template <typename S> __device__ __forceinline__ float to_f(S v) { return float(v); }
template <> __device__ __forceinline__ float to_f(__nv_bfloat16 v) { return __bfloat162float(v); }
template <typename S> __device__ __forceinline__ S from_f(float v) { return S(v); }
template <> __device__ __forceinline__ __nv_bfloat16 from_f(float v) { return __float2bfloat16_rn(v); }

// kKept contiguous elements of S as one load
template <typename S, int kKept> struct alignas(sizeof(S) * kKept) Pack { S v[kKept]; };

template <typename A, int kThreads>
__device__ __forceinline__ A block_sum(A v, A* scratch) {
#pragma unroll
  for (int m = 16; m > 0; m >>= 1) v += __shfl_xor_sync(0xffffffffu, v, m);
  if constexpr (kThreads > 32) {
    if (threadIdx.x % 32 == 0) scratch[threadIdx.x / 32] = v;
    __syncthreads();
    v = scratch[0];
#pragma unroll
    for (int w = 1; w < kThreads / 32; ++w) v += scratch[w];
    __syncthreads();
  }
  return v;
}

__device__ __forceinline__ float fmax_nan(float a, float b) { return (a != a || a > b) ? a : b; }

template <int kThreads>
__device__ __forceinline__ float block_max(float v, float* scratch) {
#pragma unroll
  for (int m = 16; m > 0; m >>= 1) v = fmax_nan(v, __shfl_xor_sync(0xffffffffu, v, m));
  if constexpr (kThreads > 32) {
    if (threadIdx.x % 32 == 0) scratch[threadIdx.x / 32] = v;
    __syncthreads();
    v = scratch[0];
#pragma unroll
    for (int w = 1; w < kThreads / 32; ++w) v = fmax_nan(v, scratch[w]);
    __syncthreads();
  }
  return v;
}

// (m, s) pairs: s a sum of exp(x - m); combined at the larger m
template <typename A>
__device__ __forceinline__ void combine(float& m, A& s, float m2, A s2) {
  const float mx = fmax_nan(m, m2);
  s = (m == mx ? s : s * A(expf(m - mx))) + (m2 == mx ? s2 : s2 * A(expf(m2 - mx)));
  m = mx;
}

template <typename A, int kThreads>
__device__ __forceinline__ void block_pair(float& m, A& s, float* mscratch, A* sscratch) {
#pragma unroll
  for (int d = 16; d > 0; d >>= 1) {
    const float m2 = __shfl_xor_sync(0xffffffffu, m, d);
    const A s2 = __shfl_xor_sync(0xffffffffu, s, d);
    combine(m, s, m2, s2);
  }
  if constexpr (kThreads > 32) {
    if (threadIdx.x % 32 == 0) mscratch[threadIdx.x / 32] = m, sscratch[threadIdx.x / 32] = s;
    __syncthreads();
    m = mscratch[0], s = sscratch[0];
#pragma unroll
    for (int w = 1; w < kThreads / 32; ++w) combine(m, s, mscratch[w], sscratch[w]);
    __syncthreads();
  }
}

template <bool kFast> __device__ __forceinline__ float ex(float v) {
  if constexpr (kFast) return exp2f(v * 1.4426950408889634f);
  else return expf(v);
}

constexpr int block_of(int threads) { return threads == 32 ? 256 : threads; }

template <typename S, typename A, int kThreads, int kKept, bool kOnline, bool kVec, bool kFast>
__global__ void __launch_bounds__(block_of(kThreads)) variant(const S* x, S* y, long long rows, int n, float scale) {
  constexpr int kRowsPerBlock = block_of(kThreads) / kThreads;
  __shared__ A sscratch[kThreads / 32];
  __shared__ float mscratch[kThreads / 32];
  const int lane = int(threadIdx.x) % kThreads;
  for (long long r = (long long)blockIdx.x * kRowsPerBlock + threadIdx.x / kThreads; r < rows;
       r += (long long)gridDim.x * kRowsPerBlock) {
    float v[kKept];
    const S* row = x + r * n;
    if constexpr (kVec) {
      const Pack<S, kKept> p = reinterpret_cast<const Pack<S, kKept>*>(row)[lane];
#pragma unroll
      for (int k = 0; k < kKept; ++k) v[k] = to_f(p.v[k]) * scale;
    } else {
#pragma unroll
      for (int k = 0; k < kKept; ++k) v[k] = to_f(row[lane + k * kThreads]) * scale;
    }
    float m = v[0];
#pragma unroll
    for (int k = 1; k < kKept; ++k) m = fmax_nan(m, v[k]);
    float factor;
    if constexpr (kOnline) {
      A s = 0;
#pragma unroll
      for (int k = 0; k < kKept; ++k) s += A(v[k] = ex<kFast>(v[k] - m));
      const float mine = m;
      block_pair<A, kThreads>(m, s, mscratch, sscratch);
      factor = float(A(ex<kFast>(mine - m)) / s);
    } else {
      m = block_max<kThreads>(m, mscratch);
      A s = 0;
#pragma unroll
      for (int k = 0; k < kKept; ++k) s += A(v[k] = ex<kFast>(v[k] - m));
      s = block_sum<A, kThreads>(s, sscratch);
      factor = float(A(1) / s);
    }
    S* out = y + r * n;
    if constexpr (kVec) {
      Pack<S, kKept> p;
#pragma unroll
      for (int k = 0; k < kKept; ++k) p.v[k] = from_f<S>(v[k] * factor);
      reinterpret_cast<Pack<S, kKept>*>(out)[lane] = p;
    } else {
#pragma unroll
      for (int k = 0; k < kKept; ++k) out[lane + k * kThreads] = from_f<S>(v[k] * factor);
    }
  }
}

// lucid's template, the scale folded into its plain Io's load
template <typename S>
struct ScaledRows {
  struct Nothing {};
  using XIn = float;
  using YIn = Nothing;
  const S* x;
  S* y;
  long long n;
  float scale;
  __device__ __forceinline__ float load_x(long long r, long long i) const { return to_f(x[r * n + i]) * scale; }
  __device__ __forceinline__ float make_x(long long, long long, float v) const { return v; }
  __device__ __forceinline__ YIn load_y(long long, long long) const { return {}; }
  __device__ __forceinline__ void store_y(long long r, long long i, float v, YIn) const { y[r * n + i] = from_f<S>(v); }
};

template <typename S, int kThreads, int kKept>
__global__ void __launch_bounds__(block_of(kThreads)) lucids(ScaledRows<S> io, long long rows) {
  softmax_rows_forward<float, kThreads, kKept>(io, rows, io.n, false);
}

template <typename S>
struct Case {
  long long rows;
  int n;
  float scale;
  S *x, *y;
  std::vector<float> first;

  double diff() {
    std::vector<S> got(size_t(rows * n));
    CHECK(cudaMemcpy(got.data(), y, got.size() * sizeof(S), cudaMemcpyDeviceToHost));
    std::vector<float> f(got.size());
    for (size_t i = 0; i < got.size(); ++i) f[i] = float(got[i]);
    if (first.empty()) first = f;
    double d = 0;
    for (size_t i = 0; i < f.size(); ++i) d = std::max(d, (double)std::fabs(f[i] - first[i]) / (std::fabs(first[i]) + 1e-30));
    CHECK(cudaMemset(y, 0, got.size() * sizeof(S)));
    return d;
  }
  template <typename K, typename... Args>
  void report(const char* what, int threads, K k, Args... args) {
    cudaFuncAttributes attr;
    CHECK(cudaFuncGetAttributes(&attr, k));
    int per_sm = 0;
    CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, k, block_of(threads), 0));
    const long long per_block = block_of(threads) / threads;
    const unsigned grid = unsigned((rows + per_block - 1) / per_block);
    const float us = time_us([&] { k<<<grid, block_of(threads)>>>(args...); });
    std::printf("  %-44s %3d regs, %2d blocks an SM: %7.1f us, %5.0f GB/s, max rel diff %.2g\n", what, attr.numRegs,
                per_sm, us, 2.0 * rows * n * sizeof(S) / us / 1e3, diff());
  }
  template <typename A, int kThreads, int kKept, bool kOnline, bool kVec, bool kFast>
  void v(const char* what) {
    report(what, kThreads, &variant<S, A, kThreads, kKept, kOnline, kVec, kFast>, (const S*)x, y, rows, n, scale);
  }
  template <int kThreads, int kKept>
  void lucid(const char* what) {
    report(what, kThreads, &lucids<S, kThreads, kKept>, ScaledRows<S>{x, y, n, scale}, rows);
  }
};

template <typename S>
void run(long long rows, int n, float scale, const char* name) {
  Case<S> c{rows, n, scale};
  std::vector<S> host(size_t(rows * n));
  unsigned s = 12345;
  for (auto& v : host) {
    s = s * 1664525u + 1013904223u;
    v = S(float((s >> 8) & 0xffff) / 65536.f * 24.f - 12.f);
  }
  CHECK(cudaMalloc(&c.x, host.size() * sizeof(S)));
  CHECK(cudaMalloc(&c.y, host.size() * sizeof(S)));
  CHECK(cudaMemcpy(c.x, host.data(), host.size() * sizeof(S), cudaMemcpyHostToDevice));
  std::printf("[%lld, %d] %s, times %g\n", rows, n, name, scale);
  c.template lucid<256, 4>("lucid's template 256 x 4 (double sums)");
  c.template lucid<128, 8>("lucid's template 128 x 8 (double sums)");
  c.template v<double, 256, 4, false, false, false>("256 x 4 strided, double sums");
  c.template v<float, 256, 4, false, false, false>("256 x 4 strided, float sums");
  c.template v<float, 256, 4, true, false, false>("256 x 4 strided, float, online");
  c.template v<double, 256, 4, true, false, false>("256 x 4 strided, double, online");
  c.template v<float, 256, 4, false, true, false>("256 x 4 vector, float sums");
  c.template v<float, 256, 4, true, true, false>("256 x 4 vector, float, online");
  c.template v<double, 256, 4, true, true, false>("256 x 4 vector, double, online");
  c.template v<float, 128, 8, false, true, false>("128 x 8 vector, float sums");
  c.template v<float, 128, 8, true, true, false>("128 x 8 vector, float, online");
  c.template v<double, 128, 8, true, true, false>("128 x 8 vector, double, online");
  c.template v<float, 32, 32, false, true, false>("warp x 32 vector, float sums");
  c.template v<float, 64, 16, true, true, false>("64 x 16 vector, float, online");
  c.template v<float, 256, 4, true, true, true>("256 x 4 vector, float, online, exp2");
  c.template v<float, 128, 8, true, true, true>("128 x 8 vector, float, online, exp2");
  CHECK(cudaFree(c.x));
  CHECK(cudaFree(c.y));
}

int main() {
  run<float>(16384, 1024, 1.f, "float32");
  run<__nv_bfloat16>(32768, 1024, 0.125f, "bfloat16");
  return 0;
}
