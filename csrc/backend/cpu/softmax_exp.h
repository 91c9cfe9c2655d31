// The vector exp and row maximum of the softmax kernels (softmax.cpp) and the cross
// entropy built on them (cross_entropy.cpp), internal to those TUs: call it from LUCID_CLONES functions,
// into which it inlines with each clone's instruction set.
#pragma once

#include <cstdint>
#include <cstring>

#include "backend/cpu/reduce_simd.h"

namespace lucid::cpu::simd {

// exp(x) for x <= 0, -inf or NaN (softmax feeds x - max): 2^n * p(r) with
// r = x - n ln2 in [-ln2/2, ln2/2] and p a degree-5 minimax fit of e^r (relative
// error < 2e-7, ~1.5 ulp; fitted for this file). Below -87.3 the result is 0
// (denormals flushed: far below softmax's tolerances); NaN stays NaN. Written so
// the clamp keeps a NaN x (`lo > x ? lo : x`); ~16 vector ops per 16 floats. The selects
// are select_gt's (reduce_simd.h: never a ?: on a 64-byte vector).
// (Lane-wise, so the same bits on 8 lanes as on 16: the kernels run 8-lane halves where
// GCC spills 64-byte vectors in the AVX2 clone.)
template <typename V>
struct IntLanes;
template <>
struct IntLanes<vf16> { using type = vi16; };
template <>
struct IntLanes<vf8> { using type = vi8; };

template <typename V>
LUCID_INLINE V exp_v(V x) {
  using I = typename IntLanes<V>::type;
  const V lo = V{} - 87.5f;
  const V xc = select_gt(lo, x, lo, x);  // (max_gt(x, lo) would drop a NaN x)
  const float kShift = 12582912.0f;  // 1.5 * 2^23: adding it rounds to an integer
  V t = xc * 1.44269504088896341f + kShift;
  I ni;
  std::memcpy(&ni, &t, sizeof ni);
  ni -= 0x4B400000;  // the integer n from t's low mantissa bits
  const V nf = t - kShift;
  V r = xc - nf * 0.693359375f;
  r = r - nf * -2.12194440e-4f;
  V p = V{} + 0.00829031f;
  p = p * r + 0.04189793f;
  p = p * r + 0.16667636f;
  p = p * r + 0.4999915f;
  p = p * r + 0.99999971f;
  V y = p * r + 1.0f;
  I bits = (ni + 127) << 23;
  V scale;
  std::memcpy(&scale, &bits, sizeof scale);
  return select_gt(V{} - 87.3f, x, V{}, y * scale);
}

LUCID_INLINE float exp1(float x) {
  vf8 v = vf8{} + x;
  return exp_v(v)[0];
}

// The maximum a row's exponentials are shifted by: the row's maximum in float lanes (a
// NaN may be passed over: it reaches the sum of exponentials anyway), 0 when every
// element is -inf (the sum is then 0 and the result nan, as PyTorch's).
LUCID_INLINE float row_shift_f32(const float* x, int64_t n) {
  vf8 lo = vf8{} - __builtin_inff(), hi = lo;  // (16 lanes as two halves)
  int64_t k = 0;
  for (; k + 16 <= n; k += 16) lo = max_gt(load<vf8>(x + k), lo), hi = max_gt(load<vf8>(x + k + 8), hi);
  float mx = -__builtin_inff();
  for (int j = 0; j < 8; ++j) mx = lo[j] > mx ? lo[j] : mx;
  for (int j = 0; j < 8; ++j) mx = hi[j] > mx ? hi[j] : mx;
  for (; k < n; ++k) mx = x[k] > mx ? x[k] : mx;
  return mx == -__builtin_inff() ? 0.0f : mx;
}

}  // namespace lucid::cpu::simd
