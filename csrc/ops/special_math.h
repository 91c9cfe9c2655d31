// Special functions of the elementwise table's Special unit (elementwise_functors.h):
// digamma, the Hurwitz zeta function, the regularized incomplete gamma functions, the modified Bessel functions I0 and I1 (plain and
// exponentially scaled) and the scaled complementary error function. Double precision
// on host and device (LUCID_HD); float inputs are computed in double and rounded once.
//
// digamma and zeta follow Cephes (psi.c, zeta.c), as PyTorch's do, so results agree to
// the last bits. I0 and I1 are their power series below |x| = 20, where every term is
// positive, and their asymptotic series above, whose terms shrink to below 1e-17 of the
// sum there before they would grow: both to within a few units in the last place.
#pragma once

#include <cmath>
#include <limits>

#include "core/half.h"  // LUCID_HD

namespace lucid::ops::special {

inline constexpr double kPi = 3.14159265358979323846;
inline constexpr double kMachEp = 1.11022302462515654042e-16;  // 2^-53

// psi(x) for x > 0 (Cephes' psi: the recurrence up to 10, then the asymptotic series).
LUCID_HD inline double digamma_positive(double x) {
  double result = 0;
  while (x < 10) {  // psi(x) = psi(x + 1) - 1 / x
    result -= 1 / x;
    x += 1;
  }
  if (x == 10) return result + 2.25175258906672110764;  // psi(10) = H_9 - Euler's gamma
  // ln x - 1/(2x) - sum_k B_2k / (2k x^2k), the Bernoulli terms to k = 7
  double tail = 0;
  if (x < 1e17) {
    const double z = 1 / (x * x);
    const double b[] = {1.0 / 12, -691.0 / 32760, 1.0 / 132, -1.0 / 240, 1.0 / 252, -1.0 / 120, 1.0 / 12};
    double p = 0;
    for (double c : b) p = p * z + c;
    tail = z * p;
  }
  return result + std::log(x) - 0.5 / x - tail;
}

// psi(x) = d/dx log Gamma(x). -inf at 0 (+inf at -0.0), NaN at the negative integers.
LUCID_HD inline double digamma(double x) {
  if (x != x) return x;
  if (x == 0) return std::copysign(std::numeric_limits<double>::infinity(), -x);
  if (x > 0) return digamma_positive(x);
  if (x == std::trunc(x)) return std::numeric_limits<double>::quiet_NaN();
  // reflection: psi(x) = psi(1 - x) - pi / tan(pi x), the tangent of x's fraction
  return digamma_positive(1 - x) - kPi / std::tan(kPi * (x - std::trunc(x)));
}

// The Hurwitz zeta function sum_n (n + q)^-x (x > 1): Euler-Maclaurin summation.
// inf at x = 1 and at q a non-positive integer, NaN for x < 1 (and for q < 0 with x
// not an integer, where (n + q)^-x is not real).
LUCID_HD inline double zeta(double x, double q) {
  constexpr double kInf = std::numeric_limits<double>::infinity();
  constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
  // (2k)! / B_2k, k = 1..12
  const double a[] = {12.0, -720.0, 30240.0, -1209600.0, 47900160.0, -1.8924375803183791606e9, 7.47242496e10,
                      -2.950130727918164224e12, 1.1646782814350067249e14, -4.5979787224074726105e15,
                      1.8152105401943546773e17, -7.1661652561756670113e18};
  if (x != x || q != q) return kNaN;
  if (x == 1) return kInf;
  if (x < 1) return kNaN;
  if (q <= 0) {
    if (q == std::floor(q)) return kInf;
    if (x != std::floor(x)) return kNaN;
  }
  double s = std::pow(q, -x), a_ = q, b = 0;
  int i = 0;
  while (i < 9 || a_ <= 9.0) {
    i += 1;
    a_ += 1.0;
    b = std::pow(a_, -x);
    s += b;
    if (-kMachEp * s < b && b < kMachEp * s) return s;
  }
  const double w = a_;
  s += b * w / (x - 1);
  s -= 0.5 * b;
  double f = 1.0, k = 0.0;
  for (double c : a) {
    f *= x + k;
    b /= w;
    const double t = f * b / c;
    s += t;
    if (std::fabs(t / s) < kMachEp) return s;
    k += 1.0;
    f *= x + k;
    b /= w;
    k += 1.0;
  }
  return s;
}

// The regularized incomplete gamma functions P(a, x) = gamma(a, x) / Gamma(a) and
// Q(a, x) = 1 - P (torch.igamma / igammac): P by its power series below x = a + 1,
// Q by Legendre's continued fraction above (modified Lentz), each computing the other
// as 1 minus itself, so neither sums a tail that cancels. torch's (scipy's) special
// values: NaN for a < 0 or x < 0 (and a = x = 0 or both infinite), P = 1 at a = 0 < x
// and at x = inf, P = 0 at x = 0 and at a = inf.
LUCID_HD inline double igamma_prefactor(double a, double x) {  // x^a e^-x / Gamma(a)
  return std::exp(a * std::log(x) - x - std::lgamma(a));
}

LUCID_HD inline double igamma_series(double a, double x) {  // P
  double term = 1.0 / a, sum = term;
  for (int n = 1; n < 1000000; ++n) {
    term *= x / (a + n);
    sum += term;
    if (std::fabs(term) <= std::fabs(sum) * kMachEp) break;
  }
  return sum * igamma_prefactor(a, x);
}

LUCID_HD inline double igammac_fraction(double a, double x) {  // Q
  constexpr double kTiny = 1e-300;
  double b = x + 1 - a, c = 1 / kTiny, d = 1 / b, h = d;
  for (int i = 1; i < 1000000; ++i) {
    const double an = -i * (i - a);
    b += 2;
    d = an * d + b;
    if (std::fabs(d) < kTiny) d = kTiny;
    c = b + an / c;
    if (std::fabs(c) < kTiny) c = kTiny;
    d = 1 / d;
    const double step = d * c;
    h *= step;
    if (std::fabs(step - 1) <= kMachEp) break;
  }
  return igamma_prefactor(a, x) * h;
}

// P(a, x) when upper is false, Q(a, x) when it is.
LUCID_HD inline double igamma(double a, double x, bool upper) {
  constexpr double kNaN = std::numeric_limits<double>::quiet_NaN(), kInf = std::numeric_limits<double>::infinity();
  if (a != a || x != x || a < 0 || x < 0) return kNaN;
  if (a == 0) return x > 0 ? (upper ? 0.0 : 1.0) : kNaN;
  if (x == 0) return upper ? 1.0 : 0.0;
  if (a == kInf) return x == kInf ? kNaN : (upper ? 1.0 : 0.0);
  if (x == kInf) return upper ? 0.0 : 1.0;
  if (x < a + 1) {
    const double p = igamma_series(a, x);
    return upper ? 1 - p : p;
  }
  const double q = igammac_fraction(a, x);
  return upper ? q : 1 - q;
}

// I_nu(|x|) for nu = 0 or 1, times exp(-|x|) when `scaled`.
LUCID_HD inline double bessel_i(int nu, double x, bool scaled) {
  const double ax = std::fabs(x);
  if (ax != ax) return ax;
  double value;
  if (ax < 20) {
    // sum_k (x/2)^(2k + nu) / (k! (k + nu)!): positive terms
    const double y = 0.25 * ax * ax;
    double term = nu == 0 ? 1.0 : 0.5 * ax, sum = term;
    for (int k = 1; k < 500 && term > kMachEp * 0.25 * sum; ++k) {
      term *= y / (double(k) * double(k + nu));
      sum += term;
    }
    value = scaled ? sum * std::exp(-ax) : sum;
  } else {
    // e^x / sqrt(2 pi x) sum_k c_k, c_k = c_{k-1} (2k - 1 - 2nu)(2k - 1 + 2nu) / (8 k x)
    const double mu = 4.0 * nu * nu;
    double term = 1.0, sum = 1.0;
    for (int k = 1; k < 100; ++k) {
      const double next = term * (double(2 * k - 1) * double(2 * k - 1) - mu) / (8.0 * k * ax);
      if (std::fabs(next) >= std::fabs(term)) break;  // the series turns: stop at its smallest term
      term = next;
      sum += term;
      if (std::fabs(term) < kMachEp * 0.25 * std::fabs(sum)) break;
    }
    const double scale = sum / std::sqrt(2 * kPi * ax);
    // (e^x split in two for x up to ~1419: e^x alone overflows past ~709)
    value = scaled ? scale : scale * std::exp(0.5 * ax) * std::exp(0.5 * ax);
  }
  return nu == 1 && x < 0 ? -value : value;
}

// exp(x^2) to within a few ulps: x^2 rounded would be off by up to x^2 ulps of the
// exponent. x = hi + lo with hi of 12 fraction bits, so hi^2 is exact (x < 32 here)
// and exp((2 hi + lo) lo) has a small argument.
LUCID_HD inline double exp_square(double x) {
  const double hi = std::trunc(x * 4096.0) / 4096.0, lo = x - hi;
  return std::exp(hi * hi) * std::exp((2 * hi + lo) * lo);
}

// erfcx(x) = exp(x^2) erfc(x), finite for large x where erfc underflows.
LUCID_HD inline double erfcx(double x) {
  if (x != x) return x;
  if (x < 26) {
    if (x < -26.7) return std::numeric_limits<double>::infinity();  // 2 exp(x^2) overflows
    if (x < 0) return 2 * exp_square(x) - erfcx(-x);
    return exp_square(x) * std::erfc(x);
  }
  // 1/(x sqrt(pi)) (1 - 1/(2x^2) + 3/(2x^2)^2 - 15/(2x^2)^3 + ...)
  const double z = 1 / (2 * x * x);
  double term = 1.0, sum = 1.0;
  for (int k = 1; k < 12; ++k) {
    term *= -(2 * k - 1) * z;
    sum += term;
  }
  return sum / (x * 1.7724538509055160273);
}

}  // namespace lucid::ops::special
