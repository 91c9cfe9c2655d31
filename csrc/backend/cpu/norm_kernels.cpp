// Row kernels of the normalisation layers (norm_kernels.h). Float rows run in 16
// float lanes (GCC vector extensions, compiled per ISA by LUCID_CLONES); partial
// sums are flushed to double every kBlock elements so a long row loses no
// precision. Double rows use 8 double lanes. (Lanes are held as 32-byte halves.)
#include "backend/cpu/norm_kernels.h"

#include <algorithm>
#include <cmath>
#include <type_traits>
#include <vector>

#include "backend/cpu/reduce_simd.h"
#include "core/half_rows.h"
#include "core/parallel.h"

namespace lucid::cpu {

namespace {

using simd::load;
using simd::store;
using simd::vd4;
using simd::vf8;

constexpr int64_t kBlock = 4096;  // elements summed in lanes before a flush to double

// W lanes (16 floats, 8 doubles), held as two 32-byte halves: GCC 12 spills 64-byte
// vectors through the stack in the AVX2 clone (layer_norm ran at 0.38x torch there);
// the halves are the same lanes with the same additions, so the same bits.
template <typename T> struct Lanes;
template <> struct Lanes<float> { using H = vf8; static constexpr int W = 16; };
template <> struct Lanes<double> { using H = vd4; static constexpr int W = 8; };

// The lanes' sum, lane 0 first.
template <typename T>
LUCID_INLINE double hsum(typename Lanes<T>::H lo, typename Lanes<T>::H hi) {
  double s = 0;
  for (int k = 0; k < Lanes<T>::W / 2; ++k) s += lo[k];
  for (int k = 0; k < Lanes<T>::W / 2; ++k) s += hi[k];
  return s;
}

// sum of f(i) over a row, lanes then double (f.vec(i): the half of lanes from element i)
template <typename T, typename F>
LUCID_INLINE double row_sum(int64_t len, F f) {
  using H = typename Lanes<T>::H;
  constexpr int W = Lanes<T>::W;
  double total = 0;
  for (int64_t b = 0; b < len; b += kBlock) {
    const int64_t e = std::min(len, b + kBlock);
    H lo = {}, hi = {};
    int64_t i = b;
    for (; i + W <= e; i += W) {
      lo += f.vec(i);
      hi += f.vec(i + W / 2);
    }
    T tail = 0;
    for (; i < e; ++i) tail += f.one(i);
    total += hsum<T>(lo, hi) + static_cast<double>(tail);
  }
  return total;
}

// The terms row_sum adds: x[i]; (x[i] - m)^2; g[i] * w[i]; g[i] * w[i] * (x[i] - m) * rs.
template <typename T>
struct RowValues {
  using V = typename Lanes<T>::H;
  const T* p;
  LUCID_INLINE V vec(int64_t i) const { return load<V>(p + i); }
  LUCID_INLINE T one(int64_t i) const { return p[i]; }
};
template <typename T>
struct RowSqDev {
  using V = typename Lanes<T>::H;
  const T* p;
  T m;
  LUCID_INLINE V vec(int64_t i) const { V d = load<V>(p + i) - m; return d * d; }
  LUCID_INLINE T one(int64_t i) const { T d = p[i] - m; return d * d; }
};
template <typename T>
struct RowScaled {  // g * w (w null: g)
  using V = typename Lanes<T>::H;
  const T *g, *w;
  LUCID_INLINE V vec(int64_t i) const { return w ? load<V>(g + i) * load<V>(w + i) : load<V>(g + i); }
  LUCID_INLINE T one(int64_t i) const { return w ? g[i] * w[i] : g[i]; }
};
template <typename T>
struct RowScaledDev {  // g * w * ((x - m) * rs)
  using V = typename Lanes<T>::H;
  const T *g, *w, *x;
  T m, rs;
  LUCID_INLINE V vec(int64_t i) const {
    const V gw = w ? load<V>(g + i) * load<V>(w + i) : load<V>(g + i);
    return gw * ((load<V>(x + i) - m) * rs);
  }
  LUCID_INLINE T one(int64_t i) const { return (w ? g[i] * w[i] : g[i]) * ((x[i] - m) * rs); }
};

template <typename T>
LUCID_INLINE void moments_body(const T* x, int64_t rows, int64_t len, double* mean, double* m2) {
  for (int64_t r = 0; r < rows; ++r) {
    const T* p = x + r * len;
    const double mu = len ? row_sum<T>(len, RowValues<T>{p}) / static_cast<double>(len) : 0.0;
    mean[r] = mu;
    m2[r] = row_sum<T>(len, RowSqDev<T>{p, static_cast<T>(mu)});
    // (x - (T)mu) in T: the shift by the rounded mean is exact enough, and the
    // rounding of mu itself only adds len * (mu - (T)mu)^2, below T's epsilon.
  }
}

template <typename T>
LUCID_INLINE void affine_body(const T* x, T* y, int64_t rows, int64_t len, const T* scale, const T* shift) {
  using V = typename Lanes<T>::H;
  constexpr int W = Lanes<T>::W / 2;
  for (int64_t r = 0; r < rows; ++r) {
    const T* p = x + r * len;
    T* q = y + r * len;
    const T s = scale[r], t = shift[r];
    int64_t i = 0;
    for (; i + W <= len; i += W) store(q + i, load<V>(p + i) * s + t);
    for (; i < len; ++i) q[i] = p[i] * s + t;
  }
}

template <typename T>
LUCID_INLINE void grad_sums_body(const T* dy, const T* x, int64_t rows, int64_t len, double* s1, double* s2) {
  using V = typename Lanes<T>::H;
  for (int64_t r = 0; r < rows; ++r) {
    const T* g = dy + r * len;
    const T* p = x + r * len;
    struct Sum {
      const T* g;
      LUCID_INLINE V vec(int64_t i) const { return load<V>(g + i); }
      LUCID_INLINE T one(int64_t i) const { return g[i]; }
    };
    struct Dot {
      const T* g;
      const T* p;
      LUCID_INLINE V vec(int64_t i) const { return load<V>(g + i) * load<V>(p + i); }
      LUCID_INLINE T one(int64_t i) const { return g[i] * p[i]; }
    };
    s1[r] = row_sum<T>(len, Sum{g});
    s2[r] = row_sum<T>(len, Dot{g, p});
  }
}

template <typename T>
LUCID_INLINE void affine2_body(const T* dy, const T* x, T* dx, int64_t rows, int64_t len, const T* a, const T* b,
                               const T* d) {
  using V = typename Lanes<T>::H;
  constexpr int W = Lanes<T>::W / 2;
  for (int64_t r = 0; r < rows; ++r) {
    const T* g = dy + r * len;
    const T* p = x + r * len;
    T* q = dx + r * len;
    const T ar = a[r], br = b[r], dr = d[r];
    int64_t i = 0;
    for (; i + W <= len; i += W) store(q + i, load<V>(g + i) * ar + load<V>(p + i) * br + dr);
    for (; i < len; ++i) q[i] = g[i] * ar + p[i] * br + dr;
  }
}

// layer_norm / rms_norm rows (norm_kernels.h): the statistics in lanes and double, then
// y = (x - mean) * rstd * w + b element by element.
template <typename T>
LUCID_INLINE void layer_rows_body(const T* x, const T* w, const T* b, T* y, T* mean, T* rstd, int64_t rows, int64_t n,
                                  double eps, bool rms) {
  using V = typename Lanes<T>::H;
  constexpr int W = Lanes<T>::W / 2;
  for (int64_t r = 0; r < rows; ++r) {
    const T* p = x + r * n;
    T* q = y + r * n;
    const T m = rms ? T(0) : T(row_sum<T>(n, RowValues<T>{p}) / double(n));
    const double ss = row_sum<T>(n, RowSqDev<T>{p, m});
    const T rs = T(1.0 / std::sqrt(ss / double(n) + eps));
    if (mean) mean[r] = m;
    rstd[r] = rs;
    int64_t i = 0;
    if (w && b) {
      for (; i + W <= n; i += W) store(q + i, (load<V>(p + i) - m) * rs * load<V>(w + i) + load<V>(b + i));
      for (; i < n; ++i) q[i] = (p[i] - m) * rs * w[i] + b[i];
    } else if (w) {
      for (; i + W <= n; i += W) store(q + i, (load<V>(p + i) - m) * rs * load<V>(w + i));
      for (; i < n; ++i) q[i] = (p[i] - m) * rs * w[i];
    } else if (b) {
      for (; i + W <= n; i += W) store(q + i, (load<V>(p + i) - m) * rs + load<V>(b + i));
      for (; i < n; ++i) q[i] = (p[i] - m) * rs + b[i];
    } else {
      for (; i + W <= n; i += W) store(q + i, (load<V>(p + i) - m) * rs);
      for (; i < n; ++i) q[i] = (p[i] - m) * rs;
    }
  }
}

// dx of layer_norm / rms_norm rows: with gw = g * w and xh = (x - mean) * rstd,
// dx = rstd * (gw - mean(gw) - xh * mean(gw * xh)) (rms: without mean(gw)).
template <typename T>
LUCID_INLINE void layer_rows_grad_body(const T* g, const T* x, const T* w, const T* mean, const T* rstd, T* dx,
                                       int64_t rows, int64_t n, bool rms) {
  using V = typename Lanes<T>::H;
  constexpr int W = Lanes<T>::W / 2;
  for (int64_t r = 0; r < rows; ++r) {
    const T *gr = g + r * n, *xr = x + r * n;
    const T m = mean ? mean[r] : T(0), rs = rstd[r];
    const T am = rms ? T(0) : T(row_sum<T>(n, RowScaled<T>{gr, w}) / double(n));
    const T bm = T(row_sum<T>(n, RowScaledDev<T>{gr, w, xr, m, rs}) / double(n));
    T* q = dx + r * n;
    int64_t i = 0;
    for (; i + W <= n; i += W) {
      const V gw = w ? load<V>(gr + i) * load<V>(w + i) : load<V>(gr + i);
      const V xh = (load<V>(xr + i) - m) * rs;
      store(q + i, rs * (gw - am - xh * bm));
    }
    for (; i < n; ++i) {
      const T gw = w ? gr[i] * w[i] : gr[i];
      q[i] = rs * (gw - am - (xr[i] - m) * rs * bm);
    }
  }
}

// dw[j] += g[r, j] * (x[r, j] - mean[r]) * rstd[r] and db[j] += g[r, j] over rows r in
// order, for columns [c0, c1): each column's sum in the same order on any thread count.
template <typename T>
LUCID_INLINE void layer_cols_grad_body(const T* g, const T* x, const T* mean, const T* rstd, T* dw, T* db,
                                       int64_t rows, int64_t n, int64_t c0, int64_t c1) {
  using V = typename Lanes<T>::H;
  constexpr int W = Lanes<T>::W / 2;
  for (int64_t r = 0; r < rows; ++r) {
    const T *gr = g + r * n, *xr = x + r * n;
    const T m = mean ? mean[r] : T(0), rs = rstd[r];
    int64_t j = c0;
    for (; j + W <= c1; j += W) {
      if (dw) store(dw + j, load<V>(dw + j) + load<V>(gr + j) * ((load<V>(xr + j) - m) * rs));
      if (db) store(db + j, load<V>(db + j) + load<V>(gr + j));
    }
    for (; j < c1; ++j) {
      if (dw) dw[j] += gr[j] * ((xr[j] - m) * rs);
      if (db) db[j] += gr[j];
    }
  }
}

LUCID_CLONES void layer_rows_f32(const float* x, const float* w, const float* b, float* y, float* mean, float* rstd,
                                 int64_t rows, int64_t n, double eps, bool rms) {
  layer_rows_body(x, w, b, y, mean, rstd, rows, n, eps, rms);
}
LUCID_CLONES void layer_rows_f64(const double* x, const double* w, const double* b, double* y, double* mean,
                                 double* rstd, int64_t rows, int64_t n, double eps, bool rms) {
  layer_rows_body(x, w, b, y, mean, rstd, rows, n, eps, rms);
}
LUCID_CLONES void layer_rows_grad_f32(const float* g, const float* x, const float* w, const float* mean,
                                      const float* rstd, float* dx, int64_t rows, int64_t n, bool rms) {
  layer_rows_grad_body(g, x, w, mean, rstd, dx, rows, n, rms);
}
LUCID_CLONES void layer_rows_grad_f64(const double* g, const double* x, const double* w, const double* mean,
                                      const double* rstd, double* dx, int64_t rows, int64_t n, bool rms) {
  layer_rows_grad_body(g, x, w, mean, rstd, dx, rows, n, rms);
}
LUCID_CLONES void layer_cols_grad_f32(const float* g, const float* x, const float* mean, const float* rstd, float* dw,
                                      float* db, int64_t rows, int64_t n, int64_t c0, int64_t c1) {
  layer_cols_grad_body(g, x, mean, rstd, dw, db, rows, n, c0, c1);
}
LUCID_CLONES void layer_cols_grad_f64(const double* g, const double* x, const double* mean, const double* rstd,
                                      double* dw, double* db, int64_t rows, int64_t n, int64_t c0, int64_t c1) {
  layer_cols_grad_body(g, x, mean, rstd, dw, db, rows, n, c0, c1);
}

LUCID_CLONES void moments_f32(const float* x, int64_t rows, int64_t len, double* mean, double* m2) {
  moments_body(x, rows, len, mean, m2);
}
LUCID_CLONES void moments_f64(const double* x, int64_t rows, int64_t len, double* mean, double* m2) {
  moments_body(x, rows, len, mean, m2);
}
LUCID_CLONES void affine_f32(const float* x, float* y, int64_t rows, int64_t len, const float* s, const float* t) {
  affine_body(x, y, rows, len, s, t);
}
LUCID_CLONES void affine_f64(const double* x, double* y, int64_t rows, int64_t len, const double* s,
                             const double* t) {
  affine_body(x, y, rows, len, s, t);
}
LUCID_CLONES void grad_sums_f32(const float* dy, const float* x, int64_t rows, int64_t len, double* s1, double* s2) {
  grad_sums_body(dy, x, rows, len, s1, s2);
}
LUCID_CLONES void grad_sums_f64(const double* dy, const double* x, int64_t rows, int64_t len, double* s1,
                                double* s2) {
  grad_sums_body(dy, x, rows, len, s1, s2);
}
LUCID_CLONES void affine2_f32(const float* dy, const float* x, float* dx, int64_t rows, int64_t len, const float* a,
                              const float* b, const float* d) {
  affine2_body(dy, x, dx, rows, len, a, b, d);
}
LUCID_CLONES void affine2_f64(const double* dy, const double* x, double* dx, int64_t rows, int64_t len,
                              const double* a, const double* b, const double* d) {
  affine2_body(dy, x, dx, rows, len, a, b, d);
}

// Rows per piece so that a piece is worth waking a worker for.
int64_t row_grain(int64_t len) { return std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(len, 1)); }

}  // namespace

