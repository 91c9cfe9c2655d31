// CTC loss kernels: the alpha (forward) and beta (backward) recursions over the
// blank-extended target l' = (blank, l1, blank, l2, ..., blank), in log space and in
// double, one batch entry per pool task.
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "core/parallel.h"
#include "backend/cpu/seq_kernels.h"

namespace lucid::cpu {

namespace {

constexpr double kNegInf = -std::numeric_limits<double>::infinity();

inline double lse2(double a, double b) {
  if (a == kNegInf) return b;
  if (b == kNegInf) return a;
  const double m = std::max(a, b);
  return m + std::log(std::exp(a - m) + std::exp(b - m));
}

// Label s of the extended target of row `tg`.
inline int64_t ext_label(const int64_t* tg, int64_t s, int64_t blank) { return s % 2 == 0 ? blank : tg[s / 2]; }

// Whether alpha may skip from s - 2 to s (a label that differs from the previous label).
inline bool can_skip(const int64_t* tg, int64_t s) { return s % 2 == 1 && s >= 3 && tg[s / 2] != tg[s / 2 - 1]; }

}  // namespace

template <class T>
void ctc_forward(const T* lp, const int64_t* targets, const int64_t* il, const int64_t* tl, int64_t Tn, int64_t N,
                 int64_t C, int64_t smax, int64_t blank, double* alpha, double* nll) {
  const int64_t Lmax = 2 * smax + 1;
  parallel_for(N, 1, [&](int64_t b0, int64_t b1) {
    for (int64_t b = b0; b < b1; ++b) {
      const int64_t* tg = targets + b * smax;
      const int64_t L = 2 * tl[b] + 1, len = il[b];
      double* a = alpha + b * Tn * Lmax;
      std::fill(a, a + Tn * Lmax, kNegInf);
      auto at = [&](int64_t t, int64_t c) { return double(lp[(t * N + b) * C + c]); };
      if (len == 0) {
        nll[b] = tl[b] == 0 ? 0.0 : std::numeric_limits<double>::infinity();
        continue;
      }
      a[0] = at(0, blank);
      if (L > 1) a[1] = at(0, tg[0]);
      for (int64_t t = 1; t < len; ++t) {
        const double* prev = a + (t - 1) * Lmax;
        double* cur = a + t * Lmax;
        for (int64_t s = 0; s < L; ++s) {
          double v = prev[s];
          if (s >= 1) v = lse2(v, prev[s - 1]);
          if (can_skip(tg, s)) v = lse2(v, prev[s - 2]);
          cur[s] = v == kNegInf ? kNegInf : v + at(t, ext_label(tg, s, blank));
        }
      }
      const double* last = a + (len - 1) * Lmax;
      nll[b] = -(L > 1 ? lse2(last[L - 1], last[L - 2]) : last[0]);
    }
  });
}

template <class T>
void ctc_backward(const T* lp, const int64_t* targets, const int64_t* il, const int64_t* tl, int64_t Tn, int64_t N,
                  int64_t C, int64_t smax, int64_t blank, const double* alpha, const double* nll, const T* g,
                  T* grad) {
  const int64_t Lmax = 2 * smax + 1;
  parallel_for(N, 1, [&](int64_t b0, int64_t b1) {
    std::vector<double> beta_prev(Lmax), beta(Lmax), lcab(C);
    for (int64_t b = b0; b < b1; ++b) {
      const int64_t* tg = targets + b * smax;
      const int64_t L = 2 * tl[b] + 1, len = il[b];
      const double* a = alpha + b * Tn * Lmax;
      const double gb = double(g[b]), nb = nll[b];
      auto at = [&](int64_t t, int64_t c) { return double(lp[(t * N + b) * C + c]); };
      for (int64_t t = 0; t < Tn; ++t)
        for (int64_t c = 0; c < C; ++c) grad[(t * N + b) * C + c] = T(0);
      if (len == 0 || gb == 0.0) continue;  // zero_infinity's where sends 0 here for an infinite loss
      if (std::isinf(nb)) {
        // No alignment exists: torch's gradient formula gives exp(-inf + inf) = NaN at
        // every step of the input, as here (zero_infinity is how to get zeros).
        for (int64_t t = 0; t < len; ++t)
          for (int64_t c = 0; c < C; ++c) grad[(t * N + b) * C + c] = std::numeric_limits<T>::quiet_NaN();
        continue;
      }
      for (int64_t t = len - 1; t >= 0; --t) {
        // beta_t(s): log-probability of the rest of the labelling from (t, s), emission at t included
        std::fill(beta.begin(), beta.begin() + L, kNegInf);
        for (int64_t s = 0; s < L; ++s) {
          double v;
          if (t == len - 1) {
            v = s >= L - 2 ? 0.0 : kNegInf;
          } else {
            v = beta_prev[s];
            if (s + 1 < L) v = lse2(v, beta_prev[s + 1]);
            if (s + 2 < L && can_skip(tg, s + 2)) v = lse2(v, beta_prev[s + 2]);
          }
          beta[s] = v == kNegInf ? kNegInf : v + at(t, ext_label(tg, s, blank));
        }
        std::fill(lcab.begin(), lcab.end(), kNegInf);
        const double* at_row = a + t * Lmax;
        for (int64_t s = 0; s < L; ++s) {
          const int64_t c = ext_label(tg, s, blank);
          if (at_row[s] != kNegInf && beta[s] != kNegInf) lcab[c] = lse2(lcab[c], at_row[s] + beta[s]);
        }
        T* gr = grad + (t * N + b) * C;
        for (int64_t c = 0; c < C; ++c) {
          const double l = at(t, c);
          const double post = lcab[c] == kNegInf ? 0.0 : std::exp(lcab[c] + nb - l);
          gr[c] = T((std::exp(l) - post) * gb);
        }
        std::swap(beta, beta_prev);
      }
    }
  });
}

template void ctc_forward<float>(const float*, const int64_t*, const int64_t*, const int64_t*, int64_t, int64_t,
                                 int64_t, int64_t, int64_t, double*, double*);
template void ctc_forward<double>(const double*, const int64_t*, const int64_t*, const int64_t*, int64_t, int64_t,
                                  int64_t, int64_t, int64_t, double*, double*);
template void ctc_backward<float>(const float*, const int64_t*, const int64_t*, const int64_t*, int64_t, int64_t,
                                  int64_t, int64_t, int64_t, const double*, const double*, const float*, float*);
template void ctc_backward<double>(const double*, const int64_t*, const int64_t*, const int64_t*, int64_t, int64_t,
                                   int64_t, int64_t, int64_t, const double*, const double*, const double*, double*);

}  // namespace lucid::cpu
