// Product, variance, log-sum-exp and norm over contiguous rows (double or int64
// accumulators, as sum does).
#include <algorithm>
#include <cmath>
#include <complex>
#include <limits>

#include "backend/cpu/reduce.h"
#include "core/parallel.h"

namespace lucid::cpu {

namespace {

// fn(o0, o1) over the rows [0, outer) of n elements each, split over the pool by
// rows; a few long rows run on the calling thread, without the GIL.
template <typename Fn>
void over_rows(int64_t outer, int64_t n, const Fn& fn) {
  const int64_t grain = std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(n, 1));
  LetOthersRun unlocked(outer < 2 * grain && outer * n >= 2 * kParallelGrain);
  parallel_for(outer, grain, fn);
}

}  // namespace

void prod_rows(Dtype d, const std::byte* in, int64_t outer, int64_t n, std::byte* out) {
  auto run = [&]<typename T, typename Acc>() {
    auto* x = reinterpret_cast<const T*>(in);
    auto* y = reinterpret_cast<T*>(out);
    over_rows(outer, n, [&](int64_t o0, int64_t o1) {
      for (int64_t o = o0; o < o1; ++o) {
        Acc acc(1);
        const T* row = x + o * n;
        for (int64_t k = 0; k < n; ++k) acc *= Acc(row[k]);
        y[o] = T(acc);
      }
    });
  };
  switch (d) {
    case Dtype::I64: return run.template operator()<int64_t, int64_t>();  // wraps like PyTorch's
    case Dtype::F64: return run.template operator()<double, double>();
    case Dtype::C128: return run.template operator()<complex128, complex128>();
    default: fail<RuntimeError>("internal: prod_rows on ", dtype_name(d));
  }
}

void var_rows(const double* in, int64_t outer, int64_t n, double correction, double* var, double* mean) {
  const double dof = std::max(double(n) - correction, 0.0);
  over_rows(outer, n, [&](int64_t o0, int64_t o1) {
    for (int64_t o = o0; o < o1; ++o) {
      const double* row = in + o * n;
      double s = 0;
      for (int64_t k = 0; k < n; ++k) s += row[k];
      const double m = n ? s / double(n) : std::numeric_limits<double>::quiet_NaN();
      double m2 = 0;
      for (int64_t k = 0; k < n; ++k) m2 += (row[k] - m) * (row[k] - m);
      if (var) var[o] = n ? m2 / dof : std::numeric_limits<double>::quiet_NaN();
      if (mean) mean[o] = m;
    }
  });
}

void var_rows_complex(const complex128* in, int64_t outer, int64_t n, double correction, double* var) {
  const double dof = std::max(double(n) - correction, 0.0);
  over_rows(outer, n, [&](int64_t o0, int64_t o1) {
    for (int64_t o = o0; o < o1; ++o) {
      const complex128* row = in + o * n;
      std::complex<double> s = 0;
      for (int64_t k = 0; k < n; ++k) s += std::complex<double>(row[k]);
      const std::complex<double> m = s / double(n);
      double m2 = 0;
      for (int64_t k = 0; k < n; ++k) m2 += std::norm(std::complex<double>(row[k]) - m);
      // (torch's complex path gives nan, not inf, when no degrees of freedom are left)
      var[o] = n && dof > 0 ? m2 / dof : std::numeric_limits<double>::quiet_NaN();
    }
  });
}

void complex_abs(const complex128* in, int64_t count, double* out) {
  for (int64_t i = 0; i < count; ++i) out[i] = std::abs(std::complex<double>(in[i]));
}

void logsumexp_rows(const double* in, int64_t outer, int64_t n, double* out) {
  over_rows(outer, n, [&](int64_t o0, int64_t o1) {
    for (int64_t o = o0; o < o1; ++o) {
      const double* row = in + o * n;
      double m = -std::numeric_limits<double>::infinity();
      for (int64_t k = 0; k < n; ++k) m = row[k] > m ? row[k] : m;
      if (std::isinf(m)) {  // all -inf (or empty): -inf; some +inf: +inf (NaNs still propagate below)
        double nan_seen = 0;
        for (int64_t k = 0; k < n; ++k) nan_seen += std::isnan(row[k]) ? row[k] : 0.0;
        out[o] = m + nan_seen;
        continue;
      }
      double s = 0;
      for (int64_t k = 0; k < n; ++k) s += std::exp(row[k] - m);
      out[o] = m + std::log(s);
    }
  });
}

void norm_rows(const double* in, int64_t outer, int64_t n, double p, double* out) {
  over_rows(outer, n, [&](int64_t o0, int64_t o1) {
    for (int64_t o = o0; o < o1; ++o) {
      const double* row = in + o * n;
      double r = 0;
      if (std::isinf(p)) {
        r = p > 0 ? 0.0 : std::numeric_limits<double>::infinity();
        for (int64_t k = 0; k < n; ++k) {
          double a = std::fabs(row[k]);
          if (std::isnan(a)) { r = a; break; }
          r = p > 0 ? std::max(r, a) : std::min(r, a);
        }
      } else if (p == 0) {
        for (int64_t k = 0; k < n; ++k) r += row[k] != 0 ? 1.0 : 0.0;
      } else if (p == 1) {
        for (int64_t k = 0; k < n; ++k) r += std::fabs(row[k]);
      } else if (p == 2) {
        for (int64_t k = 0; k < n; ++k) r += row[k] * row[k];
        r = std::sqrt(r);
      } else {
        for (int64_t k = 0; k < n; ++k) r += std::pow(std::fabs(row[k]), p);
        r = std::pow(r, 1.0 / p);
      }
      out[o] = r;
    }
  });
}

}  // namespace lucid::cpu
