// The functors of the Pointwise primitive (ops/prims/elementwise.h): add(a, b, alpha=),
// lerp, addcmul and addcdiv of float tensors, each torch's expression in the opmath type,
// rounded once (Note [One rounding]). Shared by the CPU's loop (backend/cpu/pointwise.cpp)
// and the GPU's (backend/cuda/pointwise.cu); both files are built without contraction,
// so every fused multiply-add here is one torch's kernels have too, and no other.
//
// z is the third operand: a tensor's element, or the number standing for it (add's
// alpha, lerp's weight). `value` is addcmul's and addcdiv's.
#pragma once

#include <cmath>

#include "core/half.h"

namespace lucid::ops::pointwise {

template <typename C>
LUCID_HD inline C fused_multiply_add(C x, C y, C z) {
#ifdef __CUDA_ARCH__
  if constexpr (sizeof(C) == 4) return fmaf(x, y, z);
  else return fma(x, y, z);
#else
  return std::fma(x, y, z);
#endif
}

// a + alpha * b: torch's CPU vector loop (fmadd) and its CUDA kernel (contracted) alike.
struct AddScaled {
  template <typename C> LUCID_HD C operator()(C a, C b, C alpha, C) const { return fused_multiply_add(alpha, b, a); }
};

// torch's two-sided lerp, exact at weight 0 and 1: start + w (end - start) for |w| < 1/2,
// else end + (w - 1)(end - start). (Its CPU vector loop's form; its CUDA kernel's
// end - (end - start)(1 - w), contracted, is the same fused multiply-add.)
struct Lerp {
  template <typename C> LUCID_HD C operator()(C start, C end, C w, C) const {
    const C diff = end - start;
    return (w < C(0) ? -w : w) < C(0.5) ? fused_multiply_add(w, diff, start) : fused_multiply_add(w - C(1), diff, end);
  }
};

// input + value * t1 * t2. torch's CPU kernel computes (value * t1) * t2 + input with
// one fused multiply-add; its CUDA kernel input + value * (t1 * t2), contracted, and
// input + t1 * t2 as one fused multiply-add for value 1 (measured on an H100).
struct Addcmul {
  template <typename C> LUCID_HD C operator()(C a, C t1, C t2, C value) const {
#ifdef __CUDA_ARCH__
    return value == C(1) ? fused_multiply_add(t1, t2, a) : fused_multiply_add(value, t1 * t2, a);
#else
    return fused_multiply_add(value * t1, t2, a);
#endif
  }
};

// input + value * t1 / t2: the CPU as (value * t1) / t2 + input; CUDA as
// input + value * (t1 / t2), contracted.
struct Addcdiv {
  template <typename C> LUCID_HD C operator()(C a, C t1, C t2, C value) const {
#ifdef __CUDA_ARCH__
    return fused_multiply_add(value, t1 / t2, a);
#else
    return a + value * t1 / t2;
#endif
  }
};

}  // namespace lucid::ops::pointwise
