// Row kernels of the normalisation layers (norm_kernels.h). Float rows run in 16
// float lanes (GCC vector extensions, compiled per ISA by LUCID_CLONES); partial
// sums are flushed to double every kBlock elements so a long row loses no
// precision. Double rows use 8 double lanes.
#include "backend/cpu/norm_kernels.h"

#include <algorithm>

#include "core/parallel.h"
#include "backend/cpu/reduce_simd.h"

namespace lucid::cpu {

namespace {

using simd::load;
using simd::store;
using simd::vd8;
using simd::vf16;

constexpr int64_t kBlock = 4096;  // elements summed in lanes before a flush to double

template <typename T> struct Lanes;
template <> struct Lanes<float> { using V = vf16; static constexpr int W = 16; };
template <> struct Lanes<double> { using V = vd8; static constexpr int W = 8; };

template <typename T>
LUCID_INLINE double hsum(typename Lanes<T>::V v) {
  double s = 0;
  for (int k = 0; k < Lanes<T>::W; ++k) s += v[k];
  return s;
}

// sum of f(i) over a row, lanes then double
template <typename T, typename F>
LUCID_INLINE double row_sum(int64_t len, F f) {
  using V = typename Lanes<T>::V;
  constexpr int W = Lanes<T>::W;
  double total = 0;
  for (int64_t b = 0; b < len; b += kBlock) {
    const int64_t e = std::min(len, b + kBlock);
    V acc = {};
    int64_t i = b;
    for (; i + W <= e; i += W) acc += f.vec(i);
    T tail = 0;
    for (; i < e; ++i) tail += f.one(i);
    total += hsum<T>(acc) + static_cast<double>(tail);
  }
  return total;
}

template <typename T>
LUCID_INLINE void moments_body(const T* x, int64_t rows, int64_t len, double* mean, double* m2) {
  using V = typename Lanes<T>::V;
  for (int64_t r = 0; r < rows; ++r) {
    const T* p = x + r * len;
    struct Sum {
      const T* p;
      LUCID_INLINE V vec(int64_t i) const { return load<V>(p + i); }
      LUCID_INLINE T one(int64_t i) const { return p[i]; }
    };
    const double mu = len ? row_sum<T>(len, Sum{p}) / static_cast<double>(len) : 0.0;
    struct Sq {
      const T* p;
      T m;
      LUCID_INLINE V vec(int64_t i) const { V d = load<V>(p + i) - m; return d * d; }
      LUCID_INLINE T one(int64_t i) const { T d = p[i] - m; return d * d; }
    };
    mean[r] = mu;
    m2[r] = row_sum<T>(len, Sq{p, static_cast<T>(mu)});
    // (x - (T)mu) in T: the shift by the rounded mean is exact enough, and the
    // rounding of mu itself only adds len * (mu - (T)mu)^2, below T's epsilon.
  }
}

template <typename T>
LUCID_INLINE void affine_body(const T* x, T* y, int64_t rows, int64_t len, const T* scale, const T* shift) {
  using V = typename Lanes<T>::V;
  constexpr int W = Lanes<T>::W;
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
  using V = typename Lanes<T>::V;
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
  using V = typename Lanes<T>::V;
  constexpr int W = Lanes<T>::W;
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

}  // namespace lucid::cpu
