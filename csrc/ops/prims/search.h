// The order SortRows and SearchSorted share, and SearchSorted's binary search, written
// once for the CPU's and the GPU's kernels (LUCID_HD: both compile it).
#pragma once

#include <cstdint>
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
