// The elementwise loops of the CUDA backend: one output and N inputs of one dtype,
// each input either a tensor (pointer + byte strides) or a number held in the kernel's
// arguments (Note [Numbers as parameters] in elementwise_launch.h). Two paths:
//   contiguous: the output dense, each input dense in the same order or repeating a
//               dense block of `period` elements (a row broadcast: x + bias); V elements
//               a thread with one 16-byte access per operand when every pointer allows it;
//   strided:    byte strides over at most kMaxEwDims collapsed dimensions, 64-bit
//               offsets (tensors may pass 2^31 elements).
// Only .cu files include this.
#pragma once

#include <cstdint>

#include <cuda_runtime_api.h>

#include "core/half.h"

namespace lucid::cuda {

inline constexpr int kMaxEwDims = 16;
inline constexpr int kEwThreads = 256;

// The compute type: 16-bit floats compute in float, as on the CPU.
template <typename T>
struct OpMath { using type = T; };
template <> struct OpMath<Half> { using type = float; };
template <> struct OpMath<BFloat16> { using type = float; };
template <typename T>
using opmath_t = typename OpMath<T>::type;

// Division by a fixed 32-bit divisor as a multiply and a shift (Granlund-Montgomery,
// as ATen's IntDivider): the strided walk divides by every dimension's size for every
// element, and a hardware 64-bit division costs tens of instructions.
struct FastDiv {
  uint32_t divisor = 1, magic = 0, shift = 0;
  FastDiv() = default;
  explicit FastDiv(uint32_t d) : divisor(d) {
    while (shift < 32 && (uint64_t(1) << shift) < d) ++shift;
    magic = uint32_t(((uint64_t(1) << 32) * ((uint64_t(1) << shift) - d)) / d + 1);
  }
#if defined(__CUDACC__)
  // n / divisor for n < 2^31.
  __device__ __forceinline__ uint32_t div(uint32_t n) const { return (__umulhi(n, magic) + n) >> shift; }
#endif
};

// N inputs of storage type T: a pointer, or (null pointer) the number `scalar`. On the
// contiguous path an input with a `period` reads element i % period (0: element i).
template <typename T, int N>
struct EwInputs {
  const char* ptr[N > 0 ? N : 1];
  opmath_t<T> scalar[N > 0 ? N : 1];
  int64_t period[N > 0 ? N : 1];
  FastDiv period_div[N > 0 ? N : 1];  // of period, when it is below 2^31
};

#if defined(__CUDACC__)
// The element an input with `period` holds for output element i (contiguous path).
__device__ __forceinline__ int64_t ew_source(int64_t i, int64_t period, const FastDiv& div) {
  if (period == 0) return i;
  if (i < (int64_t(1) << 31) && period < (int64_t(1) << 31))
    return i - int64_t(div.div(uint32_t(i))) * period;
  return i % period;
}
#endif

// Shape and byte strides after collapsing; strides[0] is the output's. `div` holds the
// sizes as FastDivs for the 32-bit walk (numel < 2^31).
template <int N>
struct EwStrides {
  int ndim;
  int64_t sizes[kMaxEwDims];
  FastDiv div[kMaxEwDims];
  int64_t strides[N + 1][kMaxEwDims];
};

#if defined(__CUDACC__)
// Byte offsets of the element with row-major index i in each of the N + 1 operands.
// kSmall: i < 2^31, so the divisions are FastDiv multiplies.
template <bool kSmall, int N>
__device__ __forceinline__ void ew_offsets(int64_t i, const EwStrides<N>& p, int64_t (&off)[N + 1]) {
#pragma unroll
  for (int k = 0; k <= N; ++k) off[k] = 0;
  if constexpr (kSmall) {
    uint32_t rem = uint32_t(i);
    for (int d = p.ndim - 1; d > 0; --d) {
      const uint32_t q = p.div[d].div(rem);
      const int64_t idx = int64_t(rem - q * p.div[d].divisor);
#pragma unroll
      for (int k = 0; k <= N; ++k) off[k] += idx * p.strides[k][d];
      rem = q;
    }
#pragma unroll
    for (int k = 0; k <= N; ++k) off[k] += int64_t(rem) * p.strides[k][0];
  } else {
    int64_t rem = i;
    for (int d = p.ndim - 1; d > 0; --d) {
      const int64_t q = rem / p.sizes[d];
      const int64_t idx = rem - q * p.sizes[d];
#pragma unroll
      for (int k = 0; k <= N; ++k) off[k] += idx * p.strides[k][d];
      rem = q;
    }
#pragma unroll
    for (int k = 0; k <= N; ++k) off[k] += rem * p.strides[k][0];
  }
}
#endif

template <typename T, int V>
struct alignas(sizeof(T) * V) EwVec {
  T v[V];
};

// Elements a thread handles on the contiguous path: one 16-byte access of T.
template <typename T>
constexpr int ew_vec_width() {
  return sizeof(T) >= 16 ? 1 : int(16 / sizeof(T));
}

#if defined(__CUDACC__)

// out[i] = f(in_0[i], ..., in_{N-1}[i]) for a dense output. `aligned`: every pointer
// is aligned for V-element accesses and every period a multiple of V (checked on the
// host; uniform across the grid), so a thread's V elements of an input are adjacent.
template <typename TOut, typename T, int N, typename F>
__global__ void __launch_bounds__(kEwThreads) ew_contiguous(TOut* out, EwInputs<T, N> in, int64_t n,
                                                            bool aligned, F f) {
  constexpr int V = ew_vec_width<T>();
  using C = opmath_t<T>;
  const int64_t i0 = (int64_t(blockIdx.x) * kEwThreads + threadIdx.x) * V;
  if (i0 >= n) return;
  if (aligned && i0 + V <= n) {
    C args[N][V];
#pragma unroll
    for (int k = 0; k < N; ++k) {
      if (in.ptr[k] && in.period[k] == 1) {  // an expanded single element
        const C x = C(*reinterpret_cast<const T*>(in.ptr[k]));
#pragma unroll
        for (int j = 0; j < V; ++j) args[k][j] = x;
      } else if (in.ptr[k]) {
        const int64_t src = ew_source(i0, in.period[k], in.period_div[k]);
        EwVec<T, V> x = *reinterpret_cast<const EwVec<T, V>*>(reinterpret_cast<const T*>(in.ptr[k]) + src);
#pragma unroll
        for (int j = 0; j < V; ++j) args[k][j] = C(x.v[j]);
      } else {
#pragma unroll
        for (int j = 0; j < V; ++j) args[k][j] = in.scalar[k];
      }
    }
    EwVec<TOut, V> r;
#pragma unroll
    for (int j = 0; j < V; ++j) {
      if constexpr (N == 1) r.v[j] = f(args[0][j]);
      else if constexpr (N == 2) r.v[j] = f(args[0][j], args[1][j]);
      else r.v[j] = f(args[0][j], args[1][j], args[2][j]);
    }
    *reinterpret_cast<EwVec<TOut, V>*>(out + i0) = r;
    return;
  }
  for (int64_t i = i0; i < n && i < i0 + V; ++i) {
    C a[N];
#pragma unroll
    for (int k = 0; k < N; ++k)
      a[k] = in.ptr[k] ? C(reinterpret_cast<const T*>(in.ptr[k])[ew_source(i, in.period[k], in.period_div[k])])
                       : in.scalar[k];
    if constexpr (N == 1) out[i] = f(a[0]);
    else if constexpr (N == 2) out[i] = f(a[0], a[1]);
    else out[i] = f(a[0], a[1], a[2]);
  }
}

// The same over byte strides. (Four inner neighbours a thread, sharing one offset
// computation, measured slower on the H200: x + bias 68 -> 84 us, torch 53;
// their accesses no longer coalesce across the warp.)
template <bool kSmall, typename TOut, typename T, int N, typename F>
__global__ void __launch_bounds__(kEwThreads) ew_strided(char* out, EwInputs<T, N> in, EwStrides<N> p,
                                                         int64_t n, F f) {
  using C = opmath_t<T>;
  const int64_t step = int64_t(gridDim.x) * kEwThreads;
  for (int64_t i = int64_t(blockIdx.x) * kEwThreads + threadIdx.x; i < n; i += step) {
    int64_t off[N + 1];
    ew_offsets<kSmall>(i, p, off);
    C a[N];
#pragma unroll
    for (int k = 0; k < N; ++k)
      a[k] = in.ptr[k] ? C(*reinterpret_cast<const T*>(in.ptr[k] + off[k + 1])) : in.scalar[k];
    TOut* o = reinterpret_cast<TOut*>(out + off[0]);
    if constexpr (N == 1) *o = f(a[0]);
    else if constexpr (N == 2) *o = f(a[0], a[1]);
    else *o = f(a[0], a[1], a[2]);
  }
}

#endif  // __CUDACC__

}  // namespace lucid::cuda
