// Every elementwise op, listed once. Each entry names the op (its Python name),
// its functor and its dtype rule; the enum, the names, the kernels, the bindings
// and the test enrolment are generated from these tables.
//
// Functors are LUCID_HD so the CUDA kernels can share them. They see the compute
// type (float for float16/bfloat16, the dtype itself otherwise).
#pragma once

#include <cmath>
#include <complex>
#if defined(__CUDACC__)
#include <cuda/std/complex>
#endif

#include "core/half.h"

namespace lucid::ops {

// Dtype rules:
//   Arith    out = common dtype of the inputs (torch.result_type)
//   TrueDiv  out = common dtype, integers and bool promoted to the default float
//   Compare  computed in the common dtype, out = bool
//   Same     unary, out = input dtype (square promotes bool to int64, as torch's pow)
//   Float    unary, integers and bool promoted to the default float
//   Predicate unary, computed in the input dtype, out = bool (isnan, logical_not)
// Binary ops also say whether an operand may be a Python number (Any), only the
// second may be (Self: torch.eq(2, t) is a TypeError; checked by the function
// bindings only, so VJPs may still compare a number with a tensor), or both must
// be tensors (Tensors), as torch.maximum requires.
// Names starting with "_" are internal ops (div(rounding_mode='trunc')); they are
// bound under that name but are not part of the public API.
#define LUCID_BINARY_OPS(X)              \
  X(add, Add, Arith, Any)                \
  X(sub, Sub, Arith, Any)                \
  X(mul, Mul, Arith, Any)                \
  X(div, Div, TrueDiv, Any)              \
  X(maximum, Maximum, Arith, Tensors)    \
  X(minimum, Minimum, Arith, Tensors)    \
  X(eq, Eq, Compare, Self)                \
  X(ne, Ne, Compare, Self)                \
  X(lt, Lt, Compare, Self)                \
  X(le, Le, Compare, Self)                \
  X(gt, Gt, Compare, Self)                \
  X(ge, Ge, Compare, Self)                \
  X(floor_divide, FloorDivide, Arith, Any) \
  X(_div_trunc, DivTrunc, Arith, Any)    \
  X(remainder, Remainder, Arith, Any)    \
  X(fmod, Fmod, Arith, Self)              \
  X(pow, Pow, Arith, Any)                \
  X(fmax, Fmax, Arith, Tensors)          \
  X(fmin, Fmin, Arith, Tensors)          \
  X(atan2, Atan2, TrueDiv, Tensors)      \
  X(hypot, Hypot, Arith, Tensors)        \
  X(xlogy, Xlogy, TrueDiv, Any)          \
  X(logaddexp, Logaddexp, Arith, Tensors) \
  X(logaddexp2, Logaddexp2, Arith, Tensors) \
  X(logical_and, LogicalAnd, Compare, Tensors) \
  X(logical_or, LogicalOr, Compare, Tensors) \
  X(logical_xor, LogicalXor, Compare, Tensors) \
  X(bitwise_and, BitwiseAnd, Arith, Any) \
  X(bitwise_or, BitwiseOr, Arith, Any)   \
  X(bitwise_xor, BitwiseXor, Arith, Any) \
  X(bitwise_left_shift, LeftShift, Arith, Any) \
  X(bitwise_right_shift, RightShift, Arith, Any) \
  X(special_zeta, Zeta, TrueDiv, Any) \
  X(igamma, Igamma, TrueDiv, Tensors) \
  X(igammac, Igammac, TrueDiv, Tensors) \
  X(gcd, Gcd, Arith, Tensors)            \
  X(lcm, Lcm, Arith, Tensors)            \
  X(nextafter, Nextafter, Arith, Tensors) \
  X(special_chebyshev_polynomial_t, ChebyshevT, TrueDiv, Any) \
  X(special_chebyshev_polynomial_u, ChebyshevU, TrueDiv, Any) \
  X(special_chebyshev_polynomial_v, ChebyshevV, TrueDiv, Any) \
  X(special_chebyshev_polynomial_w, ChebyshevW, TrueDiv, Any) \
  X(special_hermite_polynomial_h, HermiteH, TrueDiv, Any) \
  X(special_hermite_polynomial_he, HermiteHe, TrueDiv, Any) \
  X(special_laguerre_polynomial_l, LaguerreL, TrueDiv, Any) \
  X(special_legendre_polynomial_p, LegendreP, TrueDiv, Any) \
  X(_threshold_backward, ThresholdBackward, Arith, Tensors) \
  X(_gelu_backward, GeluBackward, TrueDiv, Tensors) \
  X(_gelu_tanh_backward, GeluTanhBackward, TrueDiv, Tensors) \
  X(_silu_backward, SiluBackward, TrueDiv, Tensors) \
  X(_hardsigmoid_backward, HardsigmoidBackward, TrueDiv, Tensors) \
  X(_hardswish_backward, HardswishBackward, TrueDiv, Tensors) \
  X(_softplus_backward, SoftplusBackward, TrueDiv, Tensors) \
  X(_log_sigmoid_backward, LogSigmoidBackward, TrueDiv, Tensors) \
  X(_mish_backward, MishBackward, TrueDiv, Tensors) \
  X(_leaky_relu, LeakyRelu, Arith, Self) \
  X(_leaky_relu_slope, LeakyReluSlope, Arith, Self) \
  X(_softshrink, Softshrink, Arith, Self) \
  X(_hardshrink, Hardshrink, Arith, Self) \
  X(_shrink_backward, ShrinkBackward, Arith, Tensors)

#define LUCID_UNARY_OPS(X) \
  X(neg, Neg, Same)        \
  X(abs, Abs, Same)        \
  X(sign, Sign, Same)      \
  X(exp, Exp, Float)       \
  X(log, Log, Float)       \
  X(sqrt, Sqrt, Float)     \
  X(sin, Sin, Float)       \
  X(cos, Cos, Float)       \
  X(tanh, Tanh, Float)     \
  X(sigmoid, Sigmoid, Float)   \
  X(exp2, Exp2, Float)         \
  X(expm1, Expm1, Float)       \
  X(log2, Log2, Float)         \
  X(log10, Log10, Float)       \
  X(log1p, Log1p, Float)       \
  X(tan, Tan, Float)           \
  X(asin, Asin, Float)         \
  X(acos, Acos, Float)         \
  X(atan, Atan, Float)         \
  X(sinh, Sinh, Float)         \
  X(cosh, Cosh, Float)         \
  X(asinh, Asinh, Float)       \
  X(acosh, Acosh, Float)       \
  X(atanh, Atanh, Float)       \
  X(erf, Erf, Float)           \
  X(erfc, Erfc, Float)         \
  X(erfinv, Erfinv, Float)     \
  X(reciprocal, Reciprocal, Float) \
  X(rsqrt, Rsqrt, Float)       \
  X(logit, Logit, Float)       \
  X(lgamma, Lgamma, Float)     \
  X(digamma, Digamma, Float)   \
  X(i0, I0, Float)             \
  X(special_i0e, I0e, Float)   \
  X(special_i1, I1, Float)     \
  X(special_i1e, I1e, Float)   \
  X(special_erfcx, Erfcx, Float) \
  X(special_bessel_j0, BesselJ0, Float) \
  X(special_bessel_j1, BesselJ1, Float) \
  X(special_bessel_y0, BesselY0, Float) \
  X(special_bessel_y1, BesselY1, Float) \
  X(special_modified_bessel_k0, BesselK0, Float) \
  X(special_modified_bessel_k1, BesselK1, Float) \
  X(special_scaled_modified_bessel_k0, BesselK0e, Float) \
  X(special_scaled_modified_bessel_k1, BesselK1e, Float) \
  X(special_airy_ai, AiryAi, Float) \
  X(_gelu, Gelu, Float)        \
  X(_gelu_tanh, GeluTanh, Float) \
  X(_silu, Silu, Float)        \
  X(_hardsigmoid, Hardsigmoid, Float) \
  X(_hardswish, Hardswish, Float) \
  X(_softplus, Softplus, Float) \
  X(_log_sigmoid, LogSigmoid, Float) \
  X(_mish, Mish, Float)        \
  X(floor, Floor, Same)        \
  X(ceil, Ceil, Same)          \
  X(round, Round, Same)        \
  X(trunc, Trunc, Same)        \
  X(frac, Frac, Same)          \
  X(square, Square, Same)      \
  X(relu, Relu, Same)          \
  X(bitwise_not, BitwiseNot, Same) \
  X(isnan, Isnan, Predicate)   \
  X(isinf, Isinf, Predicate)   \
  X(isfinite, Isfinite, Predicate) \
  X(isposinf, Isposinf, Predicate) \
  X(isneginf, Isneginf, Predicate) \
  X(logical_not, LogicalNot, Predicate)

enum class DtypeRule { Arith, TrueDiv, Compare, Same, Float, Predicate };
enum class Operands { Any, Self, Tensors };

template <typename T> struct IsComplexT : std::false_type {};
template <> struct IsComplexT<std::complex<float>> : std::true_type {};
template <> struct IsComplexT<std::complex<double>> : std::true_type {};
#if defined(__CUDACC__)
template <> struct IsComplexT<::cuda::std::complex<float>> : std::true_type {};  // the CUDA units' complex64
template <> struct IsComplexT<::cuda::std::complex<double>> : std::true_type {};  // and complex128
#endif
template <typename T> inline constexpr bool kIsComplex = IsComplexT<T>::value;
template <typename T> inline constexpr bool kIsBool = std::is_same_v<T, bool>;

// Signed integer arithmetic that wraps on overflow (two's complement, as PyTorch's
// results do) without undefined behaviour: computed in the unsigned type. Other
// types (narrow ints promote to int and cannot overflow) compute as written.
template <typename T> inline constexpr bool kWrapsSigned = std::is_integral_v<T> && std::is_signed_v<T> &&
                                                           sizeof(T) >= sizeof(int) && !std::is_same_v<T, bool>;
template <typename T> using WrapU = std::make_unsigned_t<std::conditional_t<kWrapsSigned<T>, T, int>>;

namespace fn {

// `supports<T>` says which compute types an op is defined for; the others raise
// "<op> is not implemented for dtype <d>" when the op is called (elementwise_support.cpp).
struct Add {
  template <typename T> static constexpr bool supports = true;
  template <typename T> LUCID_HD T operator()(T a, T b) const {
    if constexpr (kIsBool<T>) return a || b;
    else if constexpr (kWrapsSigned<T>) return T(WrapU<T>(a) + WrapU<T>(b));
    else return a + b;
  }
};
struct Sub {
  template <typename T> static constexpr bool supports = !kIsBool<T>;
  template <typename T> LUCID_HD T operator()(T a, T b) const {
    if constexpr (kWrapsSigned<T>) return T(WrapU<T>(a) - WrapU<T>(b));
    else return a - b;
  }
};
struct Mul {
  template <typename T> static constexpr bool supports = true;
  template <typename T> LUCID_HD T operator()(T a, T b) const {
    if constexpr (kIsBool<T>) return a && b;
    else if constexpr (kWrapsSigned<T>) return T(WrapU<T>(a) * WrapU<T>(b));
    else return a * b;
  }
};
struct Div {  // true division: the dtype rule makes the compute type floating
  template <typename T> static constexpr bool supports = std::is_floating_point_v<T> || kIsComplex<T>;
  template <typename T> LUCID_HD T operator()(T a, T b) const { return a / b; }
};
// The larger (kMax) or smaller of two values; NaN propagates, as torch.maximum
// and torch.minimum do.
template <bool kMax>
struct Extremum {
  template <typename T> static constexpr bool supports = !kIsComplex<T>;
  template <typename T> LUCID_HD T operator()(T a, T b) const {
    if constexpr (std::is_floating_point_v<T>) {
      if (a != a) return a;
      if (b != b) return b;
    }
    return (kMax ? a > b : a < b) ? a : b;
  }
};
using Maximum = Extremum<true>;
using Minimum = Extremum<false>;
// relu's gradient from its result: the incoming gradient g where y > 0, else 0 (a NaN y
// passes g), torch's threshold_backward(g, y, 0): one op where le + where were two.
struct ThresholdBackward {
  template <typename T> static constexpr bool supports = !kIsComplex<T> && !std::is_same_v<T, bool>;
  template <typename T> LUCID_HD T operator()(T g, T y) const { return y <= T(0) ? T(0) : g; }
};
struct Eq {
  template <typename T> static constexpr bool supports = true;
  template <typename T> LUCID_HD bool operator()(T a, T b) const { return a == b; }
};
struct Ne {
  template <typename T> static constexpr bool supports = true;
  template <typename T> LUCID_HD bool operator()(T a, T b) const { return a != b; }
};
struct Lt {
  template <typename T> static constexpr bool supports = !kIsComplex<T>;
  template <typename T> LUCID_HD bool operator()(T a, T b) const { return a < b; }
};
struct Le {
  template <typename T> static constexpr bool supports = !kIsComplex<T>;
  template <typename T> LUCID_HD bool operator()(T a, T b) const { return a <= b; }
};
struct Gt {
  template <typename T> static constexpr bool supports = !kIsComplex<T>;
  template <typename T> LUCID_HD bool operator()(T a, T b) const { return a > b; }
};
struct Ge {
  template <typename T> static constexpr bool supports = !kIsComplex<T>;
  template <typename T> LUCID_HD bool operator()(T a, T b) const { return a >= b; }
};

struct Neg {
  template <typename T> static constexpr bool supports = !kIsBool<T>;
  template <typename T> LUCID_HD T operator()(T a) const {
    if constexpr (kWrapsSigned<T>) return T(WrapU<T>(0) - WrapU<T>(a));
    else return -a;
  }
};
struct Abs {  // complex abs returns a real dtype in PyTorch: not yet here
  template <typename T> static constexpr bool supports = !kIsBool<T> && !kIsComplex<T>;
  template <typename T> LUCID_HD T operator()(T a) const {
    if constexpr (std::is_unsigned_v<T>) return a;
    else if constexpr (kWrapsSigned<T>) return a < T(0) ? T(WrapU<T>(0) - WrapU<T>(a)) : a;
    else return a < T(0) ? T(-a) : a;
  }
};
struct Sign {  // -1, 0 or 1; NaN gives 0, as torch's (0 < a) - (a < 0)
  template <typename T> static constexpr bool supports = !kIsComplex<T>;
  template <typename T> LUCID_HD T operator()(T a) const {
    if constexpr (kIsBool<T>) return a;
    else if constexpr (std::is_floating_point_v<T>) return a > T(0) ? T(1) : a < T(0) ? T(-1) : T(0);
    else if constexpr (std::is_unsigned_v<T>) return T(a != 0);
    else return T((a > T(0)) - (a < T(0)));
  }
};
// The Float-rule ops see float, double or a complex type.
#define LUCID_FLOAT_UNARY(Name, expr)                                                        \
  struct Name {                                                                              \
    template <typename T> static constexpr bool supports = std::is_floating_point_v<T> || kIsComplex<T>; \
    template <typename T> LUCID_HD T operator()(T a) const { using std::exp, std::log, std::sqrt, \
      std::sin, std::cos, std::tanh; return expr; }                                          \
  };
LUCID_FLOAT_UNARY(Exp, exp(a))
LUCID_FLOAT_UNARY(Log, log(a))
LUCID_FLOAT_UNARY(Sqrt, sqrt(a))
LUCID_FLOAT_UNARY(Sin, sin(a))
LUCID_FLOAT_UNARY(Cos, cos(a))
LUCID_FLOAT_UNARY(Tanh, tanh(a))
LUCID_FLOAT_UNARY(Sigmoid, T(1) / (T(1) + exp(-a)))
#undef LUCID_FLOAT_UNARY

}  // namespace fn
}  // namespace lucid::ops

#include "ops/elementwise_functors.h"
#include "ops/activation_functors.h"

namespace lucid::ops {

enum class BinaryOp {
#define LUCID_ENUM(name, Fn, rule, operands) Fn,
  LUCID_BINARY_OPS(LUCID_ENUM)
#undef LUCID_ENUM
};
enum class UnaryOp {
#define LUCID_ENUM(name, Fn, rule) Fn,
  LUCID_UNARY_OPS(LUCID_ENUM)
#undef LUCID_ENUM
};

constexpr DtypeRule rule_of(BinaryOp op) {
  switch (op) {
#define LUCID_RULE(name, Fn, rule, operands) case BinaryOp::Fn: return DtypeRule::rule;
    LUCID_BINARY_OPS(LUCID_RULE)
#undef LUCID_RULE
  }
  return DtypeRule::Arith;
}
constexpr DtypeRule rule_of(UnaryOp op) {
  switch (op) {
#define LUCID_RULE(name, Fn, rule) case UnaryOp::Fn: return DtypeRule::rule;
    LUCID_UNARY_OPS(LUCID_RULE)
#undef LUCID_RULE
  }
  return DtypeRule::Same;
}

}  // namespace lucid::ops
