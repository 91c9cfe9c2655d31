// Functors of the second half of the elementwise table (elementwise_table.h):
// integer division and remainders, powers, the float binary functions, bitwise
// ops, and the unary math, rounding and predicate ops. LUCID_HD so the CUDA
// kernels can share them. Every math call is std::-qualified: the ops namespace
// also has tensor functions named floor, pow, ... that must not be found here.
//
// Formulas follow ATen's (c10/util/..., native/BinaryOps.h) so that results agree
// bit for bit where it matters: floor division, remainder signs, logaddexp at inf.
#pragma once

#include <cmath>
#include <complex>
#include <limits>
#include <type_traits>

#include "ops/polynomial_math.h"
#include "ops/special_math.h"

namespace lucid::ops::fn {

// Complex math for the complex branches below: std:: on the host, ::cuda::std:: in the
// CUDA units, whose complex64 is ::cuda::std::complex<float> (std::complex has no device
// code: its kernels would compile to empty bodies).
namespace cmath {
#if defined(__CUDACC__)
using ::cuda::std::acos, ::cuda::std::acosh, ::cuda::std::asin, ::cuda::std::asinh, ::cuda::std::atan, ::cuda::std::atanh,
    ::cuda::std::cosh, ::cuda::std::exp, ::cuda::std::log, ::cuda::std::log10, ::cuda::std::pow, ::cuda::std::sinh,
    ::cuda::std::sqrt, ::cuda::std::tan;
#else
using std::acos, std::acosh, std::asin, std::asinh, std::atan, std::atanh, std::cosh, std::exp, std::log,
    std::log10, std::pow, std::sinh, std::sqrt, std::tan;
#endif
}  // namespace cmath

template <typename T> inline constexpr bool kIsFloat = std::is_floating_point_v<T>;
template <typename T> inline constexpr bool kIsInt = std::is_integral_v<T> && !std::is_same_v<T, bool>;

// The integer ops guard b == -1: INT_MIN / -1 traps on x86 (torch wraps). a / -1 is
// then Neg's -a, which wraps at INT_MIN without undefined behaviour.
struct DivTrunc {
  template <typename T> static constexpr bool supports = kIsFloat<T> || kIsInt<T>;
  template <typename T> LUCID_HD T operator()(T a, T b) const {
    if constexpr (kIsFloat<T>) return std::trunc(a / b);
    else if constexpr (std::is_signed_v<T>) return b == T(-1) ? Neg{}(a) : T(a / b);
    else return a / b;
  }
};
struct FloorDivide {
  template <typename T> static constexpr bool supports = kIsFloat<T> || kIsInt<T>;
  template <typename T> LUCID_HD T operator()(T a, T b) const {
    if constexpr (kIsFloat<T>) {
      if (b == T(0)) return a / b;
      T mod = std::fmod(a, b);
      T div = (a - mod) / b;
      if (mod != T(0) && (b < T(0)) != (mod < T(0))) div -= T(1);
      if (div == T(0)) return std::copysign(T(0), a / b);
      T floordiv = std::floor(div);
      if (div - floordiv > T(0.5)) floordiv += T(1);
      return floordiv;
    } else if constexpr (std::is_signed_v<T>) {
      if (b == T(-1)) return Neg{}(a);
      T q = T(a / b), r = T(a % b);
      return (r != T(0) && ((a < T(0)) != (b < T(0)))) ? T(q - 1) : q;
    } else {
      return a / b;
    }
  }
};
struct Remainder {  // Python's %: the sign of the divisor
  template <typename T> static constexpr bool supports = kIsFloat<T> || kIsInt<T>;
  template <typename T> LUCID_HD T operator()(T a, T b) const {
    if constexpr (kIsFloat<T>) {
      T mod = std::fmod(a, b);
      if (mod != T(0) && (b < T(0)) != (mod < T(0))) mod += b;
      return mod;
    } else if constexpr (std::is_signed_v<T>) {
      if (b == T(-1)) return T(0);
      T r = T(a % b);
      return (r != T(0) && ((r < T(0)) != (b < T(0)))) ? T(r + b) : r;
    } else {
      return a % b;
    }
  }
};
struct Fmod {  // C's fmod: the sign of the dividend
  template <typename T> static constexpr bool supports = kIsFloat<T> || kIsInt<T>;
  template <typename T> LUCID_HD T operator()(T a, T b) const {
    if constexpr (kIsFloat<T>) return std::fmod(a, b);
    else if constexpr (std::is_signed_v<T>) return b == T(-1) ? T(0) : T(a % b);
    else return a % b;
  }
};
// Integer powers by squaring; a negative exponent gives 0 except for bases 1 and -1
// (the ops layer raises for a negative Python-number exponent, as torch does).
struct Pow {
  template <typename T> static constexpr bool supports = true;  // bool: only a number exponent (ops layer)
  template <typename T> LUCID_HD T operator()(T a, T b) const {
    if constexpr (kIsBool<T>) {
      return a || !b;
    } else if constexpr (kIsFloat<T> || kIsComplex<T>) {
      // torch's exact special cases (pow_tensor_scalar_optimized_kernel)
      if (b == T(2)) return a * a;
      if (b == T(3)) return a * a * a;
      if (b == T(-1)) return T(1) / a;
      if (b == T(-2)) return T(1) / (a * a);
      if constexpr (kIsComplex<T>) {
        if (b == T(0.5)) return cmath::sqrt(a);
        if (b == T(-0.5)) return T(1) / cmath::sqrt(a);
        return cmath::pow(a, b);
      } else {
        if (b == T(0.5)) return std::sqrt(a);
        if (b == T(-0.5)) return T(1) / std::sqrt(a);
        return std::pow(a, b);
      }
    } else {
      if constexpr (std::is_signed_v<T>) {
        if (b < T(0)) return a == T(1) ? T(1) : a == T(-1) ? T((b & 1) ? -1 : 1) : T(0);
      }
      using U = std::make_unsigned_t<decltype(a * b)>;  // wrap on overflow, no UB
      U result = 1, base = U(a);
      for (auto e = b; e; e = decltype(e)(e / 2)) {
        if (e & 1) result *= base;
        base *= base;
      }
      return T(result);
    }
  }
};
// fmax/fmin: like maximum/minimum, but a NaN loses to a number.
template <bool kMax>
struct FExtremum {
  template <typename T> static constexpr bool supports = !kIsComplex<T>;
  template <typename T> LUCID_HD T operator()(T a, T b) const {
    if constexpr (kIsFloat<T>) {
      if (a != a) return b;
      if (b != b) return a;
    }
    return (kMax ? a > b : a < b) ? a : b;
  }
};
using Fmax = FExtremum<true>;
using Fmin = FExtremum<false>;
struct Atan2 {
  template <typename T> static constexpr bool supports = kIsFloat<T>;
  template <typename T> LUCID_HD T operator()(T a, T b) const { return std::atan2(a, b); }
};
struct Hypot {
  template <typename T> static constexpr bool supports = kIsFloat<T>;
  template <typename T> LUCID_HD T operator()(T a, T b) const { return std::hypot(a, b); }
};
struct Xlogy {  // x * log(y), 0 where x == 0 (unless y is NaN)
  template <typename T> static constexpr bool supports = kIsFloat<T>;
  template <typename T> LUCID_HD T operator()(T x, T y) const {
    if (y != y) return y;
    if (x == T(0)) return T(0);
    return x * std::log(y);
  }
};
template <bool kBase2>
struct LogAddExpT {
  template <typename T> static constexpr bool supports = kIsFloat<T> || (!kBase2 && kIsComplex<T>);
  template <typename T> LUCID_HD T operator()(T a, T b) const {
    if constexpr (kIsComplex<T>) {  // the operand of larger real part factored out
      T m = a.real() >= b.real() ? a : b, o = a.real() >= b.real() ? b : a;
      if (std::isinf(m.real()) && a == b) return a;
      return m + cmath::log(T(1) + cmath::exp(o - m));
    } else {
      if (std::isinf(a) && a == b) return a;  // inf - inf would be NaN
      T m = a > b ? a : b;
      if (a != a || b != b) return std::numeric_limits<T>::quiet_NaN();
      T d = -std::fabs(a - b);
      if constexpr (kBase2) return m + std::log1p(std::exp2(d)) / T(0.6931471805599453);
      else return m + std::log1p(std::exp(d));
    }
  }
};
using Logaddexp = LogAddExpT<false>;
using Logaddexp2 = LogAddExpT<true>;

template <typename T> LUCID_HD bool truth(T a) { return a != T(0); }
struct LogicalAnd {
  template <typename T> static constexpr bool supports = true;
  template <typename T> LUCID_HD bool operator()(T a, T b) const { return truth(a) && truth(b); }
};
struct LogicalOr {
  template <typename T> static constexpr bool supports = true;
  template <typename T> LUCID_HD bool operator()(T a, T b) const { return truth(a) || truth(b); }
};
struct LogicalXor {
  template <typename T> static constexpr bool supports = true;
  template <typename T> LUCID_HD bool operator()(T a, T b) const { return truth(a) != truth(b); }
};

#define LUCID_BITWISE(Name, op)                                                              \
  struct Name {                                                                              \
    template <typename T> static constexpr bool supports = std::is_integral_v<T>;            \
    template <typename T> LUCID_HD T operator()(T a, T b) const { return T(a op b); }        \
  };
LUCID_BITWISE(BitwiseAnd, &)
LUCID_BITWISE(BitwiseOr, |)
LUCID_BITWISE(BitwiseXor, ^)
#undef LUCID_BITWISE
// Shifts by the type's width or more (or by a negative count) give 0, or the sign
// for a right shift of a signed value, as in ATen.
struct LeftShift {
  template <typename T> static constexpr bool supports = kIsInt<T>;
  template <typename T> LUCID_HD T operator()(T a, T b) const {
    constexpr T bits = T(sizeof(T) * 8);
    if (b < T(0) || b >= bits) return T(0);
    return T(std::make_unsigned_t<T>(a) << b);
  }
};
struct RightShift {
  template <typename T> static constexpr bool supports = kIsInt<T>;
  template <typename T> LUCID_HD T operator()(T a, T b) const {
    constexpr T bits = T(sizeof(T) * 8);
    if (b < T(0) || b >= bits) {
      if constexpr (std::is_signed_v<T>) return T(a >> (bits - 1));
      else return T(0);
    }
    return T(a >> b);
  }
};

// ---- unary ---------------------------------------------------------------------

constexpr double kLn2 = 0.6931471805599453, kLn10 = 2.302585092994046;

// The float ops see float, double or (where listed) a complex type.
#define LUCID_UNARY_FC(Name, real, cplx)                                                     \
  struct Name {                                                                              \
    template <typename T> static constexpr bool supports = kIsFloat<T> || kIsComplex<T>;     \
    template <typename T> LUCID_HD T operator()(T a) const {                                 \
      if constexpr (kIsComplex<T>) return cplx;                                              \
      else return real;                                                                      \
    }                                                                                        \
  };
#define LUCID_UNARY_F(Name, real)                                                            \
  struct Name {                                                                              \
    template <typename T> static constexpr bool supports = kIsFloat<T>;                      \
    template <typename T> LUCID_HD T operator()(T a) const { return real; }                  \
  };
LUCID_UNARY_FC(Exp2, std::exp2(a), cmath::exp(a * T(kLn2)))
LUCID_UNARY_FC(Expm1, std::expm1(a), cmath::exp(a) - T(1))
LUCID_UNARY_FC(Log2, std::log2(a), cmath::log(a) / T(kLn2))
LUCID_UNARY_FC(Log10, std::log10(a), cmath::log10(a))
LUCID_UNARY_FC(Log1p, std::log1p(a), cmath::log(T(1) + a))
LUCID_UNARY_FC(Tan, std::tan(a), cmath::tan(a))
LUCID_UNARY_FC(Asin, std::asin(a), cmath::asin(a))
LUCID_UNARY_FC(Acos, std::acos(a), cmath::acos(a))
LUCID_UNARY_FC(Atan, std::atan(a), cmath::atan(a))
LUCID_UNARY_FC(Sinh, std::sinh(a), cmath::sinh(a))
LUCID_UNARY_FC(Cosh, std::cosh(a), cmath::cosh(a))
LUCID_UNARY_FC(Asinh, std::asinh(a), cmath::asinh(a))
LUCID_UNARY_FC(Acosh, std::acosh(a), cmath::acosh(a))
LUCID_UNARY_FC(Atanh, std::atanh(a), cmath::atanh(a))
LUCID_UNARY_FC(Reciprocal, T(1) / a, T(1) / a)
LUCID_UNARY_FC(Rsqrt, T(1) / std::sqrt(a), T(1) / cmath::sqrt(a))
LUCID_UNARY_F(Erf, std::erf(a))
LUCID_UNARY_F(Erfc, std::erfc(a))
LUCID_UNARY_F(Logit, std::log(a / (T(1) - a)))
#undef LUCID_UNARY_FC
#undef LUCID_UNARY_F

// Inverse error function: Giles' single-precision approximation refined by two
// Newton steps in double, so it is accurate in float64 too.
struct Erfinv {
  template <typename T> static constexpr bool supports = kIsFloat<T>;
  template <typename T> LUCID_HD T operator()(T a) const {
    double y = double(a);
    if (y != y || y < -1.0 || y > 1.0) return std::numeric_limits<T>::quiet_NaN();
    if (y == 1.0 || y == -1.0) return T(y * std::numeric_limits<double>::infinity());
    double w = -std::log((1.0 - y) * (1.0 + y)), p;
    if (w < 5.0) {
      w -= 2.5;
      p = 2.81022636e-08;
      p = 3.43273939e-07 + p * w; p = -3.5233877e-06 + p * w; p = -4.39150654e-06 + p * w;
      p = 0.00021858087 + p * w;  p = -0.00125372503 + p * w; p = -0.00417768164 + p * w;
      p = 0.246640727 + p * w;    p = 1.50140941 + p * w;
    } else {
      w = std::sqrt(w) - 3.0;
      p = -0.000200214257;
      p = 0.000100950558 + p * w; p = 0.00134934322 + p * w;  p = -0.00367342844 + p * w;
      p = 0.00573950773 + p * w;  p = -0.0076224613 + p * w;  p = 0.00943887047 + p * w;
      p = 1.00167406 + p * w;     p = 2.83297682 + p * w;
    }
    double x = p * y;
    for (int i = 0; i < 2; ++i) x -= (std::erf(x) - y) / (1.1283791670955126 * std::exp(-x * x));
    return T(x);
  }
};

// Rounding keeps integer dtypes (a no-op there); round is half to even.
#define LUCID_ROUNDING(Name, f)                                                              \
  struct Name {                                                                              \
    template <typename T> static constexpr bool supports = kIsFloat<T> || kIsInt<T>;         \
    template <typename T> LUCID_HD T operator()(T a) const {                                 \
      if constexpr (kIsFloat<T>) return f(a);                                                \
      else return a;                                                                         \
    }                                                                                        \
  };
LUCID_ROUNDING(Floor, std::floor)
LUCID_ROUNDING(Ceil, std::ceil)
LUCID_ROUNDING(Round, std::nearbyint)
LUCID_ROUNDING(Trunc, std::trunc)
#undef LUCID_ROUNDING
struct Frac {
  template <typename T> static constexpr bool supports = kIsFloat<T>;
  template <typename T> LUCID_HD T operator()(T a) const { return a - std::trunc(a); }
};
struct Square {  // bool arrives as int64 (the ops layer promotes it, as torch's pow does)
  template <typename T> static constexpr bool supports = !kIsBool<T>;
  template <typename T> LUCID_HD T operator()(T a) const { return T(a * a); }
};
// NaN stays NaN. -0 stays -0 on the CPU and becomes +0 on the GPU, as in torch (its CPU
// kernel keeps x unless x < 0; its CUDA kernel is max(x, 0)); cuBLASLt's RELU epilogue,
// which a flush may fuse into the product before a relu (Note [Product epilogues]),
// gives +0 too, so fused and unfused results keep the same bits.
struct Relu {
  template <typename T> static constexpr bool supports = kIsFloat<T> || kIsInt<T>;
  template <typename T> LUCID_HD T operator()(T a) const {
#ifdef __CUDA_ARCH__
    return a > T(0) || a != a ? a : T(0);
#else
    return a < T(0) ? T(0) : a;
#endif
  }
};
struct BitwiseNot {
  template <typename T> static constexpr bool supports = std::is_integral_v<T>;
  template <typename T> LUCID_HD T operator()(T a) const {
    if constexpr (kIsBool<T>) return !a;
    else return T(~a);
  }
};

// Predicates: bool out. Integers are never NaN or infinite.
template <typename T> LUCID_HD bool is_nan_v(T a) {
  if constexpr (kIsComplex<T>) return a.real() != a.real() || a.imag() != a.imag();
  else if constexpr (kIsFloat<T>) return a != a;
  else return false;
}
template <typename T> LUCID_HD bool is_inf_v(T a) {
  if constexpr (kIsComplex<T>) return std::isinf(a.real()) || std::isinf(a.imag());
  else if constexpr (kIsFloat<T>) return std::isinf(a);
  else return false;
}
struct Isnan {
  template <typename T> static constexpr bool supports = true;
  template <typename T> LUCID_HD bool operator()(T a) const { return is_nan_v(a); }
};
struct Isinf {
  template <typename T> static constexpr bool supports = true;
  template <typename T> LUCID_HD bool operator()(T a) const { return is_inf_v(a); }
};
struct Isfinite {
  template <typename T> static constexpr bool supports = true;
  template <typename T> LUCID_HD bool operator()(T a) const { return !is_nan_v(a) && !is_inf_v(a); }
};
template <bool kPos>
struct IsSignedInf {
  template <typename T> static constexpr bool supports = !kIsComplex<T>;
  template <typename T> LUCID_HD bool operator()(T a) const {
    if constexpr (kIsFloat<T>) return std::isinf(a) && (kPos ? a > T(0) : a < T(0));
    else return false;
  }
};
using Isposinf = IsSignedInf<true>;
using Isneginf = IsSignedInf<false>;
struct LogicalNot {
  template <typename T> static constexpr bool supports = true;
  template <typename T> LUCID_HD bool operator()(T a) const { return a == T(0); }
};

// The Special unit (special_math.h): float and double, each computed in double and
// rounded once.
#define LUCID_SPECIAL_UNARY(Name, expr)                                                      \
  struct Name {                                                                              \
    template <typename T> static constexpr bool supports = kIsFloat<T>;                      \
    template <typename T> LUCID_HD T operator()(T a) const {                                 \
      const double x = double(a);                                                            \
      return T(expr);                                                                        \
    }                                                                                        \
  };
LUCID_SPECIAL_UNARY(Lgamma, std::lgamma(x))
LUCID_SPECIAL_UNARY(Digamma, special::digamma(x))
LUCID_SPECIAL_UNARY(I0, special::bessel_i(0, x, false))
LUCID_SPECIAL_UNARY(I0e, special::bessel_i(0, x, true))
LUCID_SPECIAL_UNARY(I1, special::bessel_i(1, x, false))
LUCID_SPECIAL_UNARY(I1e, special::bessel_i(1, x, true))
LUCID_SPECIAL_UNARY(Erfcx, special::erfcx(x))
LUCID_SPECIAL_UNARY(BesselJ0, special::bessel_j(0, x))
LUCID_SPECIAL_UNARY(BesselJ1, special::bessel_j(1, x))
LUCID_SPECIAL_UNARY(BesselY0, special::bessel_y(0, x))
LUCID_SPECIAL_UNARY(BesselY1, special::bessel_y(1, x))
LUCID_SPECIAL_UNARY(BesselK0, special::bessel_k(0, x, false))
LUCID_SPECIAL_UNARY(BesselK1, special::bessel_k(1, x, false))
LUCID_SPECIAL_UNARY(BesselK0e, special::bessel_k(0, x, true))
LUCID_SPECIAL_UNARY(BesselK1e, special::bessel_k(1, x, true))
LUCID_SPECIAL_UNARY(AiryAi, special::airy_ai(x))
#undef LUCID_SPECIAL_UNARY
// |a| as the unsigned type (where |INT_MIN| fits).
template <typename T> LUCID_HD std::make_unsigned_t<T> magnitude(T a) {
  using U = std::make_unsigned_t<T>;
  if constexpr (std::is_signed_v<T>) return a < T(0) ? U(-U(a)) : U(a);
  else return U(a);
}
// The greatest common divisor and least common multiple of integers, non-negative
// (Euclid's algorithm on the magnitudes; gcd(0, 0) = 0, lcm(0, x) = 0), as torch's.
struct Gcd {
  template <typename T> static constexpr bool supports = kIsInt<T>;
  template <typename T> LUCID_HD T operator()(T a, T b) const {
    auto x = magnitude(a), y = magnitude(b);
    while (y != 0) {
      const auto r = decltype(x)(x % y);
      x = y;
      y = r;
    }
    return T(x);
  }
};
struct Lcm {
  template <typename T> static constexpr bool supports = kIsInt<T>;
  template <typename T> LUCID_HD T operator()(T a, T b) const {
    const T g = Gcd{}(a, b);
    if (g == T(0)) return T(0);
    using U = std::make_unsigned_t<T>;
    return T(U(magnitude(a) / U(g)) * magnitude(b));  // (wraps past the type's range, as torch's)
  }
};
struct Nextafter {  // the next representable value after a towards b
  template <typename T> static constexpr bool supports = kIsFloat<T>;
  template <typename T> LUCID_HD T operator()(T a, T b) const { return std::nextafter(a, b); }
};
struct Igamma {  // the regularized lower incomplete gamma function P(a, x)
  template <typename T> static constexpr bool supports = kIsFloat<T>;
  template <typename T> LUCID_HD T operator()(T a, T x) const { return T(special::igamma(double(a), double(x), false)); }
};
struct Igammac {  // the regularized upper incomplete gamma function Q(a, x)
  template <typename T> static constexpr bool supports = kIsFloat<T>;
  template <typename T> LUCID_HD T operator()(T a, T x) const { return T(special::igamma(double(a), double(x), true)); }
};
struct Zeta {  // the Hurwitz zeta function zeta(x, q)
  template <typename T> static constexpr bool supports = kIsFloat<T>;
  template <typename T> LUCID_HD T operator()(T x, T q) const { return T(special::zeta(double(x), double(q))); }
};

// torch.special's orthogonal polynomials p_n(x) (ops/polynomial_math.h), n a floating
// degree truncated as torch's; float and double (16-bit inputs computed in float).
#define LUCID_POLYNOMIAL_FUNCTOR(Name, fn)                                                      \
  struct Name {                                                                                 \
    template <typename T> static constexpr bool supports = kIsFloat<T>;                         \
    template <typename T> LUCID_HD T operator()(T x, T n) const { return poly::fn(x, poly::degree(n)); } \
  };
LUCID_POLYNOMIAL_FUNCTOR(ChebyshevT, chebyshev_t)
LUCID_POLYNOMIAL_FUNCTOR(ChebyshevU, chebyshev_u)
LUCID_POLYNOMIAL_FUNCTOR(ChebyshevV, chebyshev_v)
LUCID_POLYNOMIAL_FUNCTOR(ChebyshevW, chebyshev_w)
LUCID_POLYNOMIAL_FUNCTOR(HermiteH, hermite_h)
LUCID_POLYNOMIAL_FUNCTOR(HermiteHe, hermite_he)
LUCID_POLYNOMIAL_FUNCTOR(LaguerreL, laguerre_l)
LUCID_POLYNOMIAL_FUNCTOR(LegendreP, legendre_p)
#undef LUCID_POLYNOMIAL_FUNCTOR

}  // namespace lucid::ops::fn
