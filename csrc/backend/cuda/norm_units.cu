// CUDA kernels of the four unit passes of batch_norm and group_norm (ops/prims/norm.h):
// the input, float32 or float64 and contiguous, is [n, k] and its units are its rows
// or its columns.
//
// NormMoments and NormGradSums are reductions of each unit on the engine of reduce.cuh
// (rows: [outer = n, n = k, inner = 1]; columns: [1, n, inner = k]), so they are
// deterministic (Note [Deterministic reductions]) and long units are split over blocks
// with an ordered second pass. The moments are one pass of Welford / Chan accumulators
// in double (the CPU makes two passes in T with double totals; one pass here halves
// the memory traffic, and double Chan combination is at least as accurate). NormAffine
// and NormAffine2 are elementwise maps with one coefficient set per unit, rounded to T
// first as on the CPU.
#include <cstdint>

#include "backend/cuda/elementwise_launch.cuh"
#include "backend/cuda/norm.h"
#include "backend/cuda/reduce.cuh"
#include "backend/cuda/tensor_data.h"
#include "ops/prims/norm.h"

namespace lucid::cuda {

namespace {

using ops::Inputs;
using ops::NormUnits;
using ops::Outputs;

// Runs reducer r over each unit of u (the store index is the unit's).
template <class R>
void reduce_units(const R& r, const NormUnits& u, int device) {
  if (u.columns) reduce_block(r, 1, u.n, u.k, device);
  else reduce_block(r, u.n, u.k, 1, device);
}

// ---- reductions ----------------------------------------------------------------------

// count, mean and m2 = sum (x - mean)^2 of a stretch of a unit.
struct Moments {
  double count, mean, m2;
};

template <typename T>
struct MomentsReducer {
  using Acc = Moments;
  const T* x;
  double* mean;  // the moments table [2, units]: mean, then m2
  double* m2;
  __device__ Acc init() const { return {0.0, 0.0, 0.0}; }
  __device__ Acc load(int64_t e, int64_t) const { return {1.0, double(x[e]), 0.0}; }
  // Chan's combination of two stretches (the empty one is the identity).
  __device__ Acc combine(Acc a, Acc b) const {
    if (b.count == 0) return a;
    if (a.count == 0) return b;
    const double count = a.count + b.count, delta = b.mean - a.mean, wb = b.count / count;
    return {count, a.mean + delta * wb, a.m2 + b.m2 + delta * delta * a.count * wb};
  }
  __device__ void store(int64_t u, Acc a) const {
    mean[u] = a.mean;
    m2[u] = a.m2;
  }
};

struct SumPair {
  double s1, s2;
};

// sum dy and sum dy * x (the product in T, as on the CPU).
template <typename T>
struct GradSumsReducer {
  using Acc = SumPair;
  const T* dy;
  const T* x;
  double* s1;
  double* s2;
  __device__ Acc init() const { return {0.0, 0.0}; }
  __device__ Acc load(int64_t e, int64_t) const { return {double(dy[e]), double(dy[e] * x[e])}; }
  __device__ Acc combine(Acc a, Acc b) const { return {a.s1 + b.s1, a.s2 + b.s2}; }
  __device__ void store(int64_t u, Acc a) const {
    s1[u] = a.s1;
    s2[u] = a.s2;
  }
};

// ---- per-unit affine maps --------------------------------------------------------------

// The unit of element e of [n, k]: its row e / k, or (columns) its column e % k.
// kSmall: every index < 2^31, and the division is a FastDiv multiply.
template <bool kColumns, bool kSmall>
struct UnitOf {
  int64_t k;
  FastDiv div;
  __device__ int64_t operator()(int64_t e) const {
    const int64_t row = kSmall ? int64_t(div.div(uint32_t(e))) : e / k;
    return kColumns ? e - row * k : row;
  }
};

template <typename T, class U>
__global__ void __launch_bounds__(kEwThreads) affine_kernel(const T* x, T* y, const double* scale,
                                                            const double* shift, int64_t total, U unit_of) {
  const int64_t step = int64_t(gridDim.x) * kEwThreads;
  for (int64_t e = int64_t(blockIdx.x) * kEwThreads + threadIdx.x; e < total; e += step) {
    const int64_t u = unit_of(e);
    y[e] = x[e] * T(scale[u]) + T(shift[u]);
  }
}

template <typename T, class U>
__global__ void __launch_bounds__(kEwThreads) affine2_kernel(const T* dy, const T* x, T* dx, const double* a,
                                                             const double* b, const double* d, int64_t total,
                                                             U unit_of) {
  const int64_t step = int64_t(gridDim.x) * kEwThreads;
  for (int64_t e = int64_t(blockIdx.x) * kEwThreads + threadIdx.x; e < total; e += step) {
    const int64_t u = unit_of(e);
    dx[e] = dy[e] * T(a[u]) + x[e] * T(b[u]) + T(d[u]);
  }
}

// launch(UnitOf<columns, small>{...}) for u's layout.
template <typename F>
void with_unit_of(const NormUnits& u, F&& launch) {
  const int64_t total = u.n * u.k;
  const bool small = total < (int64_t(1) << 31);
  const FastDiv div(small ? uint32_t(u.k) : 1u);
  if (u.columns) {
    if (small) launch(UnitOf<true, true>{u.k, div});
    else launch(UnitOf<true, false>{u.k, div});
  } else {
    if (small) launch(UnitOf<false, true>{u.k, div});
    else launch(UnitOf<false, false>{u.k, div});
  }
}

}  // namespace

void norm_moments_kernel(const ops::Primitive& p, Outputs outs, Inputs ins) {
  const NormUnits u = ops::prim_cast<ops::NormMoments>(p).units;
  double* mean = mdata<double>(outs[0]);
  visit_float32_or_64(ins[0]->dtype(), [&](auto z) {
    using T = decltype(z);
    reduce_units(MomentsReducer<T>{cdata<T>(ins[0]), mean, mean + u.count()}, u, outs[0]->device().index);
  });
}

void norm_grad_sums_kernel(const ops::Primitive& p, Outputs outs, Inputs ins) {
  const NormUnits u = ops::prim_cast<ops::NormGradSums>(p).units;
  double* s1 = mdata<double>(outs[0]);
  visit_float32_or_64(ins[1]->dtype(), [&](auto z) {
    using T = decltype(z);
    reduce_units(GradSumsReducer<T>{cdata<T>(ins[0]), cdata<T>(ins[1]), s1, s1 + u.count()}, u,
                 outs[0]->device().index);
  });
}

void norm_affine_kernel(const ops::Primitive& p, Outputs outs, Inputs ins) {
  const NormUnits u = ops::prim_cast<ops::NormAffine>(p).units;
  const int64_t total = u.n * u.k;
  if (total == 0) return;
  const int device = outs[0]->device().index;
  DeviceGuard guard(device);
  cudaStream_t s = stream(device);
  const double* scale = cdata<double>(ins[1]);
  const double* shift = scale + u.count();
  visit_float32_or_64(ins[0]->dtype(), [&](auto z) {
    using T = decltype(z);
    with_unit_of(u, [&](auto unit_of) {
      affine_kernel<T><<<ew_grid(total), kEwThreads, 0, s>>>(cdata<T>(ins[0]), mdata<T>(outs[0]), scale, shift,
                                                             total, unit_of);
    });
  });
  LUCID_CUDA_CHECK(cudaGetLastError());
}

void norm_affine2_kernel(const ops::Primitive& p, Outputs outs, Inputs ins) {
  const NormUnits u = ops::prim_cast<ops::NormAffine2>(p).units;
  const int64_t total = u.n * u.k;
  if (total == 0) return;
  const int device = outs[0]->device().index;
  DeviceGuard guard(device);
  cudaStream_t s = stream(device);
  const double* a = cdata<double>(ins[2]);
  visit_float32_or_64(ins[1]->dtype(), [&](auto z) {
    using T = decltype(z);
    with_unit_of(u, [&](auto unit_of) {
      affine2_kernel<T><<<ew_grid(total), kEwThreads, 0, s>>>(cdata<T>(ins[0]), cdata<T>(ins[1]),
                                                              mdata<T>(outs[0]), a, a + u.count(),
                                                              a + 2 * u.count(), total, unit_of);
    });
  });
  LUCID_CUDA_CHECK(cudaGetLastError());
}

}  // namespace lucid::cuda
