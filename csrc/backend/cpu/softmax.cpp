// Softmax / log-softmax along one dim of a contiguous [outer, n, inner] block, in
// double: subtract the maximum before exponentiating so large inputs do not overflow.
#include <cmath>
#include <limits>
#include <vector>

#include "backend/cpu/reduce.h"

namespace lucid::cpu {

namespace {

// The common case, softmax over the last dim: one contiguous row at a time, with
// the running max and sum in registers.
void softmax_rows(const double* in, double* out, int64_t outer, int64_t n, bool log) {
  for (int64_t o = 0; o < outer; ++o) {
    const double* x = in + o * n;
    double* y = out + o * n;
    double mx = -std::numeric_limits<double>::infinity();
    bool nan = false;
    for (int64_t k = 0; k < n; ++k) {
      mx = x[k] > mx ? x[k] : mx;
      nan |= std::isnan(x[k]);
    }
    if (nan) mx = std::numeric_limits<double>::quiet_NaN();
    else if (std::isinf(mx) && mx < 0) mx = 0;  // all -inf: nan below, as PyTorch
    double sum = 0;
    for (int64_t k = 0; k < n; ++k) {
      double e = std::exp(x[k] - mx);
      sum += e;
      y[k] = e;
    }
    if (log) {
      const double shift = mx + std::log(sum);
      for (int64_t k = 0; k < n; ++k) y[k] = x[k] - shift;
    } else {
      const double inv = 1.0 / sum;
      for (int64_t k = 0; k < n; ++k) y[k] *= inv;
    }
  }
}

}  // namespace

void softmax_dim(const double* in, double* out, int64_t outer, int64_t n, int64_t inner, bool log) {
  if (inner == 1) return softmax_rows(in, out, outer, n, log);
  std::vector<double> mx(static_cast<size_t>(inner)), sum(static_cast<size_t>(inner));
  for (int64_t o = 0; o < outer; ++o) {
    const double* x = in + o * n * inner;
    double* y = out + o * n * inner;
    std::fill(mx.begin(), mx.end(), -std::numeric_limits<double>::infinity());
    std::fill(sum.begin(), sum.end(), 0.0);
    for (int64_t k = 0; k < n; ++k)
      for (int64_t i = 0; i < inner; ++i) {
        double v = x[k * inner + i];
        if (v > mx[i] || std::isnan(v)) mx[i] = std::isnan(mx[i]) ? mx[i] : v;
      }
    // A row of -inf has max -inf: shift by 0 instead, giving nan like PyTorch (0/0).
    for (int64_t i = 0; i < inner; ++i)
      if (std::isinf(mx[i]) && mx[i] < 0) mx[i] = 0;
    for (int64_t k = 0; k < n; ++k)
      for (int64_t i = 0; i < inner; ++i) {
        double e = std::exp(x[k * inner + i] - mx[i]);
        sum[i] += e;
        if (!log) y[k * inner + i] = e;
      }
    for (int64_t k = 0; k < n; ++k)
      for (int64_t i = 0; i < inner; ++i) {
        if (log) y[k * inner + i] = x[k * inner + i] - mx[i] - std::log(sum[i]);
        else y[k * inner + i] /= sum[i];
      }
  }
}

}  // namespace lucid::cpu
