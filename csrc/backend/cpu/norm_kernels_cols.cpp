// Column kernels of the normalisation layers (norm_kernels.h): x is [n, k] row-major
// and every statistic belongs to a column. Threads take blocks of columns and walk all
// rows; the inner loops run across a row's columns (independent lanes, so the compiler
// vectorises them without reassociating any sum). Partial sums are flushed to double
// every kBlock rows, as the row kernels do.
#include <algorithm>
#include <vector>

#include "backend/cpu/norm_kernels.h"
#include "core/parallel.h"
#include "backend/cpu/reduce_simd.h"

namespace lucid::cpu {

namespace {

constexpr int64_t kBlock = 1024;  // rows summed in T before a flush to double

// sum over rows of f(row pointer offset), one accumulator per column of [c0, c1)
template <typename T, typename F>
LUCID_INLINE void col_sums(int64_t n, int64_t k, int64_t c0, int64_t c1, double* out, T* acc, F f) {
  const int64_t w = c1 - c0;
  for (int64_t j = 0; j < w; ++j) out[j] = 0;
  for (int64_t b = 0; b < n; b += kBlock) {
    const int64_t e = std::min(n, b + kBlock);
    for (int64_t j = 0; j < w; ++j) acc[j] = 0;
    for (int64_t r = b; r < e; ++r) {
      const int64_t base = r * k + c0;
      for (int64_t j = 0; j < w; ++j) acc[j] += f(base + j, j);
    }
    for (int64_t j = 0; j < w; ++j) out[j] += static_cast<double>(acc[j]);
  }
}

template <typename T>
LUCID_INLINE void moments_body(const T* x, int64_t n, int64_t k, int64_t c0, int64_t c1, double* mean, double* m2) {
  std::vector<T> acc(c1 - c0), mu(c1 - c0);
  col_sums<T>(n, k, c0, c1, mean + c0, acc.data(), [x](int64_t i, int64_t) { return x[i]; });
  for (int64_t j = 0; j < c1 - c0; ++j) {
    mean[c0 + j] = n ? mean[c0 + j] / static_cast<double>(n) : 0.0;
    mu[j] = static_cast<T>(mean[c0 + j]);
  }
  const T* m = mu.data();
  col_sums<T>(n, k, c0, c1, m2 + c0, acc.data(), [x, m](int64_t i, int64_t j) {
    const T d = x[i] - m[j];
    return d * d;
  });
}

template <typename T>
LUCID_INLINE void grad_sums_body(const T* dy, const T* x, int64_t n, int64_t k, int64_t c0, int64_t c1, double* s1,
                                 double* s2) {
  std::vector<T> acc(c1 - c0);
  col_sums<T>(n, k, c0, c1, s1 + c0, acc.data(), [dy](int64_t i, int64_t) { return dy[i]; });
  col_sums<T>(n, k, c0, c1, s2 + c0, acc.data(), [dy, x](int64_t i, int64_t) { return dy[i] * x[i]; });
}

template <typename T>
LUCID_INLINE void affine_body(const T* x, T* y, int64_t n, int64_t k, int64_t c0, int64_t c1, const T* s,
                              const T* t) {
  for (int64_t r = 0; r < n; ++r) {
    const T* p = x + r * k;
    T* q = y + r * k;
    for (int64_t j = c0; j < c1; ++j) q[j] = p[j] * s[j] + t[j];
  }
}

template <typename T>
LUCID_INLINE void affine2_body(const T* dy, const T* x, T* dx, int64_t n, int64_t k, int64_t c0, int64_t c1,
                               const T* a, const T* b, const T* d) {
  for (int64_t r = 0; r < n; ++r) {
    const T* g = dy + r * k;
    const T* p = x + r * k;
    T* q = dx + r * k;
    for (int64_t j = c0; j < c1; ++j) q[j] = g[j] * a[j] + p[j] * b[j] + d[j];
  }
}

#define LUCID_COL_CLONES(T, sfx)                                                                                    \
  LUCID_CLONES void moments_##sfx(const T* x, int64_t n, int64_t k, int64_t c0, int64_t c1, double* mean,        \
                                  double* m2) {                                                                   \
    moments_body(x, n, k, c0, c1, mean, m2);                                                                      \
  }                                                                                                               \
  LUCID_CLONES void grad_sums_##sfx(const T* dy, const T* x, int64_t n, int64_t k, int64_t c0, int64_t c1,       \
                                    double* s1, double* s2) {                                                     \
    grad_sums_body(dy, x, n, k, c0, c1, s1, s2);                                                                  \
  }                                                                                                               \
  LUCID_CLONES void affine_##sfx(const T* x, T* y, int64_t n, int64_t k, int64_t c0, int64_t c1, const T* s,     \
                                 const T* t) {                                                                    \
    affine_body(x, y, n, k, c0, c1, s, t);                                                                        \
  }                                                                                                               \
  LUCID_CLONES void affine2_##sfx(const T* dy, const T* x, T* dx, int64_t n, int64_t k, int64_t c0, int64_t c1,  \
                                  const T* a, const T* b, const T* d) {                                           \
    affine2_body(dy, x, dx, n, k, c0, c1, a, b, d);                                                               \
  }
