// The rotary positional encoding of lucid.fast.rope (MLX's mx.fast.rope), one kernel a
// device (ops/rope.cpp). The element math is here, shared by the CPU and CUDA kernels.
#pragma once

#include <cmath>
#include <cstdint>
#include <type_traits>

#include "core/half.h"  // (LUCID_HD)
#include "ops/primitive.h"

namespace lucid::ops {

struct RopeParams {
  int64_t dims = 0;          // leading features of the last axis that rotate (even); the rest pass through
  bool traditional = false;  // pairs (2i, 2i + 1); otherwise (i, i + dims / 2)
  double log_base = 0;       // pair i turns by position * scale * base^(-2i / dims)
  double scale = 1;
  int64_t offset = 0;        // position of the first row (a KV cache's length)
  bool inverse = false;      // the opposite rotation: the gradient
};

// out (contiguous, x's shape [..., L, D], floating) = x with feature pairs of row l of
// each [L, D] matrix turned by the pair's angle at position offset + l. ins: {x}
// (contiguous).
struct Rope : PrimitiveOf<Prim::Rope, Rope> {
  RopeParams p;
  const char* name() const override { return "fast.rope"; }
};

// Pair `pair` (< dims / 2) of row l, read from `in` and written turned to `out` (the
// row's D features each): computed in C, float for float16/bfloat16/float32, double for
// float64. The one formula both devices use.
template <typename T>
LUCID_HD inline void rope_pair(const RopeParams& p, const T* in, T* out, int64_t l, int64_t pair) {
  using C = std::conditional_t<std::is_same_v<T, double>, double, float>;
#if !defined(__CUDA_ARCH__)
  using std::cos, std::exp, std::sin;  // float overloads for float (the device has its own)
#endif
  const int64_t i0 = p.traditional ? 2 * pair : pair, i1 = p.traditional ? 2 * pair + 1 : pair + p.dims / 2;
  const C theta = exp(C(-2 * pair) * (C(p.log_base) / C(p.dims)));
  C angle = C(p.offset + l) * C(p.scale) * theta;
  if (p.inverse) angle = -angle;
  const C c = cos(angle), s = sin(angle), x0 = C(in[i0]), x1 = C(in[i1]);
  out[i0] = T(x0 * c - x1 * s);
  out[i1] = T(x0 * s + x1 * c);
}

}  // namespace lucid::ops
