// The CrossEntropy primitives (ops/prims/reduce.h; Note [The cross entropy as one op],
// ops/cross_entropy.cpp) on float32 and float64 logits (or log-probabilities: nll_loss). Rows (samples) split over the
// pool; each row's values are computed by one thread, in double, and the reductions
// add the rows' partial results in row order, so results never depend on the thread
// count. float32 rows of contiguous classes (inner == 1, the [N, C] case) run in float
// lanes with the softmax kernels' vector exp (softmax_exp.h).
#include <cmath>
#include <limits>

#include "backend/cpu/reduce_fast.h"
#include "backend/cpu/reduce_simd.h"
#include "backend/cpu/softmax_exp.h"
#include "core/error.h"
#include "core/parallel.h"

namespace lucid::cpu {

namespace {

using namespace simd;
using ops::CrossEntropyParams;
using ops::LossReduction;

// A row's log-sum-exp and, for label smoothing, sum_c w[c] x[c] (w = 1 without weights).
struct RowSums {
  double lse = 0, wx = 0;
};

// A contiguous float32 row in float lanes: the maximum, then sum exp(x - max) (and the
// weighted sum of x) in 16 float partial sums added in double, as softmax_row_f32.
LUCID_CLONES RowSums row_sums_f32(const float* x, const float* w, int64_t n, bool smoothing) {
  const float mx = row_shift_f32(x, n);  // (every class -inf: lse -inf, the loss nan, as torch's)
  vf8 s[2] = {}, d[2] = {};  // (16 lanes as two halves: reduce_simd.h)
  int64_t k = 0;
  for (; k + 16 <= n; k += 16)
    for (int h = 0; h < 2; ++h) {
      const vf8 v = load<vf8>(x + k + 8 * h);
      s[h] += exp_v(v - mx);
      if (smoothing) d[h] += w ? v * load<vf8>(w + k + 8 * h) : v;
    }
  double sum = 0, wx = 0;
  for (int h = 0; h < 2; ++h)
    for (int j = 0; j < 8; ++j) sum += s[h][j], wx += d[h][j];
  for (; k < n; ++k) {
    sum += exp1(x[k] - mx);
    if (smoothing) wx += double(x[k]) * (w ? double(w[k]) : 1.0);
  }
  return {double(mx) + std::log(sum), wx};
}

// Any row (classes `stride` apart), in double.
template <typename T>
RowSums row_sums(const T* x, int64_t stride, const T* w, int64_t n, bool smoothing) {
  double mx = -std::numeric_limits<double>::infinity();
  bool nan = false;
  for (int64_t c = 0; c < n; ++c) {
    const double v = double(x[c * stride]);
    nan |= std::isnan(v);
    mx = v > mx ? v : mx;
  }
  if (nan) return {std::numeric_limits<double>::quiet_NaN(), std::numeric_limits<double>::quiet_NaN()};
  if (std::isinf(mx) && mx < 0) mx = 0;
  double sum = 0, wx = 0;
  for (int64_t c = 0; c < n; ++c) {
    const double v = double(x[c * stride]);
    sum += std::exp(v - mx);
    if (smoothing) wx += v * (w ? double(w[c]) : 1.0);
  }
  return {mx + std::log(sum), wx};
}

// A row's sums: float lanes for contiguous float32 classes, double otherwise.
template <typename T>
RowSums row_sums_of(const T* x, int64_t inner, const T* w, int64_t n, bool smoothing) {
  if constexpr (std::is_same_v<T, float>)
    if (inner == 1) return row_sums_f32(x, w, n, smoothing);
  return row_sums(x, inner, w, n, smoothing);
}

// gx[c] = a * exp(x[c] - lse) - b * w[c] (w = 1 without weights) of a contiguous float32 row.
LUCID_CLONES void row_grad_f32(const float* x, const float* w, int64_t n, float lse, float a, float b, float* gx) {
  int64_t k = 0;
  for (; k + 8 <= n; k += 8) {
    const vf8 p = exp_v(load<vf8>(x + k) - lse);
    store(gx + k, w ? p * a - load<vf8>(w + k) * b : p * a - b);
  }
  for (; k < n; ++k) gx[k] = exp1(x[k] - lse) * a - (w ? w[k] : 1.0f) * b;
}

// The same for any row (classes `inner` apart): float lanes for contiguous float32, else double.
template <typename T>
void row_grad_of(const T* x, int64_t inner, const T* w, int64_t n, double lse, double a, double b, T* gx) {
  if constexpr (std::is_same_v<T, float>)
    if (inner == 1) return row_grad_f32(x, w, n, float(lse), float(a), float(b), gx);
  for (int64_t c = 0; c < n; ++c)
    gx[c * inner] = T(a * std::exp(double(x[c * inner]) - lse) - b * (w ? double(w[c]) : 1.0));
}

int64_t rows_grain(int64_t n) { return std::max<int64_t>(1, 8192 / std::max<int64_t>(n, 1)); }

}  // namespace

template <typename T>
void cross_entropy_forward(const CrossEntropyParams& p, const T* x, const int64_t* t, const T* w, T* loss, T* lse,
                           T* stats, double* partial) {
  const int64_t n = p.n, inner = p.inner, rows = p.outer * p.inner;
  const bool smoothing = p.label_smoothing != 0;
  const double keep = 1 - p.label_smoothing, spread = p.label_smoothing / double(n);
  double w_sum = double(n);
  if (w) {
    w_sum = 0;
    for (int64_t c = 0; c < n; ++c) w_sum += double(w[c]);
  }
  parallel_for(rows, rows_grain(n), [&](int64_t b, int64_t e) {
    for (int64_t r = b; r < e; ++r) {
      const T* xr = x + (r / inner) * n * inner + r % inner;
      const int64_t tr = t[r];
      double row_lse = 0, row_loss = 0, row_weight = 0;
      if (tr != p.ignore_index) {
        LUCID_CHECK(tr >= 0 && tr < n, IndexError, "Target ", tr, " is out of bounds.");
        // (log_probs: lse 0, the row is not read)
        const RowSums s = p.log_probs ? RowSums{} : row_sums_of(xr, inner, w, n, smoothing);
        row_weight = w ? double(w[tr]) : 1.0;
        row_loss = keep * row_weight * (s.lse - double(xr[tr * inner]));
        if (smoothing) row_loss += spread * (w_sum * s.lse - s.wx);
        row_lse = s.lse;
      }
      lse[r] = T(row_lse);
      if (partial) partial[2 * r] = row_loss, partial[2 * r + 1] = row_weight;
      else loss[r] = T(row_loss);
    }
  });
  double total = 0, sum = 0;
  if (partial)
    for (int64_t r = 0; r < rows; ++r) sum += partial[2 * r], total += partial[2 * r + 1];
  stats[0] = T(total);
  stats[1] = T(w_sum);
  if (p.reduction == LossReduction::Sum) loss[0] = T(sum);
  if (p.reduction == LossReduction::Mean) loss[0] = T(sum / total);
}

template <typename T>
void cross_entropy_backward(const CrossEntropyParams& p, const T* x, const int64_t* t, const T* w, const T* lse,
                            const T* stats, const T* g, T* gx) {
  const int64_t n = p.n, inner = p.inner, rows = p.outer * p.inner;
  const double keep = 1 - p.label_smoothing, spread = p.label_smoothing / double(n);
  const double total = double(stats[0]), w_sum = double(stats[1]);
  parallel_for(rows, rows_grain(n), [&](int64_t b, int64_t e) {
    for (int64_t r = b; r < e; ++r) {
      const int64_t base = (r / inner) * n * inner + r % inner;
      const T* xr = x + base;
      T* gr = gx + base;
      const int64_t tr = t[r];
      const bool counts = tr != p.ignore_index && tr >= 0 && tr < n;
      if (!counts || p.log_probs)  // (nll_loss's gradient is 0 off the target)
        for (int64_t c = 0; c < n; ++c) gr[c * inner] = T(0);
      if (!counts) continue;
      const double s = p.reduction == LossReduction::None ? double(g[r])
                       : p.reduction == LossReduction::Sum ? double(g[0])
                                                           : double(g[0]) / total;
      const double wt = w ? double(w[tr]) : 1.0, l = double(lse[r]);
      if (p.log_probs) {  // nll_loss: -s w[t] at the target, nothing through a softmax
        gr[tr * inner] = T(-s * wt);
        continue;
      }
      const double a = s * (keep * wt + spread * w_sum), bc = s * spread;
      row_grad_of(xr, inner, w, n, l, a, bc, gr);
      // the target's own term, from scratch (not a subtraction from a rounded value)
      gr[tr * inner] = T(a * std::exp(double(xr[tr * inner]) - l) - bc * wt - s * keep * wt);
    }
  });
}

template void cross_entropy_forward(const CrossEntropyParams&, const float*, const int64_t*, const float*, float*,
                                    float*, float*, double*);
template void cross_entropy_forward(const CrossEntropyParams&, const double*, const int64_t*, const double*, double*,
                                    double*, double*, double*);
template void cross_entropy_backward(const CrossEntropyParams&, const float*, const int64_t*, const float*,
                                     const float*, const float*, const float*, float*);
template void cross_entropy_backward(const CrossEntropyParams&, const double*, const int64_t*, const double*,
                                     const double*, const double*, const double*, double*);

}  // namespace lucid::cpu
