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
LUCID_INLINE vf16 exp_v(vf16 x) {
  const vf16 lo = vf16{} - 87.5f;
  const vf16 xc = select_gt(lo, x, lo, x);  // (max_gt(x, lo) would drop a NaN x)
  const float kShift = 12582912.0f;  // 1.5 * 2^23: adding it rounds to an integer
  vf16 t = xc * 1.44269504088896341f + kShift;
  vi16 ni;
  std::memcpy(&ni, &t, sizeof ni);
  ni -= 0x4B400000;  // the integer n from t's low mantissa bits
  const vf16 nf = t - kShift;
  vf16 r = xc - nf * 0.693359375f;
  r = r - nf * -2.12194440e-4f;
  vf16 p = vf16{} + 0.00829031f;
  p = p * r + 0.04189793f;
  p = p * r + 0.16667636f;
  p = p * r + 0.4999915f;
  p = p * r + 0.99999971f;
  vf16 y = p * r + 1.0f;
  vi16 bits = (ni + 127) << 23;
  vf16 scale;
  std::memcpy(&scale, &bits, sizeof scale);
  return select_gt(vf16{} - 87.3f, x, vf16{}, y * scale);
}

LUCID_INLINE float exp1(float x) {
  vf16 v = vf16{} + x;
  return exp_v(v)[0];
}

// The maximum a row's exponentials are shifted by: the row's maximum in float lanes (a
// NaN may be passed over: it reaches the sum of exponentials anyway), 0 when every
// element is -inf (the sum is then 0 and the result nan, as PyTorch's).
LUCID_INLINE float row_shift_f32(const float* x, int64_t n) {
  vf16 mv = vf16{} - __builtin_inff();
  int64_t k = 0;
  for (; k + 16 <= n; k += 16) mv = max_gt(load<vf16>(x + k), mv);
  float mx = -__builtin_inff();
  for (int j = 0; j < 16; ++j) mx = mv[j] > mx ? mv[j] : mx;
  for (; k < n; ++k) mx = x[k] > mx ? x[k] : mx;
  return mx == -__builtin_inff() ? 0.0f : mx;
}

}  // namespace lucid::cpu::simd
