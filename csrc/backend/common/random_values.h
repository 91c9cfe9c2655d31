// How Philox words become values (ops/prims/random.h), shared by the CPU and CUDA
// kernels so that both devices map the same words to the same values.
#pragma once

#include <cmath>
#include <cstdint>
#include <type_traits>

#include "core/generator.h"
#include "core/half.h"
#include "core/philox.h"

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

// Note [Poisson streams]
// A Poisson sample takes as many uniforms as its rejection loop needs, so element i
// reads a stream of its own: Philox blocks with counter (offset + j, i + 1) in words
// (0..1, 2..3), j = 0, 1, ... (subsequence i + 1: never the fills' subsequence 0). A
// call reserves kPoissonBlocks (ops/prims/random.h) values of j; a sample needs about
// rate + 1 uniforms below rate 10 and two or three above, so no stream runs into the
// next call's. Both devices walk the same stream with the same double arithmetic.
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
