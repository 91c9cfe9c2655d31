// The order SortRows and SearchSorted share, and SearchSorted's binary search, written
// once for the CPU's and the GPU's kernels (LUCID_HD: both compile it).
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "core/half.h"

namespace lucid::ops {

// a < b with NaN the largest value (two NaNs are equal), as torch's sort orders.
template <typename C>
LUCID_HD bool less_nan_last(C a, C b) {
  if constexpr (std::is_floating_point_v<C>) return a < b || (b != b && a == a);
  else return a < b;
}

// The type a value of T is compared in: float for the 16-bit floats, else T.
template <typename T>
using SearchType = std::conditional_t<std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>, float, T>;

// SortRows' order as unsigned keys (both devices' radix sorts): a key's ascending order
// is the values' order above. Floats: NaN made the one positive NaN (above +inf), -0.0
// made 0.0 (equal to it), then the sign bit flipped for a positive value and every bit
// for a negative one; signed integers: the sign bit flipped. Descending sorts the keys'
// complement, which reverses their order and keeps equal keys in position order (stable,
// as torch's descending stable sort). Two widths, 32 and 64 bits.
template <typename T>
using OrderKey = std::conditional_t<sizeof(T) == 8, uint64_t, uint32_t>;

template <typename T>
LUCID_HD OrderKey<T> order_key(T v) {
  using C = SearchType<T>;
  using K = OrderKey<T>;
  constexpr int kTop = int(sizeof(K)) * 8 - 1;
  if constexpr (std::is_floating_point_v<C>) {
    static_assert(sizeof(C) == sizeof(K));
    C c = C(v);  // (exact for the 16-bit floats)
    if (c != c) c = C(NAN);
    if (c == C(0)) c = C(0);
    K u;
    memcpy(&u, &c, sizeof(K));
    return (u >> kTop) ? K(~u) : K(u | (K(1) << kTop));
  } else if constexpr (std::is_signed_v<T>) {
    return K(std::make_signed_t<K>(v)) ^ (K(1) << kTop);
  } else {  // bool, uint8
    return K(v);
  }
}

// The value of an order key: exactly order_key's inverse but for what order_key merges
// (-0.0 comes back as 0.0, a NaN as the one NaN).
template <typename T>
LUCID_HD T order_value(OrderKey<T> k) {
  using C = SearchType<T>;
  using K = OrderKey<T>;
  constexpr int kTop = int(sizeof(K)) * 8 - 1;
  if constexpr (std::is_floating_point_v<C>) {
    const K u = (k >> kTop) ? K(k & ~(K(1) << kTop)) : K(~k);
    C c;
    memcpy(&c, &u, sizeof(K));
    return T(c);
  } else if constexpr (std::is_signed_v<T>) {
    return T(std::make_signed_t<K>(k ^ (K(1) << kTop)));
  } else {
    return T(k);
  }
}

// The count of row[0..n) below x (right: not above x); row sorted by less_nan_last.
template <typename T>
LUCID_HD int64_t sorted_position(const T* row, int64_t n, SearchType<T> x, bool right) {
  using C = SearchType<T>;
  int64_t lo = 0, hi = n;
  while (lo < hi) {
    const int64_t mid = lo + (hi - lo) / 2;
    const bool before = right ? !less_nan_last(x, C(row[mid])) : less_nan_last(C(row[mid]), x);
    if (before) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

}  // namespace lucid::ops
