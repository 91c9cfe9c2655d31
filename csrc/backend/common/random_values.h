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
