// How a block of the reduction engine's rows kernel (reduce.cuh, inner == 1) walks its
// part of a row and combines it, as a text that both nvcc (reduce.cuh's unfused
// kernels) and NVRTC (the fused row reductions of fused_rows.cpp, whose loads run the chain
// computing the row: Note [Fused norm rows]) compile. It has no #include: the build
// embeds it in the fused kernels' source. Both sides walk in this order, so a reduction
// fused with the chain before it gives the unfused reduction's bits.
#pragma once

namespace lucid::cuda {

#if defined(__CUDACC__)

// Tree reduction of one Acc per thread in shared memory by r.combine(a, b); thread 0
// gets the result.
template <class R, typename Acc>
__device__ Acc block_tree(const R& r, Acc* s, Acc a, int tid, int count) {
  s[tid] = a;
  __syncthreads();
  for (int stride = count / 2; stride > 0; stride /= 2) {
    if (tid < stride) s[tid] = r.combine(s[tid], s[tid + stride]);
    __syncthreads();
  }
  Acc out = s[0];
  __syncthreads();
  return out;
}

// Thread `tid`'s accumulation of the row elements [j0, j1) in groups of V neighbours
// (V > 1: a 16-byte load each, and j1 - j0 a multiple of V): group g starts at
// j0 + (tid + g * kThreads) * V. `read(j)` loads the group at j, `fold(a, group, j)`
// combines its V elements into a in order, and r.combine(a, b) merges accumulators.
// Four accumulators, each over its own quarter of the groups, keep four loads and four independent combine chains in flight (a
// reducer with branches, max with indices, is latency-bound on one chain); the four
// loads are issued before the first fold (the compiler does not move loads above a
// branchy combine).
template <int kThreads, int V, typename Acc, class Read, class Fold, class R>
__device__ __forceinline__ Acc walk_row(Acc init, long long j0, long long j1, int tid, Read read, Fold fold,
                                        const R& r) {
  constexpr long long S = (long long)kThreads * V;
  Acc a0 = init, a1 = init, a2 = init, a3 = init;
  long long j = j0 + (long long)tid * V;
  for (; j + 3 * S < j1; j += 4 * S) {
    const auto g0 = read(j), g1 = read(j + S), g2 = read(j + 2 * S), g3 = read(j + 3 * S);
    a0 = fold(a0, g0, j), a1 = fold(a1, g1, j + S), a2 = fold(a2, g2, j + 2 * S), a3 = fold(a3, g3, j + 3 * S);
  }
  for (; j < j1; j += S) a0 = fold(a0, read(j), j);
  return r.combine(r.combine(a0, a1), r.combine(a2, a3));
}

// What a fused row reduction computes, as the unfused reducers do: reduce.cu's
// MomentReducer (a sum or a sum of magnitudes, in double, scaled: a mean) and
// reduce_extremum.cu's value-only ExtremumReducer (in T, a NaN wins).
template <typename T, bool kAbs>
struct RowSumOf {
  using Acc = double;
  __device__ __forceinline__ Acc init() const { return 0.0; }
  __device__ __forceinline__ Acc lift(T v) const { return kAbs ? fabs(double(v)) : double(v); }
  __device__ __forceinline__ Acc combine(Acc a, Acc b) const { return a + b; }
  __device__ __forceinline__ T result(Acc a, double scale) const { return T(a * scale); }
};
template <typename T, bool kMax>
struct RowExtremumOf {
  using Acc = T;
  __device__ __forceinline__ Acc init() const {
    const T inf = T(__longlong_as_double(0x7ff0000000000000ll));  // (NVRTC has no INFINITY)
    return kMax ? -inf : inf;
  }
  __device__ __forceinline__ Acc lift(T v) const { return v; }
  __device__ __forceinline__ Acc combine(Acc a, Acc b) const { return ((kMax ? a > b : a < b) || a != a) ? a : b; }
  __device__ __forceinline__ T result(Acc a, double) const { return a; }
};

// Each row's reduction by R of x, x's elements made by `io` (the fused chain's Io:
// load_x, then make_x once per element), in the unfused rows kernel's order (reduce.cuh:
// one block of 256 threads a row, never split), in the groups of V its 16-byte loads
// read (V = 1 where it reads one element at a time). y[r] = R().result(acc, scale).
template <typename T, int V, class R, class Io>
__device__ __forceinline__ void reduce_rows_fused(const Io& io, long long rows, long long n, double scale, T* y) {
  using Acc = typename R::Acc;
  constexpr int kThreads = 256;  // (kReduceThreads)
  __shared__ Acc s[kThreads];
  struct Group {
    typename Io::XIn in[V];
  };
  const R red;
  const int tid = int(threadIdx.x);
  for (long long r = blockIdx.x; r < rows; r += gridDim.x) {
    auto read = [&](long long j) {
      Group g;
#pragma unroll
      for (int k = 0; k < V; ++k) g.in[k] = io.load_x(r, j + k);
      return g;
    };
    auto fold = [&](Acc a, const Group& g, long long j) {
#pragma unroll
      for (int k = 0; k < V; ++k) a = red.combine(a, red.lift(io.make_x(r, j + k, g.in[k])));
      return a;
    };
    Acc a = walk_row<kThreads, V>(red.init(), 0, n, tid, read, fold, red);
    a = block_tree(red, s, a, tid, kThreads);
    if (tid == 0) y[r] = red.result(a, scale);
  }
}

#endif  // __CUDACC__

}  // namespace lucid::cuda