LUCID_COL_CLONES(float, f32)
LUCID_COL_CLONES(double, f64)
#undef LUCID_COL_CLONES

// Columns per piece: at least 64 (a few cache lines of each row), and enough work.
int64_t col_grain(int64_t n) { return std::max<int64_t>(64, kParallelGrain / std::max<int64_t>(n, 1)); }

}  // namespace

void norm_col_moments(const float* x, int64_t n, int64_t k, double* mean, double* m2) {
  parallel_for(k, col_grain(n), [&](int64_t c0, int64_t c1) { moments_f32(x, n, k, c0, c1, mean, m2); });
}
void norm_col_moments(const double* x, int64_t n, int64_t k, double* mean, double* m2) {
  parallel_for(k, col_grain(n), [&](int64_t c0, int64_t c1) { moments_f64(x, n, k, c0, c1, mean, m2); });
}
void norm_col_affine(const float* x, float* y, int64_t n, int64_t k, const float* scale, const float* shift) {
  parallel_for(k, col_grain(n), [&](int64_t c0, int64_t c1) { affine_f32(x, y, n, k, c0, c1, scale, shift); });
}
void norm_col_affine(const double* x, double* y, int64_t n, int64_t k, const double* scale, const double* shift) {
  parallel_for(k, col_grain(n), [&](int64_t c0, int64_t c1) { affine_f64(x, y, n, k, c0, c1, scale, shift); });
}
void norm_col_grad_sums(const float* dy, const float* x, int64_t n, int64_t k, double* s1, double* s2) {
  parallel_for(k, col_grain(n), [&](int64_t c0, int64_t c1) { grad_sums_f32(dy, x, n, k, c0, c1, s1, s2); });
}
void norm_col_grad_sums(const double* dy, const double* x, int64_t n, int64_t k, double* s1, double* s2) {
  parallel_for(k, col_grain(n), [&](int64_t c0, int64_t c1) { grad_sums_f64(dy, x, n, k, c0, c1, s1, s2); });
}
void norm_col_affine2(const float* dy, const float* x, float* dx, int64_t n, int64_t k, const float* a,
                      const float* b, const float* d) {
  parallel_for(k, col_grain(n), [&](int64_t c0, int64_t c1) { affine2_f32(dy, x, dx, n, k, c0, c1, a, b, d); });
}
void norm_col_affine2(const double* dy, const double* x, double* dx, int64_t n, int64_t k, const double* a,
                      const double* b, const double* d) {
  parallel_for(k, col_grain(n), [&](int64_t c0, int64_t c1) { affine2_f64(dy, x, dx, n, k, c0, c1, a, b, d); });
}

}  // namespace lucid::cpu
