// The values of the creation primitives (ops/prims/creation.h), element by element,
// shared by the CPU and CUDA kernels so both devices make the same bits.
#pragma once

#include <cmath>
#include <complex>
#include <cstdint>
#include <type_traits>

#include "core/half.h"

namespace lucid::backend {

// A computed value (int64 or double) stored as T: complex gets a zero imaginary
// part, 16-bit floats convert through float.
template <typename T, typename V>
LUCID_HD T store_as(V v) {
  if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>) return T(float(v));
  else if constexpr (std::is_arithmetic_v<T>) return static_cast<T>(v);
  else return T(float(v), 0.f);  // complex64 (std:: or cuda::std::complex<float>)
}

// linspace's values as PyTorch computes them: in the output type itself (double for
// integer and complex outputs), the first half forward from start and the second half
// backward from end so both endpoints are exact. float16/bfloat16 arithmetic rounds
// after every operation, as c10::Half's operators do.
template <typename T>
struct LinspaceValues {
  static constexpr bool kNative = std::is_same_v<T, float> || std::is_same_v<T, double>;
  static constexpr bool kReduced = std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>;
  using S = std::conditional_t<kNative, T, std::conditional_t<kReduced, float, double>>;

  S start, end, step;
  int64_t steps, half;
  bool log;
  double base;

  LUCID_HD static S rd(S x) {
    if constexpr (kReduced) return float(T(x));
    else return x;
  }
  LUCID_HD LinspaceValues(double start_d, double end_d, int64_t n, bool has_base, double log_base)
      : start(rd(S(start_d))), end(rd(S(end_d))), steps(n), half(n > 1 ? n / 2 : 1), log(has_base),
        base(log_base) {
    step = n > 1 ? rd(rd(end - start) / rd(S(n - 1))) : S(0);  // a single step is `start`
  }
  LUCID_HD double operator()(int64_t i) const {
    double v = i < half ? double(rd(start + rd(step * rd(S(i))))) : double(rd(end - rd(step * rd(S(steps - i - 1)))));
    return log ? std::pow(base, v) : v;
  }
};

}  // namespace lucid::backend