void norm_row_moments(const float* x, int64_t rows, int64_t len, double* mean, double* m2) {
  parallel_for(rows, row_grain(len), [&](int64_t b, int64_t e) { moments_f32(x + b * len, e - b, len, mean + b, m2 + b); });
}
void norm_row_moments(const double* x, int64_t rows, int64_t len, double* mean, double* m2) {
  parallel_for(rows, row_grain(len), [&](int64_t b, int64_t e) { moments_f64(x + b * len, e - b, len, mean + b, m2 + b); });
}
void norm_row_affine(const float* x, float* y, int64_t rows, int64_t len, const float* scale, const float* shift) {
  parallel_for(rows, row_grain(len), [&](int64_t b, int64_t e) {
    affine_f32(x + b * len, y + b * len, e - b, len, scale + b, shift + b);
  });
}
void norm_row_affine(const double* x, double* y, int64_t rows, int64_t len, const double* scale,
                     const double* shift) {
  parallel_for(rows, row_grain(len), [&](int64_t b, int64_t e) {
    affine_f64(x + b * len, y + b * len, e - b, len, scale + b, shift + b);
  });
}
void norm_row_grad_sums(const float* dy, const float* x, int64_t rows, int64_t len, double* s1, double* s2) {
  parallel_for(rows, row_grain(len), [&](int64_t b, int64_t e) {
    grad_sums_f32(dy + b * len, x + b * len, e - b, len, s1 + b, s2 + b);
  });
}
void norm_row_grad_sums(const double* dy, const double* x, int64_t rows, int64_t len, double* s1, double* s2) {
  parallel_for(rows, row_grain(len), [&](int64_t b, int64_t e) {
    grad_sums_f64(dy + b * len, x + b * len, e - b, len, s1 + b, s2 + b);
  });
}
void norm_row_affine2(const float* dy, const float* x, float* dx, int64_t rows, int64_t len, const float* a,
                      const float* b, const float* d) {
  parallel_for(rows, row_grain(len), [&](int64_t lo, int64_t hi) {
    affine2_f32(dy + lo * len, x + lo * len, dx + lo * len, hi - lo, len, a + lo, b + lo, d + lo);
  });
}
void norm_row_affine2(const double* dy, const double* x, double* dx, int64_t rows, int64_t len, const double* a,
                      const double* b, const double* d) {
  parallel_for(rows, row_grain(len), [&](int64_t lo, int64_t hi) {
    affine2_f64(dy + lo * len, x + lo * len, dx + lo * len, hi - lo, len, a + lo, b + lo, d + lo);
  });
}

