// Walking an N-d iteration space one innermost row at a time, for kernels whose
// operands have arbitrary byte strides (gathers, scatters, indexing): the kernel
// keeps its per-element work in a tight inner loop and the odometer runs once per
// row. row(p, n, step) gets p[k], operand k's pointer at the row's first element,
// n the row length and step[k] operand k's stride along the row.
#pragma once

#include <algorithm>
#include <cstddef>
#include <vector>

#include "core/parallel.h"
#include "core/shape.h"

namespace lucid::cpu {

// Rows [r0, r1) of `shape`, counted in row-major order of the outer dimensions.
template <typename F>
void walk_row_range(const Shape& shape, const std::vector<std::byte*>& base, const std::vector<const Stride*>& st,
                    int64_t r0, int64_t r1, F& row) {
  const size_t nd = shape.size(), nops = base.size();
  std::vector<int64_t> step(nops, 0);
  const int64_t n = nd ? shape[nd - 1] : 1;
  for (size_t k = 0; k < nops && nd; ++k) step[k] = (*st[k])[nd - 1];
  const size_t outer_nd = nd ? nd - 1 : 0;
  std::vector<int64_t> idx(outer_nd, 0);
  std::vector<std::byte*> p = base;
  for (size_t d = outer_nd, r = size_t(r0); d-- > 0;) {  // the first row's position
    idx[d] = int64_t(r % size_t(shape[d]));
    r /= size_t(shape[d]);
    for (size_t k = 0; k < nops; ++k) p[k] += idx[d] * (*st[k])[d];
  }
  for (int64_t r = r0; r < r1; ++r) {
    row(p.data(), n, step.data());
    for (size_t d = outer_nd; d-- > 0;) {  // odometer
      if (++idx[d] < shape[d]) {
        for (size_t k = 0; k < nops; ++k) p[k] += (*st[k])[d];
        break;
      }
      for (size_t k = 0; k < nops; ++k) p[k] -= (*st[k])[d] * (shape[d] - 1);
      idx[d] = 0;
    }
  }
}

inline int64_t row_count(const Shape& shape) {
  int64_t rows = 1;
  for (size_t d = 0; d + 1 < shape.size(); ++d) rows *= shape[d];
  return rows;
}

inline bool has_zero_dim(const Shape& shape) {
  return std::any_of(shape.begin(), shape.end(), [](int64_t s) { return s == 0; });
}

// Every row, in order, on the calling thread: for kernels whose rows may write the
// same element (scatters), where the order decides the result.
template <typename F>
void walk_rows(const Shape& shape, const std::vector<std::byte*>& base, const std::vector<const Stride*>& st,
               F row) {
  if (!has_zero_dim(shape)) walk_row_range(shape, base, st, 0, row_count(shape), row);
}

// Rows split over the pool: for kernels whose rows write disjoint elements (gathers).
// A single row (what contiguous operands collapse to) is split along its length.
template <typename F>
void walk_rows_parallel(const Shape& shape, const std::vector<std::byte*>& base,
                        const std::vector<const Stride*>& st, F row) {
  if (has_zero_dim(shape)) return;
  if (!shape.empty() && row_count(shape) == 1) {
    std::vector<int64_t> step(base.size());
    for (size_t k = 0; k < base.size(); ++k) step[k] = st[k]->back();
    parallel_for(shape.back(), kParallelGrain, [&](int64_t i0, int64_t i1) {
      std::vector<std::byte*> p(base);
      for (size_t k = 0; k < p.size(); ++k) p[k] += i0 * step[k];
      row(p.data(), i1 - i0, step.data());
    });
    return;
  }
  const int64_t n = std::max<int64_t>(1, shape.empty() ? 1 : shape.back());
  parallel_for(row_count(shape), std::max<int64_t>(1, kParallelGrain / n),
               [&](int64_t r0, int64_t r1) { walk_row_range(shape, base, st, r0, r1, row); });
}

}  // namespace lucid::cpu
