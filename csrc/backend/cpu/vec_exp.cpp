// float32 exp, tanh, sigmoid and erf, the fused activations gelu, silu, softplus,
// logsigmoid and mish and their derivatives (and, for builds without SLEEF, sin and cos)
// in lucid's own vector code (GCC vector extensions, compiled for AVX2 and AVX-512). Activations are made of these,
// and SLEEF's 1-ULP versions are slow where it matters (tanhf u10 costs ~6x PyTorch's),
// so they use polynomials instead: exp (Cephes) within 1 ULP, tanh (a rational form)
// within a few ULP, far inside PyTorch's float32 tolerance (rtol 1.3e-6, ~11 ULP).
// They need no library, so they are vectorised without SLEEF too.
//
// Lanes outside the polynomials' plain range (|x| > 87 for exp and sigmoid: inf,
// overflow, denormal results; NaN) are recomputed with the scalar functor, so the
// limits match the scalar loop exactly.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "core/isa.h"
#include "backend/cpu/vec_math.h"
#include "ops/activation_functors.h"

namespace lucid::cpu {

#if LUCID_X86_DISPATCH
namespace {

typedef float f32x8 __attribute__((vector_size(32)));
typedef int32_t i32x8 __attribute__((vector_size(32)));
typedef float f32x16 __attribute__((vector_size(64)));
typedef int32_t i32x16 __attribute__((vector_size(64)));

// Always inlined into the AVX2 / AVX-512 loops, so no vector crosses a call (and
// the baseline ABI warnings below do not apply).
#pragma GCC diagnostic ignored "-Wpsabi"
#define LUCID_VINLINE inline __attribute__((always_inline))

// e^x for |x| <= 87 (Cephes expf): x = n ln2 + r, e^r by a degree-7 polynomial
// on |r| <= ln2/2, times 2^n built in the exponent bits.
template <typename V, typename I>
LUCID_VINLINE V exp_core(V x) {
  V t = x * 1.44269504088896341f;
  V n = (t + 12582912.f) - 12582912.f;  // round to nearest (|t| < 2^22)
  V r = x - n * 0.693359375f;
  r = r - n * -2.12194440e-4f;
  V p = r * 1.9875691500E-4f + 1.3981999507E-3f;
  p = p * r + 8.3334519073E-3f;
  p = p * r + 4.1665795894E-2f;
  p = p * r + 1.6666665459E-1f;
  p = p * r + 5.0000001201E-1f;
  V y = p * (r * r) + r + 1.f;
  I e = (__builtin_convertvector(n, I) + 127) << 23;
  return y * (V)e;
}

// tanh as x P(x^2) / Q(x^2), x clamped to +-7.9053 (where the form reaches its top), with
// the degree-13/6 coefficients Eigen uses for float: within 2.4e-7 absolute (a few
// ULP) for one division and 12 multiply-adds. Tiny |x| returns x, which tanh rounds
// to. (Cephes' form, an odd polynomial below 0.625 and 1 - 2 / (e^2|x| + 1) above,
// computed both branches in every lane: twice exp's time, and at 16M elements the
// arithmetic no longer hid under the memory traffic.)
template <typename V>
LUCID_VINLINE V tanh_core(V x) {
  const V top = V{} + 7.90531110763549805f, one = V{} + 1.f;
  V c = x < -top ? -top : x;
  c = c > top ? top : c;
  const V x2 = c * c;
  V p = x2 * -2.76076847742355e-16f + 2.00018790482477e-13f;
  p = p * x2 - 8.60467152213735e-11f;
  p = p * x2 + 5.12229709037114e-08f;
  p = p * x2 + 1.48572235717979e-05f;
  p = p * x2 + 6.37261928875436e-04f;
  p = p * x2 + 4.89352455891786e-03f;
  V q = x2 * 1.19825839466702e-06f + 1.18534705686654e-04f;
  q = q * x2 + 2.26843463243900e-03f;
  q = q * x2 + 4.89352518554385e-03f;
  const V y = p * c / q;
  const V ax = x < 0.f ? -x : x;
  // +-1 from 9 on, where tanh rounds to it; x itself when tiny. A NaN flows through
  // y. (Testing x != x here as well made GCC merge the two masks into one it
  // evaluated lane by lane.)
  const V r = ax >= 9.f ? (x < 0.f ? -one : one) : y;
  return ax < 0.0004f ? x : r;
}

// c[0] u^(N-1) + ... + c[N-1] by Horner's rule (a multiply-add a step).
template <typename V, size_t N>
LUCID_VINLINE V horner(V u, const float (&c)[N]) {
  V p = u * c[0] + c[1];
#pragma GCC unroll 16
  for (size_t k = 2; k < N; ++k) p = p * u + c[k];
  return p;
}

// erf in float, without a division: below 0.921875, x + x Q(x^2), Q a degree-6 fit of
// erf(x)/x - 1 (x added last, so the leading 2/sqrt(pi) is not rounded into a float
// coefficient); from there to 3.9375, where erf has rounded to +-1, 1 - erfc(|x|) with
// erfc(|x|) = e^(-x^2) R(|x|), R a degree-12 fit of erfcx(x) = e^(x^2) erfc(x) in |x| -
// 2.4375. Both are least-squares fits at Chebyshev nodes against mpmath, within 0.94 ULP
// when evaluated in float with fused multiply-adds (simulated over every 61st float of
// [1e-30, 5]), the vector exp adding up to 0.2. Both forms are computed in every lane. A
// NaN flows through the second; +-inf gives +-1; the sign of zero is kept.
// kOnePlus gives 1 + erf(x) instead (gelu's 2 Phi): where erf nears -1 that is erfc(|x|)
// itself, with no cancellation, so gelu keeps its relative accuracy down to x = -5.57
// (beyond, 0, as erf's -1 gave).
// (Before: the degree-13/8 rational Eigen and XLA use, evaluated in double to reach 1.6
// ULP: two halves of the vector, two divisions, 1.5 ns an element where torch's gelu took
// 0.9; and 1 + erf cancelled. SLEEF's erff_u10 cost 4 ns.)
template <bool kOnePlus, typename V, typename I>
LUCID_VINLINE V erf_core(V x) {
  constexpr float kNear = 0.921875f, kFar = 3.9375f;
  static constexpr float kQ[] = {8.438768418e-05f, -8.160783909e-04f, 5.202835891e-03f, -2.686024085e-02f,
                                 1.128371358e-01f,  -3.761263490e-01f, 1.283791661e-01f};
  static constexpr float kR[] = {1.351342576e-07f, -5.221386914e-07f, 1.099626274e-06f, -4.355747933e-06f,
                                 1.886026621e-05f, -6.832950021e-05f, 2.383326209e-04f, -8.171974914e-04f,
                                 2.709280932e-03f, -8.648215793e-03f, 2.649793588e-02f, -7.756081969e-02f,
                                 2.155524790e-01f};
  const V near_zero = x * horner(x * x, kQ) + x;
  const V ax = x < 0.f ? -x : x, zero = V{};
  const V c = ax > kFar ? zero + kFar : ax;
  const V erfc = exp_core<V, I>(-(c * c)) * horner(c - 2.4375f, kR);  // of |x|
  if constexpr (kOnePlus) {
    V far = x < 0.f ? erfc : 2.f - erfc;
    far = ax >= kFar ? (x < 0.f ? zero : zero + 2.f) : far;
    return ax < kNear ? 1.f + near_zero : far;
  } else {
    V far = ax >= kFar ? zero + 1.f : 1.f - erfc;
    far = x < 0.f ? -far : far;
    return ax < kNear ? near_zero : far;
  }
}

// sin or cos for |x| <= 8192 (Cephes sinf/cosf): |x| = j pi/4 + r with j even, r by
// three-part Cody-Waite reduction, then sin's or cos's polynomial on |r| <= pi/4 as the
// octant asks, with its sign. Within 2 ULP of the true value away from the zeros of the
// function (where the absolute error stays under 1e-7 |x|-ish). Only for builds without
// SLEEF, whose 1-ULP versions are used where it is installed (vec_math.cpp).
template <typename V, typename I>
LUCID_VINLINE V sincos_core(V x, bool cosine) {
  const V ax = x < 0.f ? -x : x;
  I j = __builtin_convertvector(ax * 1.27323954473516f, I);
  j = (j + 1) & ~1;
  const V y = __builtin_convertvector(j, V);
  const V r = ((ax - y * 0.78515625f) - y * 2.4187564849853515625e-4f) - y * 3.77489497744594108e-8f;
  const V z = r * r;
  const V c = ((z * 2.443315711809948e-5f - 1.388731625493765e-3f) * z + 4.166664568298827e-2f) * z * z -
              z * 0.5f + 1.f;
  const V sn = ((z * -1.9515295891e-4f + 8.3321608736e-3f) * z - 1.6666654611e-1f) * z * r + r;
  const I q = j & 7;  // the octant pair: 0, 2, 4 or 6
  const V v = (cosine ? (q & 2) == 0 : (q & 2) != 0) ? c : sn;
  // sin(-x) = -sin(x); sin's sign flips from q = 4, cos's on q = 2 and 4
  const I flip = cosine ? ((q + 2) & 4) : ((q & 4) != 0) ^ (x < 0.f);
  return flip != 0 ? -v : v;
}

// Whether any lane of a comparison mask is set: an OR-fold of the halves (a
// lane-by-lane loop would extract every element).
template <int W, typename M>
LUCID_VINLINE bool any_lane(M m) {
  if constexpr (W == 16) {
    m |= __builtin_shufflevector(m, m, 8, 9, 10, 11, 12, 13, 14, 15, 0, 1, 2, 3, 4, 5, 6, 7);
    m |= __builtin_shufflevector(m, m, 4, 5, 6, 7, 0, 1, 2, 3, 4, 5, 6, 7, 0, 1, 2, 3);
    m |= __builtin_shufflevector(m, m, 2, 3, 0, 1, 2, 3, 0, 1, 2, 3, 0, 1, 2, 3, 0, 1);
    m |= __builtin_shufflevector(m, m, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0);
  } else {
    m |= __builtin_shufflevector(m, m, 4, 5, 6, 7, 0, 1, 2, 3);
    m |= __builtin_shufflevector(m, m, 2, 3, 0, 1, 2, 3, 0, 1);
    m |= __builtin_shufflevector(m, m, 1, 0, 1, 0, 1, 0, 1, 0);
  }
  return m[0] != 0;
}

// Lanes where !(|x| <= lim), NaN included, get the scalar function.
template <int W, typename V, typename F>
LUCID_VINLINE V fix_lanes(V x, V y, float lim, F scalar) {
  V ax = x < 0.f ? -x : x;
  auto bad = !(ax <= lim);
  if (__builtin_expect(any_lane<W>(bad), 0)) {
    for (int i = 0; i < W; ++i)
      if (bad[i]) y[i] = scalar(x[i]);
  }
  return y;
}

// The fused activations (ops/activation_functors.h) with the vector erf and exp. gelu is
// its functor's formula; erf's clamp holds its limits (x = +-inf gives the functor's inf
// and NaN). exp's range is silu's and the tanh form's to check (their lanes beyond it,
// and NaN, get the functor).
//
// The tanh form is written with s = sigmoid(2u) = (1 + tanh(u)) / 2, u = sqrt(2/pi) (x +
// 0.044715 x^3): x s, and its derivative s + 2 x u' s (1 - s). The functor's 1 + tanh(u)
// cancels where tanh nears -1 (x < -3), which the vector tanh's 2.4e-7 absolute error made
// 5x the true value at x = -5; sigmoid's exp keeps its relative accuracy there.
template <typename V, typename I>
LUCID_VINLINE V gelu_core(V x) {
  return x * 0.5f * erf_core<true, V, I>(x * float(ops::fn::kSqrtHalf));
}
constexpr float kGeluTanhRange = 9.5f;  // |x| where 2u stays within exp's +-87

// log(1 + y) for 0 <= y <= 1 as 2 atanh(s), s = y / (2 + y) <= 1/3: the odd series to s^13
// (the next term is 1.4e-8 of the result), with no cancellation in 1 + y for small y.
// Within 3 ULP (checked in float32 arithmetic against float64 log1p over [0, 1]).
template <typename V>
LUCID_VINLINE V log1p_unit(V y) {
  const V s = y / (2.f + y);
  const V s2 = s * s;
  V p = s2 * (1.f / 13.f) + (1.f / 11.f);
  p = p * s2 + (1.f / 9.f);
  p = p * s2 + (1.f / 7.f);
  p = p * s2 + (1.f / 5.f);
  p = p * s2 + (1.f / 3.f);
  p = p * s2 + 1.f;
  return 2.f * s * p;
}
// log(1 + e^x) without the threshold, as max(x, 0) + log(1 + e^-|x|), for |x| <= 87.
template <typename V, typename I>
LUCID_VINLINE V softplus_core(V x) {
  const V ax = x < 0.f ? -x : x, zero = V{};
  return (x < 0.f ? zero : x) + log1p_unit(exp_core<V, I>(-ax));
}
template <typename V, typename I>
LUCID_VINLINE V gelu_tanh_sigmoid(V x, V x_sq) {
  const V u = float(ops::fn::kGeluTanhBeta) * (x + float(ops::fn::kGeluTanhKappa) * (x_sq * x));
  return 1.f / (1.f + exp_core<V, I>(-2.f * u));
}

// The polynomial alone, for lanes within its plain range.
template <typename V, typename I>
LUCID_VINLINE V core(ops::UnaryOp op, V x) {
  switch (op) {
    case ops::UnaryOp::Exp: return exp_core<V, I>(x);
    case ops::UnaryOp::Sigmoid: return 1.f / (1.f + exp_core<V, I>(-x));
    case ops::UnaryOp::Sin: return sincos_core<V, I>(x, false);
    case ops::UnaryOp::Cos: return sincos_core<V, I>(x, true);
    case ops::UnaryOp::Erf: return erf_core<false, V, I>(x);
    case ops::UnaryOp::Gelu: return gelu_core<V, I>(x);
    case ops::UnaryOp::GeluTanh: return x * gelu_tanh_sigmoid<V, I>(x, x * x);
    case ops::UnaryOp::Silu: return x / (1.f + exp_core<V, I>(-x));
    case ops::UnaryOp::Softplus: return x > float(ops::fn::kSoftplusThreshold) ? x : softplus_core<V, I>(x);
    case ops::UnaryOp::LogSigmoid: {  // min(x, 0) - log(1 + e^-|x|)
      const V ax = x < 0.f ? -x : x, zero = V{};
      return (x < 0.f ? x : zero) - log1p_unit(exp_core<V, I>(-ax));
    }
    case ops::UnaryOp::Mish: return x * tanh_core(softplus_core<V, I>(x));
    default: return tanh_core(x);
  }
}

// With the out-of-range lanes recomputed by the scalar function (exp, sigmoid).
template <int W, typename V, typename I>
LUCID_VINLINE V apply(ops::UnaryOp op, V x) {
  switch (op) {
    case ops::UnaryOp::Exp: return fix_lanes<W>(x, core<V, I>(op, x), 87.f, [](float v) { return std::exp(v); });
    case ops::UnaryOp::Sigmoid:
      return fix_lanes<W>(x, core<V, I>(op, x), 87.f, [](float v) { return 1.f / (1.f + std::exp(-v)); });
    case ops::UnaryOp::Sin: return fix_lanes<W>(x, core<V, I>(op, x), 8192.f, [](float v) { return std::sin(v); });
    case ops::UnaryOp::Cos: return fix_lanes<W>(x, core<V, I>(op, x), 8192.f, [](float v) { return std::cos(v); });
    case ops::UnaryOp::Silu: return fix_lanes<W>(x, core<V, I>(op, x), 87.f, ops::fn::Silu());
    case ops::UnaryOp::GeluTanh: return fix_lanes<W>(x, core<V, I>(op, x), kGeluTanhRange, ops::fn::GeluTanh());
    case ops::UnaryOp::Softplus: return fix_lanes<W>(x, core<V, I>(op, x), 87.f, ops::fn::Softplus());
    case ops::UnaryOp::LogSigmoid: return fix_lanes<W>(x, core<V, I>(op, x), 87.f, ops::fn::LogSigmoid());
    case ops::UnaryOp::Mish: return fix_lanes<W>(x, core<V, I>(op, x), 87.f, ops::fn::Mish());
    default: return core<V, I>(op, x);
  }
}

// The array loop. Four vectors at a time share one range check (its OR-fold costs
// as much as half the polynomial); the last partial vector goes through a
// zero-padded buffer.
template <int W, typename V, typename I, ops::UnaryOp kOp>
LUCID_VINLINE void run(const void* in, void* out, int64_t n) {
  const float* x = static_cast<const float*>(in);
  float* y = static_cast<float*>(out);
  int64_t i = 0;
  // (tanh's and erf's clamps are their own check, and gelu's)
  constexpr bool kRangeCheck = kOp == ops::UnaryOp::Exp || kOp == ops::UnaryOp::Sigmoid || kOp == ops::UnaryOp::Silu ||
                               kOp == ops::UnaryOp::GeluTanh || kOp == ops::UnaryOp::Softplus ||
                               kOp == ops::UnaryOp::LogSigmoid || kOp == ops::UnaryOp::Mish ||
                               kOp == ops::UnaryOp::Sin || kOp == ops::UnaryOp::Cos;
  if constexpr (kRangeCheck) {
    // |x| beyond the plain range or NaN: the magnitude's bit pattern exceeds the limit's
    // (87.0f: 0x42AE0000; 8192.0f: 0x46000000).
    // (the tanh form's 9.5f: 0x41180000)
    constexpr int32_t kLimitBits = kOp == ops::UnaryOp::Sin || kOp == ops::UnaryOp::Cos ? 0x46000000
                                   : kOp == ops::UnaryOp::GeluTanh                      ? 0x41180000
                                                                                        : 0x42AE0000;
    for (; i + 4 * W <= n; i += 4 * W) {
      I mag = {};
#pragma GCC unroll 4
      for (int k = 0; k < 4; ++k) {
        I b;
        std::memcpy(&b, x + i + k * W, sizeof b);
        b &= 0x7fffffff;
        mag = b > mag ? b : mag;
      }
      const bool bad = any_lane<W>(mag > kLimitBits);
#pragma GCC unroll 4
      for (int k = 0; k < 4; ++k) {
        V v;
        std::memcpy(&v, x + i + k * W, sizeof v);
        v = __builtin_expect(bad, 0) ? apply<W, V, I>(kOp, v) : core<V, I>(kOp, v);
        std::memcpy(y + i + k * W, &v, sizeof v);
      }
    }
  }
  for (; i + W <= n; i += W) {
    V v;
    std::memcpy(&v, x + i, sizeof v);
    v = apply<W, V, I>(kOp, v);
    std::memcpy(y + i, &v, sizeof v);
  }
  if (i < n) {
    float buf[W] = {};
    std::memcpy(buf, x + i, size_t(n - i) * sizeof(float));
    V v;
    std::memcpy(&v, buf, sizeof v);
    v = apply<W, V, I>(kOp, v);
    std::memcpy(buf, &v, sizeof v);
    std::memcpy(y + i, buf, size_t(n - i) * sizeof(float));
  }
}

// With fused multiply-adds: these are approximations within 1-2 ULP either way, and
// need not round like any other loop (the elementwise arithmetic, which must, is
// compiled without them).
template <ops::UnaryOp kOp>
__attribute__((target("avx512f,avx512bw,avx512dq,avx512vl,avx2,fma"))) void run512(const void* in, void* out,
                                                                                    int64_t n) {
  run<16, f32x16, i32x16, kOp>(in, out, n);
}
template <ops::UnaryOp kOp>
__attribute__((target("avx2,fma"))) void run256(const void* in, void* out, int64_t n) {
  run<8, f32x8, i32x8, kOp>(in, out, n);
}

template <ops::UnaryOp kOp>
VecUnaryFn pick(Isa isa) {
  if (isa == Isa::Avx512) return &run512<kOp>;
  static const bool fma = __builtin_cpu_supports("fma");  // every AVX2 CPU but a few VIA ones
  return fma ? &run256<kOp> : nullptr;
}

// ---- the activations' derivatives: out = g f'(x) ----------------------------------------

// The scalar functor of each derivative, for the lanes the vector code leaves to it.
template <ops::BinaryOp kOp> struct ScalarDerivative { using type = ops::fn::SiluBackward; };
template <> struct ScalarDerivative<ops::BinaryOp::GeluBackward> { using type = ops::fn::GeluBackward; };
template <> struct ScalarDerivative<ops::BinaryOp::GeluTanhBackward> { using type = ops::fn::GeluTanhBackward; };
template <> struct ScalarDerivative<ops::BinaryOp::SoftplusBackward> { using type = ops::fn::SoftplusBackward; };
template <> struct ScalarDerivative<ops::BinaryOp::LogSigmoidBackward> { using type = ops::fn::LogSigmoidBackward; };
template <> struct ScalarDerivative<ops::BinaryOp::MishBackward> { using type = ops::fn::MishBackward; };

// The functor's formula (the tanh form's as gelu_tanh_sigmoid says) on lanes within the
// vector exp's range; the others (|x| beyond `lim`, NaN) get the scalar functor, so the
// limits match the scalar loop exactly.
template <int W, typename V, typename I, ops::BinaryOp kOp>
LUCID_VINLINE V derivative(V g, V x) {
  float lim;
  V y;
  if constexpr (kOp == ops::BinaryOp::GeluBackward) {  // exp(-x^2 / 2) in range up to |x| = 13
    lim = 13.f;
    const V cdf = 0.5f * erf_core<true, V, I>(x * float(ops::fn::kSqrtHalf));
    const V pdf = float(ops::fn::kNormalPdf) * exp_core<V, I>(x * x * -0.5f);
    y = g * (cdf + x * pdf);
  } else if constexpr (kOp == ops::BinaryOp::GeluTanhBackward) {  // s + 2 x u' s (1 - s), see gelu_tanh_sigmoid
    lim = kGeluTanhRange;
    const V x_sq = x * x;
    const V s = gelu_tanh_sigmoid<V, I>(x, x_sq);
    const V du = float(ops::fn::kGeluTanhBeta) * (1.f + 3.f * float(ops::fn::kGeluTanhKappa) * x_sq);
    y = g * (s + 2.f * x * du * s * (1.f - s));
  } else if constexpr (kOp == ops::BinaryOp::SoftplusBackward) {  // g sigmoid(x), g above the threshold
    lim = 87.f;
    y = x > float(ops::fn::kSoftplusThreshold) ? g : g / (1.f + exp_core<V, I>(-x));
  } else if constexpr (kOp == ops::BinaryOp::LogSigmoidBackward) {  // g sigmoid(-x)
    lim = 87.f;
    y = g / (1.f + exp_core<V, I>(x));
  } else if constexpr (kOp == ops::BinaryOp::MishBackward) {  // g (t + x s (1 - t^2))
    lim = 87.f;
    const V s = 1.f / (1.f + exp_core<V, I>(-x));
    const V t = tanh_core(softplus_core<V, I>(x));
    y = g * (t + x * s * (1.f - t * t));
  } else {
    lim = 87.f;
    const V s = 1.f / (1.f + exp_core<V, I>(-x));
    y = g * s * (1.f + x * (1.f - s));
  }
  using Scalar = typename ScalarDerivative<kOp>::type;
  const auto bad = !((x < 0.f ? -x : x) <= lim);
  if (__builtin_expect(any_lane<W>(bad), 0)) {
    for (int i = 0; i < W; ++i)
      if (bad[i]) y[i] = Scalar()(g[i], x[i]);
  }
  return y;
}

template <int W, typename V, typename I, ops::BinaryOp kOp>
LUCID_VINLINE void run2(void* out, const void* ga, const void* xa, int64_t n) {
  const float* g = static_cast<const float*>(ga);
  const float* x = static_cast<const float*>(xa);
  float* y = static_cast<float*>(out);
  int64_t i = 0;
  for (; i + W <= n; i += W) {
    V u, v;
    std::memcpy(&u, g + i, sizeof u);
    std::memcpy(&v, x + i, sizeof v);
    v = derivative<W, V, I, kOp>(u, v);
    std::memcpy(y + i, &v, sizeof v);
  }
  if (i < n) {  // through zero-padded buffers
    float gb[W] = {}, xb[W] = {};
    std::memcpy(gb, g + i, size_t(n - i) * sizeof(float));
    std::memcpy(xb, x + i, size_t(n - i) * sizeof(float));
    V u, v;
    std::memcpy(&u, gb, sizeof u);
    std::memcpy(&v, xb, sizeof v);
    v = derivative<W, V, I, kOp>(u, v);
    std::memcpy(xb, &v, sizeof v);
    std::memcpy(y + i, xb, size_t(n - i) * sizeof(float));
  }
}

template <ops::BinaryOp kOp>
__attribute__((target("avx512f,avx512bw,avx512dq,avx512vl,avx2,fma"))) void run2_512(void* out, const void* g,
                                                                                      const void* x, int64_t n) {
  run2<16, f32x16, i32x16, kOp>(out, g, x, n);
}
template <ops::BinaryOp kOp>
__attribute__((target("avx2,fma"))) void run2_256(void* out, const void* g, const void* x, int64_t n) {
  run2<8, f32x8, i32x8, kOp>(out, g, x, n);
}

template <ops::BinaryOp kOp>
VecBinaryFn pick2(Isa isa) {
  if (isa == Isa::Avx512) return &run2_512<kOp>;
  static const bool fma = __builtin_cpu_supports("fma");
  return fma ? &run2_256<kOp> : nullptr;
}

}  // namespace

VecUnaryFn vec_f32_activation(ops::UnaryOp op, Isa isa) {
  if (isa == Isa::Baseline) return nullptr;
  switch (op) {
    case ops::UnaryOp::Exp: return pick<ops::UnaryOp::Exp>(isa);
    case ops::UnaryOp::Tanh: return pick<ops::UnaryOp::Tanh>(isa);
    case ops::UnaryOp::Sigmoid: return pick<ops::UnaryOp::Sigmoid>(isa);
    case ops::UnaryOp::Erf: return pick<ops::UnaryOp::Erf>(isa);
    case ops::UnaryOp::Gelu: return pick<ops::UnaryOp::Gelu>(isa);
    case ops::UnaryOp::GeluTanh: return pick<ops::UnaryOp::GeluTanh>(isa);
    case ops::UnaryOp::Silu: return pick<ops::UnaryOp::Silu>(isa);
    case ops::UnaryOp::Softplus: return pick<ops::UnaryOp::Softplus>(isa);
    case ops::UnaryOp::LogSigmoid: return pick<ops::UnaryOp::LogSigmoid>(isa);
    case ops::UnaryOp::Mish: return pick<ops::UnaryOp::Mish>(isa);
    default: return nullptr;
  }
}

VecBinaryFn vec_f32_activation_backward(ops::BinaryOp op, Isa isa) {
  if (isa == Isa::Baseline) return nullptr;
  switch (op) {
    case ops::BinaryOp::GeluBackward: return pick2<ops::BinaryOp::GeluBackward>(isa);
    case ops::BinaryOp::GeluTanhBackward: return pick2<ops::BinaryOp::GeluTanhBackward>(isa);
    case ops::BinaryOp::SiluBackward: return pick2<ops::BinaryOp::SiluBackward>(isa);
    case ops::BinaryOp::SoftplusBackward: return pick2<ops::BinaryOp::SoftplusBackward>(isa);
    case ops::BinaryOp::LogSigmoidBackward: return pick2<ops::BinaryOp::LogSigmoidBackward>(isa);
    case ops::BinaryOp::MishBackward: return pick2<ops::BinaryOp::MishBackward>(isa);
    default: return nullptr;
  }
}

VecUnaryFn vec_f32_sincos(ops::UnaryOp op, Isa isa) {
  if (isa == Isa::Baseline) return nullptr;
  if (op == ops::UnaryOp::Sin) return pick<ops::UnaryOp::Sin>(isa);
  if (op == ops::UnaryOp::Cos) return pick<ops::UnaryOp::Cos>(isa);
  return nullptr;
}
#else
VecUnaryFn vec_f32_activation(ops::UnaryOp, Isa) { return nullptr; }
VecBinaryFn vec_f32_activation_backward(ops::BinaryOp, Isa) { return nullptr; }
VecUnaryFn vec_f32_sincos(ops::UnaryOp, Isa) { return nullptr; }
#endif

}  // namespace lucid::cpu