template <typename T>
void layer_norm_rows(const T* x, const T* w, const T* b, T* y, T* mean, T* rstd, int64_t rows, int64_t n, double eps,
                     bool rms) {
  parallel_for(rows, row_grain(n), [&](int64_t lo, int64_t hi) {
    if constexpr (std::is_same_v<T, float>)
      layer_rows_f32(x + lo * n, w, b, y + lo * n, mean ? mean + lo : nullptr, rstd + lo, hi - lo, n, eps, rms);
    else
      layer_rows_f64(x + lo * n, w, b, y + lo * n, mean ? mean + lo : nullptr, rstd + lo, hi - lo, n, eps, rms);
  });
}

template <typename T>
void layer_norm_half_rows(const T* x, const float* w, const float* b, T* y, float* mean, float* rstd, int64_t rows,
                          int64_t n, double eps, bool rms) {
  parallel_for(rows, row_grain(n), [&](int64_t lo, int64_t hi) {
    std::vector<float> row(static_cast<size_t>(n));  // normalised in place, a row at a time
    for (int64_t r = lo; r < hi; ++r) {
      widen_rows(row.data(), x + r * n, n);
      layer_rows_f32(row.data(), w, b, row.data(), mean ? mean + r : nullptr, rstd + r, 1, n, eps, rms);
      narrow_rows(y + r * n, row.data(), n);
    }
  });
}
template void layer_norm_half_rows<Half>(const Half*, const float*, const float*, Half*, float*, float*, int64_t,
                                         int64_t, double, bool);
