// SortRows on the CPU (ops/prims/reduce.h): each row's positions, stably sorted by
// value, one row per task. Floating values compare as PyTorch's sort compares them:
// NaN above everything (so last ascending, first descending), -0.0 equal to 0.0.
#include <algorithm>
#include <cmath>
#include <complex>
#include <numeric>
#include <type_traits>
#include <vector>

#include "backend/cpu/reduce.h"
#include "core/dtype.h"
#include "core/error.h"
#include "core/half.h"
#include "core/parallel.h"
#include "ops/prims/search.h"

namespace lucid::cpu {

namespace {

template <typename T>
void sort_rows_as(const T* x, int64_t* out, int64_t rows, int64_t n, bool descending) {
  parallel_for(rows, std::max<int64_t>(1, 16384 / std::max<int64_t>(n, 1)), [&](int64_t b, int64_t e) {
    for (int64_t r = b; r < e; ++r) {
      const T* row = x + r * n;
      int64_t* idx = out + r * n;
      std::iota(idx, idx + n, int64_t(0));
      if (descending)
        std::stable_sort(idx, idx + n, [row](int64_t i, int64_t j) { return ops::less_nan_last(row[j], row[i]); });
      else
        std::stable_sort(idx, idx + n, [row](int64_t i, int64_t j) { return ops::less_nan_last(row[i], row[j]); });
    }
  });
}

}  // namespace

void sort_rows(Dtype dtype, const std::byte* x, int64_t* out, int64_t rows, int64_t n, bool descending) {
  visit_dtype(dtype, [&]<typename T>() {
    if constexpr (kIsComplexValue<T>) {
      fail<RuntimeError>("sort: complex values have no order");
    } else if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>) {
      // compared as float32, which holds every 16-bit value exactly
      std::vector<float> wide(size_t(rows * n));
      const T* src = reinterpret_cast<const T*>(x);
      for (size_t i = 0; i < wide.size(); ++i) wide[i] = float(src[i]);
      sort_rows_as(wide.data(), out, rows, n, descending);
    } else {
      sort_rows_as(reinterpret_cast<const T*>(x), out, rows, n, descending);
    }
  });
}

void search_sorted(Dtype dtype, const std::byte* boundaries, const std::byte* values, int64_t* out, int64_t rows,
                   int64_t n, int64_t m, bool right, bool shared) {
  visit_dtype(dtype, [&]<typename T>() {
    if constexpr (kIsComplexValue<T>) {
      fail<RuntimeError>("searchsorted: complex values have no order");
    } else {
      const T* b = reinterpret_cast<const T*>(boundaries);
      const T* v = reinterpret_cast<const T*>(values);
      parallel_for(rows * m, 4096, [&](int64_t begin, int64_t end) {
        for (int64_t i = begin; i < end; ++i)
          out[i] = ops::sorted_position(b + (shared ? 0 : (i / m) * n), n, ops::SearchType<T>(v[i]), right);
      });
    }
  });
}

}  // namespace lucid::cpu
