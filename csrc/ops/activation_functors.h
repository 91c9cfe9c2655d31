// Functors of the fused activations (torch.nn.functional.gelu, silu, hardsigmoid,
// hardswish, softplus with its default beta and threshold, logsigmoid, mish) and of their
// derivatives, the table's _gelu ... _mish_backward (elementwise_table.h). Each is one
// pass over memory where the composite it replaces was five (gelu: a multiply, erf, an
// add and two multiplies), two (silu) or four and more (the hard ones: comparisons and
// wheres; softplus: a scale, logaddexp, a comparison and a where), and its backward as
// many again.
//
// The formulas and their order of operations are ATen's (GeluKernel.cpp, Activation.cpp),
// so results agree with torch's to the rounding of erf, tanh and exp. fused_codegen.cpp
// writes the same expressions for the generated GPU kernels.
#pragma once

#include <cmath>
#include <type_traits>

namespace lucid::ops::fn {

inline constexpr double kSqrtHalf = 0.70710678118654752440;    // 1 / sqrt(2)
inline constexpr double kNormalPdf = 0.39894228040143267794;   // 1 / sqrt(2 pi)
inline constexpr double kGeluTanhBeta = 0.79788456080286535588;  // sqrt(2 / pi)
inline constexpr double kGeluTanhKappa = 0.044715;

// x Phi(x), Phi the standard normal's distribution function. ATen writes Phi as
// (1 + erf(x / sqrt 2)) / 2, which cancels to 0 below x = -5.5 in float; erfc(-x / sqrt 2)
// is the same function and keeps its relative accuracy in that tail (as the CPU's vector
// path does, vec_exp.cpp).
struct Gelu {
  template <typename T> static constexpr bool supports = std::is_floating_point_v<T>;
  template <typename T> LUCID_HD T operator()(T x) const { return x * T(0.5) * std::erfc(-x * T(kSqrtHalf)); }
};
// gelu(x, approximate='tanh'): x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))) / 2.
struct GeluTanh {
  template <typename T> static constexpr bool supports = std::is_floating_point_v<T>;
  template <typename T> LUCID_HD T operator()(T x) const {
    const T inner = T(kGeluTanhBeta) * (x + T(kGeluTanhKappa) * (x * x * x));
    return T(0.5) * x * (T(1) + std::tanh(inner));
  }
};
// x sigmoid(x); complex too, as torch's (which has no gradient for it).
struct Silu {
  template <typename T> static constexpr bool supports = std::is_floating_point_v<T> || kIsComplex<T>;
  template <typename T> LUCID_HD T operator()(T x) const {
    if constexpr (kIsComplex<T>) return x / (T(1) + cmath::exp(-x));
    else return x / (T(1) + std::exp(-x));
  }
};

// relu6(x + 3) / 6, and x times it. max and min as std::'s (a NaN first operand is kept),
// written out so that device code computes the same. hardsigmoid divides before it clamps
// to [0, 1]: the same values (division by 6 is monotonic, 6 / 6 is 1, -0.0 and NaN
// pass), and GCC vectorises that form, where it kept a branch per element of torch's
// min(max(x + 3, 0), 6) / 6 (a quarter of the elements mispredicted: 16x the time).
template <typename T> LUCID_HD T relu6_of_shifted(T x) {
  const T s = x + T(3);
  const T m = s < T(0) ? T(0) : s;
  return T(6) < m ? T(6) : m;
}
struct Hardsigmoid {
  template <typename T> static constexpr bool supports = std::is_floating_point_v<T>;
  template <typename T> LUCID_HD T operator()(T x) const {
    const T q = (x + T(3)) / T(6);
    const T m = q < T(0) ? T(0) : q;
    return T(1) < m ? T(1) : m;
  }
};
struct Hardswish {
  template <typename T> static constexpr bool supports = std::is_floating_point_v<T>;
  template <typename T> LUCID_HD T operator()(T x) const { return x * relu6_of_shifted(x) / T(6); }
};

// softplus(x) with torch's defaults (beta 1, threshold 20): x above 20, log(1 + e^x)
// below (0 where e^x underflows; NaN at NaN).
inline constexpr double kSoftplusThreshold = 20.0;
struct Softplus {
  template <typename T> static constexpr bool supports = std::is_floating_point_v<T>;
  template <typename T> LUCID_HD T operator()(T x) const {
    return x > T(kSoftplusThreshold) ? x : std::log1p(std::exp(x));
  }
};
// log(sigmoid(x)) = min(x, 0) - log(1 + e^-|x|), finite for every finite x.
struct LogSigmoid {
  template <typename T> static constexpr bool supports = std::is_floating_point_v<T>;
  template <typename T> LUCID_HD T operator()(T x) const {
    const T m = x < T(0) ? x : T(0);  // (std::min(0, x): 0 at NaN, which the log1p's NaN replaces)
    return m - std::log1p(std::exp(-std::fabs(x)));
  }
};
// x tanh(softplus(x)), softplus without a threshold (as torch's mish).
struct Mish {
  template <typename T> static constexpr bool supports = std::is_floating_point_v<T>;
  template <typename T> LUCID_HD T operator()(T x) const { return x * std::tanh(std::log1p(std::exp(x))); }
};

// g gelu'(x) = g (Phi(x) + x phi(x)).
struct GeluBackward {
  template <typename T> static constexpr bool supports = std::is_floating_point_v<T>;
  template <typename T> LUCID_HD T operator()(T g, T x) const {
    const T cdf = T(0.5) * std::erfc(-x * T(kSqrtHalf));  // (as Gelu's)
    const T pdf = T(kNormalPdf) * std::exp(x * x * T(-0.5));
    return g * (cdf + x * pdf);
  }
};
// g times the tanh form's derivative: (1 + t) / 2 + x (1 - t^2) u' / 2, t = tanh(u).
struct GeluTanhBackward {
  template <typename T> static constexpr bool supports = std::is_floating_point_v<T>;
  template <typename T> LUCID_HD T operator()(T g, T x) const {
    const T x_sq = x * x;
    const T inner = T(kGeluTanhBeta) * (x + T(kGeluTanhKappa) * (x_sq * x));
    const T t = std::tanh(inner);
    const T left = T(0.5) * x, right = T(1) + t;
    const T left_derivative = T(0.5) * right;
    const T tanh_derivative = T(1) - t * t;
    const T inner_derivative = T(kGeluTanhBeta) * (T(1) + T(3) * T(kGeluTanhKappa) * x_sq);
    return g * (left_derivative + left * tanh_derivative * inner_derivative);
  }
};
// g silu'(x) = g s (1 + x (1 - s)), s = sigmoid(x).
struct SiluBackward {
  template <typename T> static constexpr bool supports = std::is_floating_point_v<T>;
  template <typename T> LUCID_HD T operator()(T g, T x) const {
    const T s = T(1) / (T(1) + std::exp(-x));
    return g * s * (T(1) + x * (T(1) - s));
  }
};

// g sigmoid(x) as e^x / (e^x + 1), g itself above the threshold (torch's softplus_backward).
struct SoftplusBackward {
  template <typename T> static constexpr bool supports = std::is_floating_point_v<T>;
  template <typename T> LUCID_HD T operator()(T g, T x) const {
    const T z = std::exp(x);
    return x > T(kSoftplusThreshold) ? g : g * z / (z + T(1));
  }
};
// g sigmoid(-x), written as torch's log_sigmoid_backward: g (1 - z / (1 + z)) below 0 and
// g z / (1 + z) from 0 on, z = e^-|x|.
struct LogSigmoidBackward {
  template <typename T> static constexpr bool supports = std::is_floating_point_v<T>;
  template <typename T> LUCID_HD T operator()(T g, T x) const {
    const T z = std::exp(-std::fabs(x));
    const T q = z / (T(1) + z);
    return x < T(0) ? g * (T(1) - q) : g * q;
  }
};
// g mish'(x) = g (t + x s (1 - t^2)), t = tanh(softplus(x)), s = sigmoid(x) (torch's).
struct MishBackward {
  template <typename T> static constexpr bool supports = std::is_floating_point_v<T>;
  template <typename T> LUCID_HD T operator()(T g, T x) const {
    const T s = T(1) / (T(1) + std::exp(-x));
    const T t = std::tanh(std::log1p(std::exp(x)));
    return g * (t + x * s * (T(1) - t * t));
  }
};

// The activations with a parameter p, as binary ops f(x, p) (p a number, or prelu's
// weight): leaky_relu(x, slope) is x above 0 and x slope elsewhere (NaN at NaN), as
// torch's leaky_relu, prelu and rrelu (eval) are; its derivative, 1 above 0 and slope
// elsewhere, is a second op (times g: torch's leaky_relu_backward).
struct LeakyRelu {
  template <typename T> static constexpr bool supports = std::is_floating_point_v<T>;
  template <typename T> LUCID_HD T operator()(T x, T slope) const { return x > T(0) ? x : x * slope; }
};
struct LeakyReluSlope {
  template <typename T> static constexpr bool supports = std::is_floating_point_v<T>;
  template <typename T> LUCID_HD T operator()(T x, T slope) const { return x > T(0) ? T(1) : slope; }
};
// softshrink(x, l): x - l above l, x + l below -l, x * 0 between (0, -0 at -0, NaN at NaN).
struct Softshrink {
  template <typename T> static constexpr bool supports = std::is_floating_point_v<T>;
  template <typename T> LUCID_HD T operator()(T x, T l) const {
    const T inside = x < -l ? x + l : x * T(0);
    return x > l ? x - l : inside;
  }
};
// hardshrink(x, l): 0 on [-l, l], x elsewhere (and at NaN).
struct Hardshrink {
  template <typename T> static constexpr bool supports = std::is_floating_point_v<T>;
  template <typename T> LUCID_HD T operator()(T x, T l) const { return ((x >= -l) & (x <= l)) ? T(0) : x; }
};
// The shrinks' gradient from their result y (l >= 0): y is 0 exactly where x lies on
// [-l, l] (x - l > 0 for every x > l), where the gradient is 0; g elsewhere (a NaN y too).
struct ShrinkBackward {
  template <typename T> static constexpr bool supports = std::is_floating_point_v<T>;
  template <typename T> LUCID_HD T operator()(T g, T y) const { return y == T(0) ? T(0) : g; }
};

// The hard activations' derivatives as selects of values computed for every element, which
// vectorise (their unit is compiled with -fno-trapping-math, so that GCC may compare a
// NaN without a branch: lucid never reads the floating-point exception flags).
// g / 6 strictly inside (-3, 3), else 0 (a NaN x too).
struct HardsigmoidBackward {
  template <typename T> static constexpr bool supports = std::is_floating_point_v<T>;
  template <typename T> LUCID_HD T operator()(T g, T x) const {
    const T d = g * T(1.0 / 6.0);
    return ((x > T(-3)) & (x < T(3))) ? d : T(0);
  }
};
// 0 up to -3, g (x / 3 + 1/2) below 3, g from 3 on (and at NaN).
struct HardswishBackward {
  template <typename T> static constexpr bool supports = std::is_floating_point_v<T>;
  template <typename T> LUCID_HD T operator()(T g, T x) const {
    const T inside = g * (x / T(3) + T(0.5));
    const T above = x < T(3) ? inside : g;
    return x <= T(-3) ? T(0) : above;
  }
};

}  // namespace lucid::ops::fn
