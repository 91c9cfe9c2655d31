// Row kernels shared by batch_norm and group_norm (ops/norm.cpp). Both lay the
// input out as contiguous rows [N*C, L] (L = the spatial size): one row per
// (sample, channel). Statistics of a channel (BatchNorm) or of a group of channels
// (GroupNorm) are combinations of per-row moments, and both the forward and the
// fused backward end with a per-row affine map, so four row kernels serve both.
// Rows are split over the thread pool; each row runs in vector lanes.
#pragma once

#include <cstdint>

namespace lucid::cpu {

// mean[r] and m2[r] = sum_i (x[r,i] - mean[r])^2 of each row (two passes; the
// row is in cache for the second).
void norm_row_moments(const float* x, int64_t rows, int64_t len, double* mean, double* m2);
void norm_row_moments(const double* x, int64_t rows, int64_t len, double* mean, double* m2);

// y[r,i] = x[r,i] * scale[r] + shift[r]
void norm_row_affine(const float* x, float* y, int64_t rows, int64_t len, const float* scale, const float* shift);
void norm_row_affine(const double* x, double* y, int64_t rows, int64_t len, const double* scale,
                     const double* shift);

// s1[r] = sum_i dy[r,i], s2[r] = sum_i dy[r,i] * x[r,i]
void norm_row_grad_sums(const float* dy, const float* x, int64_t rows, int64_t len, double* s1, double* s2);
void norm_row_grad_sums(const double* dy, const double* x, int64_t rows, int64_t len, double* s1, double* s2);

// dx[r,i] = a[r] * dy[r,i] + b[r] * x[r,i] + d[r]
void norm_row_affine2(const float* dy, const float* x, float* dx, int64_t rows, int64_t len, const float* a,
                      const float* b, const float* d);
void norm_row_affine2(const double* dy, const double* x, double* dx, int64_t rows, int64_t len, const double* a,
                      const double* b, const double* d);

// The same four on columns: x is [n, k] row-major and each statistic / coefficient
// belongs to a column (batch norm of [N, C] or [N, C, small L] inputs, where rows of
// one element would waste the lanes). Each row is read across, lanes over columns.
void norm_col_moments(const float* x, int64_t n, int64_t k, double* mean, double* m2);
void norm_col_moments(const double* x, int64_t n, int64_t k, double* mean, double* m2);
void norm_col_affine(const float* x, float* y, int64_t n, int64_t k, const float* scale, const float* shift);
void norm_col_affine(const double* x, double* y, int64_t n, int64_t k, const double* scale, const double* shift);
void norm_col_grad_sums(const float* dy, const float* x, int64_t n, int64_t k, double* s1, double* s2);
void norm_col_grad_sums(const double* dy, const double* x, int64_t n, int64_t k, double* s1, double* s2);
void norm_col_affine2(const float* dy, const float* x, float* dx, int64_t n, int64_t k, const float* a,
                      const float* b, const float* d);
void norm_col_affine2(const double* dy, const double* x, double* dx, int64_t n, int64_t k, const double* a,
                      const double* b, const double* d);

// layer_norm / rms_norm over rows of n (ops/seq_norm.cpp, the NormRows primitives): y = (x - mean) * rstd * w + b, the statistics summed in
// lanes and double; the backward's dw and db are column sums over the rows in order
// (the same bits on any thread count). w, b, dw, db may be null; mean is null for rms.
template <typename T>
void layer_norm_rows(const T* x, const T* w, const T* b, T* y, T* mean, T* rstd, int64_t rows, int64_t n, double eps,
                     bool rms);
template <typename T>
void layer_norm_rows_backward(const T* g, const T* x, const T* w, const T* mean, const T* rstd, T* dx, T* dw, T* db,
                              int64_t rows, int64_t n, bool rms);
// The forward of float16 / bfloat16 rows (T = Half or BFloat16): each row widened into a
// float buffer, normalised there as a float32 row, and narrowed once into y (Note [16-bit
// rows]); w, b, mean and rstd are float32. The bits of float32 copies in and out, at a
// third of their memory traffic (the backward works on float32 copies).
template <typename T>
void layer_norm_half_rows(const T* x, const float* w, const float* b, T* y, float* mean, float* rstd, int64_t rows,
                          int64_t n, double eps, bool rms);

}  // namespace lucid::cpu
