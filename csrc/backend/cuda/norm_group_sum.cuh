// Deterministic sums of a few doubles over a group of threads (a warp, or a whole
// block), for the norm kernels that give one group of threads one row or one segment:
// norm_stats.cu and norm_rows.cu.
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

template <int K>
__device__ __forceinline__ void warp_sum(double (&v)[K]) {
#pragma unroll
  for (int m = 16; m > 0; m >>= 1) {
#pragma unroll
    for (int i = 0; i < K; ++i) v[i] += __shfl_xor_sync(0xffffffffu, v[i], m);
  }
}

// v summed over the kThreads threads of a group: a warp (kThreads == 32: any number
// of groups per block, no barrier), or the whole block (kThreads == blockDim.x; then
// every thread of the block must call it, with `scratch` of kThreads / 32 * K doubles
// in shared memory). Every thread of the group gets the sum.
template <int kThreads, int K>
__device__ __forceinline__ void group_sum(double (&v)[K], double* scratch) {
  static_assert(kThreads % 32 == 0);
  warp_sum(v);
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
      for (int w = 1; w < kWarps; ++w) s += scratch[w * K + i];
      v[i] = s;
    }
    __syncthreads();  // the scratch is free for the next sum
  }
}

#endif  // __CUDACC__

}  // namespace lucid::cuda
