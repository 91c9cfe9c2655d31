// The orthogonal polynomial families of torch.special, value of degree n at x, one
// element at a time on host and device (LUCID_HD): Chebyshev T, U, V, W, physicists'
// and probabilists' Hermite, Laguerre and Legendre. Each is torch's algorithm (its
// special values at |x| = 1 and x = 0, the trigonometric forms it takes inside (-1, 1)
// for large degrees, then the three-term recurrence), computed in T (float or double),
// so results agree with torch's to the bit.
//
// Two guards keep a huge degree from running for minutes, neither changing a result:
// the recurrence stops once its value is NaN (every later term is NaN too: a NaN term
// propagates through the products), which is where it ends for |x| > 1 after the
// values overflow; and the Hermite families return NaN above torch's degree limit
// (128 in float, 512 in double), as torch's do. A degree that is NaN counts as
// negative (torch's cast of NaN to int64 on the CPU), giving 0.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>

#include "core/half.h"  // LUCID_HD

namespace lucid::ops::poly {

// The degree n as torch reads it: truncated to int64; NaN and values below the range
// as negative, values above it as the largest (so the closed forms below compute n + 1
// and 2n + 1 in T, never in int64, where they would overflow).
template <typename T>
LUCID_HD int64_t degree(T n) {
  if (!(n == n) || n < T(-9.2e18)) return -1;
  if (n > T(9.2e18)) return std::numeric_limits<int64_t>::max();
  return int64_t(n);
}

template <typename T>
LUCID_HD bool is_nan(T v) {
  return !(v == v);
}

// p_n for p_{k+1} = step(k, p_k, p_{k-1}) from p_first_k = q and the term before, p.
template <typename T, typename Step>
LUCID_HD T recur(T p, T q, int64_t k, int64_t n, Step step) {
  for (; k < n; ++k) {
    const T r = step(k, q, p);
    p = q;
    q = r;
    if (is_nan(q)) break;
  }
  return q;
}

template <typename T>
LUCID_HD T chebyshev_t(T x, int64_t n) {
  if (n < 0) return T(0);
  if (std::abs(x) == T(1)) return (x > T(0) || n % 2 == 0) ? T(1) : T(-1);
  if (n > 6 && std::abs(x) < T(1)) return std::cos(T(n) * std::acos(x));
  if (n == 0) return T(1);
  if (n == 1) return x;
  return recur(T(1), x, 1, n, [x](int64_t, T q, T p) { return (x + x) * q - p; });
}

template <typename T>
LUCID_HD T chebyshev_u(T x, int64_t n) {
  if (n < 0) return T(0);
  if (std::abs(x) == T(1)) return (x > T(0) || n % 2 == 0) ? (T(n) + T(1)) : -(T(n) + T(1));
  if (n > 8 && std::abs(x) < T(1)) {
    const T theta = std::acos(x);
    if (std::sin(theta) != T(0)) return std::sin((T(n) + T(1)) * theta) / std::sin(theta);
    return (T(n) + T(1)) * std::cos((T(n) + T(1)) * theta) * x;
  }
  if (n == 0) return T(1);
  if (n == 1) return x + x;
  return recur(T(1), x + x, 1, n, [x](int64_t, T q, T p) { return (x + x) * q - p; });
}

template <typename T>
LUCID_HD T chebyshev_v(T x, int64_t n) {
  if (n < 0) return T(0);
  if (std::abs(x) == T(1)) {
    if (x > T(0)) return T(1);
    return n % 2 == 0 ? (T(n) + T(n) + T(1)) : -(T(n) + T(n) + T(1));
  }
  if (n > 8 && std::abs(x) < T(1)) {
    const T theta = std::acos(x);
    if (std::sin(theta / T(2)) != T(1)) return std::cos((T(n) + T(0.5)) * theta) / std::cos(theta / T(2));
    return n % 2 == 0 ? (T(n) + T(n) + T(1)) : -(T(n) + T(n) + T(1));
  }
  if (n == 0) return T(1);
  if (n == 1) return x + x - T(1);
  return recur(T(1), x + x - T(1), 1, n, [x](int64_t, T q, T p) { return (x + x) * q - p; });
}

template <typename T>
LUCID_HD T chebyshev_w(T x, int64_t n) {
  if (n < 0) return T(0);
  if (std::abs(x) == T(1)) {
    if (x > T(0)) return (T(n) + T(n) + T(1));
    return n % 2 == 0 ? T(1) : T(-1);
  }
  if (n > 8 && std::abs(x) < T(1)) {
    const T theta = std::acos(x);
    if (std::cos(theta / T(2)) != T(1)) return std::sin((T(n) + T(0.5)) * theta) / std::sin(theta / T(2));
    if (x > T(0)) return (T(n) + T(n) + T(1));
    return n % 2 == 0 ? T(1) : T(-1);
  }
  if (n == 0) return T(1);
  if (n == 1) return x + x + T(1);
  return recur(T(1), x + x + T(1), 1, n, [x](int64_t, T q, T p) { return (x + x) * q - p; });
}

// torch's degree limit of the Hermite recurrences, past which they return NaN.
template <typename T>
LUCID_HD int64_t hermite_limit() {
  return sizeof(T) == sizeof(float) ? 128 : 512;
}

template <typename T>
LUCID_HD T hermite_h(T x, int64_t n) {
  if (n < 0) return T(0);
  if (n == 0) return T(1);
  if (n == 1) return x + x;
  if (n > hermite_limit<T>()) return std::numeric_limits<T>::quiet_NaN();
  // H_{k+1} = 2x H_k - 2k H_{k-1}
  return recur(T(1), x + x, 1, n, [x](int64_t k, T q, T p) { return (x + x) * q - T(k + k) * p; });
}

template <typename T>
LUCID_HD T hermite_he(T x, int64_t n) {
  if (n < 0) return T(0);
  if (n == 0) return T(1);
  if (n == 1) return x;
  if (n > hermite_limit<T>()) return std::numeric_limits<T>::quiet_NaN();
  // He_{k+1} = x He_k - k He_{k-1}
  return recur(T(1), x, 1, n, [x](int64_t k, T q, T p) { return x * q - T(k) * p; });
}

template <typename T>
LUCID_HD T laguerre_l(T x, int64_t n) {
  if (n < 0) return T(0);
  if (std::abs(x) == T(0)) return T(1);
  if (n == 0) return T(1);
  if (n == 1) return T(1) - x;
  // (k + 1) L_{k+1} = (2k + 1 - x) L_k - k L_{k-1}
  return recur(T(1), T(1) - x, 1, n,
               [x](int64_t k, T q, T p) { return ((T(k + k) + (T(1) - x)) * q - T(k) * p) / T(k + 1); });
}

template <typename T>
LUCID_HD T legendre_p(T x, int64_t n) {
  if (n < 0) return T(0);
  if (std::abs(x) == T(1)) return (x > T(0) || n == 0 || n % 2 == 0) ? T(1) : T(-1);
  if (n == 0) return T(1);
  if (n == 1) return x;
  // (k + 1) P_{k+1} = (2k + 1) x P_k - k P_{k-1}
  return recur(T(1), x, 1, n, [x](int64_t k, T q, T p) { return (T(k + k + 1) * x * q - T(k) * p) / T(k + 1); });
}

}  // namespace lucid::ops::poly
