// The per-channel / per-group float64 arithmetic of batch_norm and group_norm
// (norm_stats.h). Every vector and table is a contiguous float64 host tensor (a
// table's rows one after the other); an absent weight counts as ones and an absent
// bias as zeros.
#include "backend/cpu/norm_stats.h"

#include <cmath>

#include "ops/prims/norm.h"

namespace lucid::cpu {

namespace {

double* f64(TensorImpl* t) { return reinterpret_cast<double*>(t->host_ptr()); }

// Reads the present ones of a primitive's optional inputs in order.
class InputCursor {
 public:
  explicit InputCursor(ops::Inputs ins) : ins_(ins) {}
  const double* next(bool present = true) {
    return present ? reinterpret_cast<const double*>(ins_[i_++]->host_ptr()) : nullptr;
  }

 private:
  ops::Inputs ins_;
  size_t i_ = 0;
};

// Batch norm's units of channel c: the N rows (n, c), or the L columns (c, l).
struct ChannelUnits {
  ops::NormUnits units;
  int64_t C;
  int64_t members() const { return C ? units.count() / C : 0; }
  int64_t unit(int64_t c, int64_t j) const { return units.columns ? c * members() + j : j * C + c; }
  int64_t per_channel() const { return C ? units.n * units.k / C : 0; }  // elements of a channel: N * L
};

}  // namespace

void batch_norm_stats(const ops::Primitive& prim, ops::Outputs outs, ops::Inputs ins) {
  const auto& p = ops::prim_cast<ops::BatchNormStats>(prim);
  const int64_t C = p.channels;
  const ChannelUnits cu{p.units, C};
  const int64_t J = cu.members(), M = cu.per_channel();
  InputCursor in(ins);
  const double* rmean = in.next(p.training);
  const double* rm2 = rmean ? rmean + p.units.count() : nullptr;
  const double* running_mean = in.next(!p.training || p.update_mean);
  const double* running_var = in.next(!p.training || p.update_var);
  const double* w = in.next(p.has_weight);
  const double* b = in.next(p.has_bias);
  double *bmean = f64(outs[0]), *invstd = bmean + C;
  double *scale = f64(outs[1]), *shift = scale + p.units.count();
  double* running = p.update_mean || p.update_var ? f64(outs[2]) : nullptr;
  double* new_mean = p.update_mean ? running : nullptr;
  double* new_var = p.update_var ? running + C : nullptr;

  for (int64_t c = 0; c < C; ++c) {
    if (!p.training) {
      bmean[c] = running_mean[c];
      invstd[c] = 1.0 / std::sqrt(running_var[c] + p.eps);
      continue;
    }
    double mu = 0;  // Chan: combine the units of channel c (equal counts)
    for (int64_t j = 0; j < J; ++j) mu += rmean[cu.unit(c, j)];
    mu = J ? mu / J : 0.0;
    double s = 0, dev = 0;
    for (int64_t j = 0; j < J; ++j) {
      s += rm2[cu.unit(c, j)];
      const double d = rmean[cu.unit(c, j)] - mu;
      dev += d * d;
    }
    const double m2 = s + static_cast<double>(p.units.size()) * dev;
    bmean[c] = mu;
    invstd[c] = 1.0 / std::sqrt(M ? m2 / M + p.eps : p.eps);
    if (new_mean) new_mean[c] = (1 - p.momentum) * running_mean[c] + p.momentum * mu;
    if (new_var) new_var[c] = (1 - p.momentum) * running_var[c] + p.momentum * (M > 1 ? m2 / (M - 1) : NAN);
  }
  for (int64_t c = 0; c < C; ++c) {
    const double wc = w ? w[c] : 1.0, bc = b ? b[c] : 0.0;
    for (int64_t j = 0; j < J; ++j) {
      scale[cu.unit(c, j)] = invstd[c] * wc;
      shift[cu.unit(c, j)] = bc - bmean[c] * invstd[c] * wc;
    }
  }
}

void batch_norm_grad_coeffs(const ops::Primitive& prim, ops::Outputs outs, ops::Inputs ins) {
  const auto& p = ops::prim_cast<ops::BatchNormGradCoeffs>(prim);
  const int64_t C = p.channels;
  const ChannelUnits cu{p.units, C};
  const int64_t J = cu.members();
  const double M = static_cast<double>(cu.per_channel());
  InputCursor in(ins);
  const double *s1 = in.next(), *s2 = s1 + p.units.count();
  const double *mu = in.next(), *is = mu + C;
  const double* wv = in.next(p.has_weight);
  double *dw = f64(outs[0]), *db = dw + C;
  double *A = f64(outs[1]), *B = A + p.units.count(), *D = B + p.units.count();
  for (int64_t c = 0; c < C; ++c) {
    double sdy = 0, sdyx = 0;
    for (int64_t j = 0; j < J; ++j) {
      sdy += s1[cu.unit(c, j)];
      sdyx += s2[cu.unit(c, j)];
    }
    const double sdyxc = sdyx - mu[c] * sdy;  // sum dy * (x - mean)
    dw[c] = is[c] * sdyxc;
    db[c] = sdy;
    const double a = (wv ? wv[c] : 1.0) * is[c];
    double bb = 0, dd = 0;
    if (p.training && M > 0) {
      const double k2 = is[c] * is[c] * sdyxc / M;
      bb = -a * k2;
      dd = a * (mu[c] * k2 - sdy / M);
    }
    for (int64_t j = 0; j < J; ++j) {
      A[cu.unit(c, j)] = a;
      B[cu.unit(c, j)] = bb;
      D[cu.unit(c, j)] = dd;
    }
  }
}

void group_norm_stats(const ops::Primitive& prim, ops::Outputs outs, ops::Inputs ins) {
  const auto& p = ops::prim_cast<ops::GroupNormStats>(prim);
  const int64_t N = p.batch, C = p.channels, G = p.groups, Cg = C / G, L = p.len, M = Cg * L;
  InputCursor in(ins);
  const double *rmean = in.next(), *rm2 = rmean + N * C;
  const double* w = in.next(p.has_weight);
  const double* b = in.next(p.has_bias);
  double *gmean = f64(outs[0]), *rstd = gmean + N * G;
  double *scale = f64(outs[1]), *shift = scale + N * C;
  for (int64_t q = 0; q < N * G; ++q) {  // the Cg consecutive rows of group q = n * G + g
    const double* m = rmean + q * Cg;
    const double* s2 = rm2 + q * Cg;
    double mu = 0, s = 0, dev = 0;
    for (int64_t j = 0; j < Cg; ++j) mu += m[j];
    mu /= Cg;
    for (int64_t j = 0; j < Cg; ++j) {
      s += s2[j];
      dev += (m[j] - mu) * (m[j] - mu);
    }
    gmean[q] = mu;
    rstd[q] = 1.0 / std::sqrt(M ? (s + L * dev) / M + p.eps : p.eps);
  }
  for (int64_t n = 0; n < N; ++n)
    for (int64_t c = 0; c < C; ++c) {
      const int64_t q = n * G + c / Cg;
      const double wc = w ? w[c] : 1.0, bc = b ? b[c] : 0.0;
      scale[n * C + c] = rstd[q] * wc;
      shift[n * C + c] = bc - gmean[q] * rstd[q] * wc;
    }
}

void group_norm_grad_coeffs(const ops::Primitive& prim, ops::Outputs outs, ops::Inputs ins) {
  const auto& p = ops::prim_cast<ops::GroupNormGradCoeffs>(prim);
  const int64_t N = p.batch, C = p.channels, G = p.groups, Cg = C / G;
  const double M = static_cast<double>(Cg * p.len);
  InputCursor in(ins);
  const double *s1 = in.next(), *s2 = s1 + N * C;
  const double *mu = in.next(), *is = mu + N * G;
  const double* w = in.next(p.has_weight);
  double *dw = f64(outs[0]), *db = dw + C;
  double *A = f64(outs[1]), *B = A + N * C, *D = B + N * C;
  for (int64_t c = 0; c < C; ++c) dw[c] = db[c] = 0.0;
  for (int64_t k = 0; k < N; ++k)
    for (int64_t gi = 0; gi < G; ++gi) {
      const int64_t q = k * G + gi;
      double sdx = 0, sdxx = 0;  // sum of dxhat = dy * w, and of dxhat * x
      for (int64_t j = 0; j < Cg; ++j) {
        const int64_t c = gi * Cg + j, row = k * C + c;
        const double wc = w ? w[c] : 1.0;
        sdx += wc * s1[row];
        sdxx += wc * s2[row];
        dw[c] += is[q] * (s2[row] - mu[q] * s1[row]);
        db[c] += s1[row];
      }
      const double sxh = is[q] * (sdxx - mu[q] * sdx);  // sum dxhat * xhat
      const double k2 = M > 0 ? is[q] * is[q] * sxh / M : 0.0;
      for (int64_t j = 0; j < Cg; ++j) {
        const int64_t c = gi * Cg + j, row = k * C + c;
        A[row] = is[q] * (w ? w[c] : 1.0);
        B[row] = -k2;
        D[row] = M > 0 ? mu[q] * k2 - is[q] * sdx / M : 0.0;
      }
    }
}

}  // namespace lucid::cpu
