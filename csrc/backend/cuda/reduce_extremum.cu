// CUDA kernels of max/min with or without their indices (ExtremumRows, ExtremumBlock of
// ops/prims/reduce.h) on the engine of reduce.cuh: their own unit, since every dtype
// with and without indices is 44 instantiations of each engine kernel.
#include <limits>
#include <type_traits>

#include "backend/cuda/elementwise_launch.cuh"
#include "backend/cuda/reduce.cuh"
#include "backend/cuda/register.h"
#include "backend/cuda/tensor_data.h"
#include "ops/prims/reduce.h"

namespace lucid::cuda {

namespace {

using ops::Inputs;
using ops::Outputs;

// ---- extrema -----------------------------------------------------------------------

// The worst value of C for a max (kMax) or min: the identity.
template <typename C, bool kMax>
__device__ C worst_value() {
  using L = std::numeric_limits<C>;
  return L::has_infinity ? (kMax ? -L::infinity() : L::infinity()) : (kMax ? L::lowest() : L::max());
}

// With indices (kIndex): the identity is the worst value at an index past every
// element, so every combine is one branch-free choice (a runtime max/min flag or a
// "no element yet" index cost the full max 2.6x torch's time). Without (amax, a full
// max), the accumulator is the value alone: a third of the registers and compares.
template <typename T, bool kMax, bool kIndex>
struct ExtremumReducer {
  using C = opmath_t<T>;
  struct Indexed {
    C v;
    int64_t j;
  };
  using Acc = std::conditional_t<kIndex, Indexed, C>;
  const T* x;
  T* values;
  int64_t* indices;
  __device__ Acc init() const {
    if constexpr (kIndex) return {worst_value<C, kMax>(), std::numeric_limits<int64_t>::max()};
    else return worst_value<C, kMax>();
  }
  __device__ Acc lift(T v, int64_t, int64_t j) const {
    if constexpr (kIndex) return {C(v), j};
    else return C(v);
  }
  __device__ Acc load(int64_t e, int64_t j) const { return lift(x[e], e, j); }
  // A NaN wins (its first occurrence), then the larger (smaller), then the first.
  __device__ Acc combine(Acc a, Acc b) const {
    if constexpr (kIndex) {
      const bool better = kMax ? b.v > a.v : b.v < a.v;
      const bool first = b.v == a.v && b.j < a.j;
      bool take_b = better || first;
      if constexpr (!std::is_integral_v<C>) {
        const bool an = a.v != a.v, bn = b.v != b.v;
        take_b = bn ? (!an || b.j < a.j) : (!an && take_b);
      }
      return take_b ? b : a;
    } else {
      return ((kMax ? a > b : a < b) || a != a) ? a : b;  // b when it is the NaN
    }
  }
  __device__ void store(int64_t o, Acc a) const {
    if constexpr (kIndex) {
      if (values) values[o] = T(a.v);
      indices[o] = a.j;
    } else {
      values[o] = T(a);
    }
  }
};

template <bool kRows>
void extremum_kernel(const ops::Primitive& prim, Outputs outs, Inputs ins) {
  int64_t outer, n, inner = 1;
  bool is_max, values, indices;
  if constexpr (kRows) {
    const auto& p = ops::prim_cast<ops::ExtremumRows>(prim);
    outer = p.outer, n = p.n, is_max = p.is_max, values = p.values, indices = p.indices;
  } else {
    const auto& p = ops::prim_cast<ops::ExtremumBlock>(prim);
    outer = p.outer, n = p.n, inner = p.inner, is_max = p.is_max, values = p.values, indices = p.indices;
  }
  LUCID_CHECK(n > 0 || outer * inner == 0, RuntimeError, "internal: extremum over an empty dimension");
  LUCID_CHECK(values || indices, RuntimeError, "internal: extremum with neither values nor indices");
  TensorImpl* vout = values ? outs[0] : nullptr;
  int64_t* iout = indices ? mdata<int64_t>(outs[values ? 1 : 0]) : nullptr;
  const int dev = outs[0]->device().index;
  visit_dtype(ins[0]->dtype(), [&]<typename T>() {
    if constexpr (kIsComplexValue<T>) {
      fail<RuntimeError>("internal: extremum of a complex type");
    } else {
      T* v = vout ? mdata<T>(vout) : nullptr;
      auto run = [&]<bool kMax, bool kIndex>() {
        reduce_block(ExtremumReducer<T, kMax, kIndex>{cdata<T>(ins[0]), v, iout}, outer, n, inner, dev);
      };
      if (is_max) indices ? run.template operator()<true, true>() : run.template operator()<true, false>();
      else indices ? run.template operator()<false, true>() : run.template operator()<false, false>();
    }
  });
}

}  // namespace

void register_extremum_kernels() {
  using ops::Prim;
  ops::register_kernel(Prim::ExtremumBlock, DeviceType::GPU, extremum_kernel<false>);
  ops::register_kernel(Prim::ExtremumRows, DeviceType::GPU, extremum_kernel<true>);
}

}  // namespace lucid::cuda
