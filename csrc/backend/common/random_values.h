// How Philox words become values (ops/prims/random.h), shared by the CPU and CUDA
// kernels so that both devices map the same words to the same values.
#pragma once

#include <cmath>
#include <cstdint>
#include <type_traits>

#include "core/generator.h"
#include "core/half.h"
#include "core/philox.h"
#include "ops/prims/random.h"  // (ElementLaw)

namespace lucid::backend {

// The 16-bit types only convert from and to float, so conversions go through it.
template <typename T, typename V>
LUCID_HD T cast_to(V v) {
  if constexpr (kIsHalfFloat<T>) return T(float(v));
  else return static_cast<T>(v);
}
template <typename T>
LUCID_HD double to_double(T v) {
  if constexpr (kIsHalfFloat<T>) return double(float(v));
  else return double(v);
}

// A uniform u in [0, 1) mapped to [from, to) in T. u * range + from can round up to
// `to` (always possible in the 16-bit types); mapping it to `from` keeps the interval
// half-open.
template <typename T, typename Acc>
LUCID_HD T uniform_value(Acc u, Acc from, Acc to) {
  T v = cast_to<T>(u * (to - from) + from);
  if (Acc(to_double(v)) >= to && from < to) v = cast_to<T>(from);
  return v;
}

// Box-Muller: two uniforms give two independent normals, r*cos(theta), r*sin(theta).
// 1 - u1 lies in (0, 1], so log never sees 0 and r stays finite.
template <typename Acc>
LUCID_HD void normal_pair(Acc u1, Acc u2, Acc mean, Acc stdv, Acc& z0, Acc& z1) {
  const Acc r = std::sqrt(Acc(-2) * std::log(Acc(1) - u1)) * stdv;
  const Acc theta = Acc(6.283185307179586476925) * u2;
  z0 = r * std::cos(theta) + mean;
  z1 = r * std::sin(theta) + mean;
}

// Note [Element streams]
// A Poisson, gamma or binomial sample takes as many uniforms as its rejection loop needs, so
// element i reads a stream of its own: Philox blocks with counter (offset + j, i + 1)
// in words (0..1, 2..3), j = 0, 1, ... (subsequence i + 1: never the fills' subsequence
// 0). A call reserves kElementStreamBlocks (ops/prims/random.h) values of j, 512
// uniforms; a Poisson sample needs about rate + 1 uniforms below rate 10 and two or
// three above, a gamma sample three a round (a normal's two and one), with rounds
// accepted at least 95% of the time, a binomial one n p + 1 by inversion (n p < 10) or
// two a round of BTRS, so no stream runs into the next call's. Both
// devices walk the same stream with the same double arithmetic.
struct ElementStream {
  uint64_t seed, offset, subsequence;
  uint64_t block = 0;
  int used = 2;  // doubles taken from r (two per block)
  Philox4 r{};
  LUCID_HD double next() {
    if (used == 2) {
      const uint64_t b = offset + block++;
      uint32_t ctr[4] = {uint32_t(b), uint32_t(b >> 32), uint32_t(subsequence), uint32_t(subsequence >> 32)};
      uint32_t key[2] = {uint32_t(seed), uint32_t(seed >> 32)};
      r = philox4x32(ctr, key);
      used = 0;
    }
    const int k = 2 * used++;
    return uniform_f64(r.x[k], r.x[k + 1]);
  }
};

// One Poisson(rate) sample of element i of the draw: Knuth's product of uniforms below
// rate 10, above it Hormann's transformed rejection (PTRS, 1993), as numpy and torch.
LUCID_HD inline double poisson_sample(const PhiloxDraw& draw, uint64_t i, double rate) {
  if (!(rate > 0.0)) return rate == 0.0 ? 0.0 : rate;  // (NaN stays NaN)
  ElementStream s{draw.seed, draw.offset, i + 1};
  if (rate < 10.0) {
    const double limit = exp(-rate);
    double product = 1.0, k = 0.0;
    while (true) {
      product *= s.next();
      if (product <= limit) return k;
      k += 1.0;
    }
  }
  const double slam = sqrt(rate), loglam = log(rate);
  const double b = 0.931 + 2.53 * slam, a = -0.059 + 0.02483 * b;
  const double invalpha = 1.1239 + 1.1328 / (b - 3.4), vr = 0.9277 - 3.6224 / (b - 2.0);
  while (true) {
    const double u = s.next() - 0.5, v = s.next();
    const double us = 0.5 - fabs(u);
    const double k = floor((2.0 * a / us + b) * u + rate + 0.43);
    if (us >= 0.07 && v <= vr) return k;
    if (k < 0.0 || (us < 0.013 && v > us)) continue;
    if (log(v) + log(invalpha) - log(a / (us * us) + b) <= -rate + k * loglam - lgamma(k + 1.0)) return k;
  }
}

// One Gamma(alpha, 1) sample of element i of the draw: Marsaglia and Tsang's
// squeeze-and-reject (2000), which numpy and torch use, its normal from two uniforms
// (Box-Muller's first); below alpha 1, a sample for alpha + 1 scaled by u^(1 / alpha).
// alpha <= 0 or NaN gives 0, infinity infinity (torch's results, once clamped).
LUCID_HD inline double gamma_sample(const PhiloxDraw& draw, uint64_t i, double alpha) {
  if (!(alpha > 0.0)) return 0.0;
  if (alpha == INFINITY) return alpha;
  ElementStream s{draw.seed, draw.offset, i + 1};
  double scale = 1.0;
  if (alpha < 1.0) {
    scale = pow(1.0 - s.next(), 1.0 / alpha);
    alpha += 1.0;
  }
  const double d = alpha - 1.0 / 3.0, c = 1.0 / sqrt(9.0 * d);
  while (true) {
    double x, y;
    do {
      const double u1 = s.next(), u2 = s.next();
      x = sqrt(-2.0 * log(1.0 - u1)) * cos(6.283185307179586476925 * u2);
      y = 1.0 + c * x;
    } while (y <= 0.0);
    const double v = y * y * y, u = 1.0 - s.next(), xx = x * x;
    if (u < 1.0 - 0.0331 * xx * xx || log(u) < 0.5 * xx + d * (1.0 - v + log(v))) return scale * d * v;
  }
}

// One Binomial(n, p) sample of element i of the draw, p at most 1/2: below n p = 10 by
// inversion (counting geometric waiting times until they pass n), above by Hormann's
// transformed rejection with squeeze (BTRS, 1993), as torch (after TensorFlow).
LUCID_HD inline double binomial_below_half(ElementStream& s, double n, double p) {
  if (n * p < 10.0) {
    const double log_q = log1p(-p);
    double waited = 0.0, successes = 0.0;
    while (true) {
      waited += ceil(log(s.next()) / log_q);
      if (waited > n) return successes;
      successes += 1.0;
    }
  }
  const double spq = sqrt(n * p * (1.0 - p));
  const double b = 1.15 + 2.53 * spq, a = -0.0873 + 0.0248 * b + 0.01 * p, c = n * p + 0.5;
  const double v_r = 0.92 - 4.2 / b, alpha = (2.83 + 5.1 / b) * spq;
  const double log_r = log(p / (1.0 - p)), m = floor((n + 1.0) * p);
  const double h = lgamma(m + 1.0) + lgamma(n - m + 1.0);
  while (true) {
    const double u = s.next() - 0.5, v = s.next();
    const double us = 0.5 - fabs(u);
    const double k = floor((2.0 * a / us + b) * u + c);
    if (k < 0.0 || k > n) continue;
    if (us >= 0.07 && v <= v_r) return k;
    // log f(k) / f(m) against the hat's log v
    if (log(v * alpha / (a / (us * us) + b)) <= h - lgamma(k + 1.0) - lgamma(n - k + 1.0) + (k - m) * log_r) return k;
  }
}

// torch.binomial's element: NaN for a NaN count or probability (torch's loop never ends
// on a NaN count), 0 for a count or probability at most 0, n for a probability at least
// 1; above 1/2, n less a sample of 1 - p.
LUCID_HD inline double binomial_sample(const PhiloxDraw& draw, uint64_t i, double n, double p) {
  if (n != n || p != p) return n + p;
  if (n <= 0.0 || p <= 0.0) return 0.0;
  if (p >= 1.0) return n;
  ElementStream s{draw.seed, draw.offset, i + 1};
  return p > 0.5 ? n - binomial_below_half(s, n, 1.0 - p) : binomial_below_half(s, n, p);
}

// The smallest normal number of T, the least gamma sample torch gives.
template <typename T>
LUCID_HD T smallest_normal() {
  if constexpr (std::is_same_v<T, double>) return T(2.2250738585072014e-308);
  else if constexpr (std::is_same_v<T, Half>) return T(6.103515625e-05f);
  else return T(1.17549435082228751e-38f);  // (float and bfloat16: one exponent range)
}

// Element i of a RandomPerElement draw (ops/prims/random.h) of `law` with its element's
// parameters (the rate; the concentration; the count and the probability), in T.
template <typename T>
LUCID_HD T element_sample(ops::ElementLaw law, const PhiloxDraw& draw, uint64_t i, double a, double b) {
  switch (law) {
    case ops::ElementLaw::Poisson: return cast_to<T>(poisson_sample(draw, i, a));
    case ops::ElementLaw::Binomial: return cast_to<T>(binomial_sample(draw, i, a, b));
    default: {
      const T v = cast_to<T>(gamma_sample(draw, i, a));
      const T least = smallest_normal<T>();
      return to_double(v) < to_double(least) ? least : v;
    }
  }
}

// Fisher-Yates from the top: step s swaps slot i = n-1-s with a uniform j in [0, i].
// Each step takes one 64-bit word, two steps per Philox block. Sequential.
template <typename T>
LUCID_HD void fisher_yates(T* p, int64_t n, const PhiloxDraw& draw) {
  for (int64_t i = 0; i < n; ++i) p[i] = cast_to<T>(i);
  const uint64_t steps = n > 1 ? uint64_t(n - 1) : 0;
  Philox4 r{};
  for (uint64_t s = 0; s < steps; ++s) {
    if ((s & 1) == 0) r = draw.block(s >> 1);
    const int k = int(s & 1) * 2;
    const uint64_t w = (uint64_t(r.x[k]) << 32) | r.x[k + 1];
    const int64_t i = n - 1 - int64_t(s);
    const int64_t j = int64_t(bounded_u64(w, uint64_t(i) + 1));
    const T tmp = p[i];
    p[i] = p[j];
    p[j] = tmp;
  }
}

}  // namespace lucid::backend
