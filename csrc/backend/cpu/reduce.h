// CPU reduction kernels.
#pragma once

#include "core/tensor_impl.h"

namespace lucid::cpu {

// out[i] = sum of the elements of `a` that map to i. `a` is a view whose last
// `reduced` dimensions are the ones summed and whose leading dimensions match out's
// (in row-major order); out and a share a dtype. Accumulates in double (int64 for
// integers, complex<double> for complex) and scales by `scale` before storing.
void sum_last_dims(TensorImpl& out, const TensorImpl& a, size_t reduced, double scale);

}  // namespace lucid::cpu

// The kernels below work on contiguous rows [outer, n] (the reduced block last,
// ops/reduce_plan.h) or on a contiguous [outer, n, inner] block (ops along one dim).
namespace lucid::cpu {

// reduce_minmax.cpp. The largest (is_max) or smallest element of each row and its
// first index; a NaN wins (its first occurrence), as in PyTorch. `values` has
// dtype d (any real dtype), either output may be null. n >= 1.
void minmax_rows(Dtype d, const std::byte* in, int64_t outer, int64_t n, bool is_max, std::byte* values,
                 int64_t* indices);
// Whether every (is_all) or some element of each bool row is true.
void all_any_rows(const bool* in, int64_t outer, int64_t n, bool is_all, bool* out);

// reduce_stats.cpp. Row products in the accumulate dtype d (I64, F64 or C64).
void prod_rows(Dtype d, const std::byte* in, int64_t outer, int64_t n, std::byte* out);
// Two-pass variance (sum of squared deviations / max(n - correction, 0)) and mean.
void var_rows(const double* in, int64_t outer, int64_t n, double correction, double* var, double* mean);
// The same for complex rows: sum |z - mean|^2 / max(n - correction, 0) (real).
void var_rows_complex(const complex128* in, int64_t outer, int64_t n, double correction, double* var);
// |z| of each element, in double (complex norms reduce the magnitudes).
void complex_abs(const complex128* in, int64_t count, double* out);
// max + log(sum(exp(x - max))); -inf for empty rows, inf when a row holds inf.
void logsumexp_rows(const double* in, int64_t outer, int64_t n, double* out);
// The p-norm of each row (p may be 0, +-inf, or any other number).
void norm_rows(const double* in, int64_t outer, int64_t n, double p, double* out);

// scan.cpp. Cumulative sum or product along n, in place, for dtype I64, F64 or C64
// (complex scans accumulate in complex128).
void scan_inplace(Dtype d, std::byte* data, int64_t outer, int64_t n, int64_t inner, bool is_prod);

// softmax.cpp. Softmax (or log-softmax) along n, max-subtracted for stability.
void softmax_dim(const double* in, double* out, int64_t outer, int64_t n, int64_t inner, bool log);
// sort.cpp. The stable sorting permutation of each row of a contiguous [rows, n]
// block of `dtype` (real), NaN the largest value: the first k of each row's int64
// positions into out [rows, k], and their values (x's dtype) into `values` unless it is null.
void sort_rows(Dtype dtype, const std::byte* x, int64_t* out, std::byte* values, int64_t rows, int64_t n, int64_t k,
               bool descending);
// SearchSorted (ops/prims/reduce.h): each value's position among its row's sorted
// boundaries.
void search_sorted(Dtype dtype, const std::byte* boundaries, const std::byte* values, int64_t* out, int64_t rows,
                   int64_t n, int64_t m, bool right, bool shared);
// Its gradient from the output y and the output's gradient g (T float or double): the
// column sums in double, every element written once.
template <typename T>
void softmax_backward_dim(const T* y, const T* g, T* gx, int64_t outer, int64_t n, int64_t inner, bool log);

}  // namespace lucid::cpu
