// Extremum and boolean reductions over contiguous rows.
#include <cmath>
#include <cstring>

#include "backend/cpu/reduce.h"

namespace lucid::cpu {

namespace {

template <typename T>
using compute_t = std::conditional_t<std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>, float, T>;

template <typename T, bool kMax>
void extremum(const T* in, int64_t outer, int64_t n, T* values, int64_t* indices) {
  using C = compute_t<T>;
  for (int64_t o = 0; o < outer; ++o) {
    const T* row = in + o * n;
    C best = C(row[0]);
    int64_t at = 0, k = 1;
    if constexpr (std::is_floating_point_v<C>) {
      if (std::isnan(best)) k = n;  // a leading NaN wins
    }
    for (; k < n; ++k) {
      C v = C(row[k]);
      if constexpr (std::is_floating_point_v<C>) {
        if (std::isnan(v)) {
          best = v, at = k;
          break;
        }
      }
      if (kMax ? v > best : v < best) best = v, at = k;
    }
    if (values) values[o] = T(best);
    if (indices) indices[o] = at;
  }
}

}  // namespace

void minmax_rows(Dtype d, const std::byte* in, int64_t outer, int64_t n, bool is_max, std::byte* values,
                 int64_t* indices) {
  visit_dtype(d, [&]<typename T>() {
    if constexpr (kIsComplexValue<T>) {
      fail<RuntimeError>("internal: minmax_rows on complex");
    } else {
      auto* v = reinterpret_cast<T*>(values);
      auto* x = reinterpret_cast<const T*>(in);
      if (is_max) extremum<T, true>(x, outer, n, v, indices);
      else extremum<T, false>(x, outer, n, v, indices);
    }
  });
}

void all_any_rows(const bool* in, int64_t outer, int64_t n, bool is_all, bool* out) {
  for (int64_t o = 0; o < outer; ++o) {
    const bool* row = in + o * n;
    bool r = is_all;
    for (int64_t k = 0; k < n; ++k)
      if (row[k] != is_all) {
        r = !is_all;
        break;
      }
    out[o] = r;
  }
}

}  // namespace lucid::cpu
