// The rotary positional encoding of lucid.fast.rope (MLX's mx.fast.rope), one kernel a
// device (ops/rope.cpp). The element math is here, shared by the CPU and CUDA kernels.
#pragma once

#include <cmath>
#include <cstdint>

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

// The two features of pair `pair` (< dims / 2).
LUCID_HD inline void rope_pair_features(const RopeParams& p, int64_t pair, int64_t& i0, int64_t& i1) {
  i0 = p.traditional ? 2 * pair : pair;
  i1 = p.traditional ? 2 * pair + 1 : pair + p.dims / 2;
}

// Pair `pair` of row l turned: (x0, x1) -> (y0, y1), computed in C (float for
// float16/bfloat16/float32, double for float64). The one formula both devices use.
template <typename C>
LUCID_HD inline void rope_turn(const RopeParams& p, int64_t l, int64_t pair, C x0, C x1, C& y0, C& y1) {
#if !defined(__CUDA_ARCH__)
  using std::cos, std::exp, std::sin;  // float overloads for float (the device has its own)
#endif
  const C theta = exp(C(-2 * pair) * (C(p.log_base) / C(p.dims)));
  C angle = C(p.offset + l) * C(p.scale) * theta;
  if (p.inverse) angle = -angle;
  const C c = cos(angle), s = sin(angle);
  y0 = x0 * c - x1 * s;
  y1 = x0 * s + x1 * c;
}

}  // namespace lucid::ops