template void layer_norm_half_rows<BFloat16>(const BFloat16*, const float*, const float*, BFloat16*, float*, float*,
                                             int64_t, int64_t, double, bool);

template <typename T>
void layer_norm_rows_backward(const T* g, const T* x, const T* w, const T* mean, const T* rstd, T* dx, T* dw, T* db,
                              int64_t rows, int64_t n, bool rms) {
  parallel_for(rows, row_grain(n), [&](int64_t lo, int64_t hi) {
    if constexpr (std::is_same_v<T, float>)
      layer_rows_grad_f32(g + lo * n, x + lo * n, w, mean ? mean + lo : nullptr, rstd + lo, dx + lo * n, hi - lo, n,
                          rms);
    else
      layer_rows_grad_f64(g + lo * n, x + lo * n, w, mean ? mean + lo : nullptr, rstd + lo, dx + lo * n, hi - lo, n,
                          rms);
  });
  if (!dw && !db) return;
  if (dw) std::fill(dw, dw + n, T(0));
  if (db) std::fill(db, db + n, T(0));
  // Columns in pieces of 64 (a multiple of the lanes), each summed down all the rows.
  constexpr int64_t kCols = 64;
  parallel_for((n + kCols - 1) / kCols, std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(rows * kCols, 1)),
               [&](int64_t lo, int64_t hi) {
    const int64_t c0 = lo * kCols, c1 = std::min(n, hi * kCols);
    if constexpr (std::is_same_v<T, float>) layer_cols_grad_f32(g, x, mean, rstd, dw, db, rows, n, c0, c1);
    else layer_cols_grad_f64(g, x, mean, rstd, dw, db, rows, n, c0, c1);
  });
}

template void layer_norm_rows<float>(const float*, const float*, const float*, float*, float*, float*, int64_t,
                                     int64_t, double, bool);
template void layer_norm_rows<double>(const double*, const double*, const double*, double*, double*, double*, int64_t,
                                      int64_t, double, bool);
template void layer_norm_rows_backward<float>(const float*, const float*, const float*, const float*, const float*,
                                              float*, float*, float*, int64_t, int64_t, bool);
template void layer_norm_rows_backward<double>(const double*, const double*, const double*, const double*,
                                               const double*, double*, double*, double*, int64_t, int64_t, bool);

}  // namespace lucid::cpu
