// Deterministic sums (and maxima) of a few doubles over a group of threads (a warp, or
// a whole block), for the kernels that give one group of threads one row or one
// segment: norm_stats.cu, norm_rows.cu and softmax_rows.cu.
//
// Note [Deterministic group sums]
// Within a warp, an xor butterfly of shuffles: at each step lanes i and i ^ m both add
// the same two values, and a + b == b + a exactly, so every lane ends with the same
// bits, the same on every run. Across the warps of a block, lane 0 of each warp writes
// its sum to shared memory and every thread adds them in warp order. No atomics, so a
// row's statistics do not depend on scheduling (as the CPU's do not depend on the
// thread count).
#pragma once

namespace lucid::cuda {

#if defined(__CUDACC__)

// The combinations a group reduces with. A sum's butterfly leaves every lane the same
// bits (symmetric); the larger of two is not symmetric in the bits of +0 and -0, so
// every lane takes lane 0's.
struct SumOf {
  static constexpr bool kSymmetric = true;
  __device__ __forceinline__ double operator()(double a, double b) const { return a + b; }
};
struct MaxOf {  // a NaN wins, as in torch's max
  static constexpr bool kSymmetric = false;
  __device__ __forceinline__ double operator()(double a, double b) const { return (a != a || a > b) ? a : b; }
};

template <int K, class Op>
__device__ __forceinline__ void warp_reduce(double (&v)[K], Op op) {
#pragma unroll
  for (int m = 16; m > 0; m >>= 1) {
#pragma unroll
    for (int i = 0; i < K; ++i) v[i] = op(v[i], __shfl_xor_sync(0xffffffffu, v[i], m));
  }
  if constexpr (!Op::kSymmetric) {
#pragma unroll
    for (int i = 0; i < K; ++i) v[i] = __shfl_sync(0xffffffffu, v[i], 0);
  }
}

// v combined by `op` over the kThreads threads of a group: a warp (kThreads == 32: any
// number of groups per block, no barrier), or the whole block (kThreads == blockDim.x;
// then every thread of the block must call it, with `scratch` of kThreads / 32 * K
// doubles in shared memory). Every thread of the group gets the result.
template <int kThreads, int K, class Op>
__device__ __forceinline__ void group_reduce(double (&v)[K], double* scratch, Op op) {
  static_assert(kThreads % 32 == 0);
  warp_reduce(v, op);
  if constexpr (kThreads > 32) {
    constexpr int kWarps = kThreads / 32;
    const int warp = int(threadIdx.x) / 32;
    if (threadIdx.x % 32 == 0) {
#pragma unroll
      for (int i = 0; i < K; ++i) scratch[warp * K + i] = v[i];
    }
    __syncthreads();
#pragma unroll
    for (int i = 0; i < K; ++i) {
      double s = scratch[i];
      for (int w = 1; w < kWarps; ++w) s = op(s, scratch[w * K + i]);
      v[i] = s;
    }
    __syncthreads();  // the scratch is free for the next reduction
  }
}

template <int kThreads, int K>
__device__ __forceinline__ void group_sum(double (&v)[K], double* scratch) {
  group_reduce<kThreads>(v, scratch, SumOf());
}

#endif  // __CUDACC__

}  // namespace lucid::cuda
