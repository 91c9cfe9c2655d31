// batch_norm and group_norm (ops/norm.h). Both see the input as contiguous rows
// [N*C, L], one per (sample, channel): per-row moments combine into the statistics
// of a channel (batch norm: the N rows of channel c) or of a group (group norm: the
// C/G rows of group g of sample n) with Chan's formula, and the output is a per-row
// affine map x * scale + shift. The fused backward is two passes as well: per-row
// sums of dy and dy * x, then dx = A dy + B x + D with per-row coefficients.
// float16/bfloat16 compute in float32, float32 in float32 lanes with double sums.
#include "ops/norm.h"

#include <cmath>
#include <cstring>

#include "autograd/grad_mode.h"
#include "autograd/record.h"
#include "backend/cpu/norm_kernels.h"
#include "ops/copy_ops.h"
#include "ops/elementwise.h"
#include "ops/reduce.h"
#include "ops/reduce_plan.h"
#include "ops/require_cpu.h"
#include "ops/views.h"

namespace lucid::ops {

namespace {

using autograd::Grads;
using Vec = std::vector<double>;

Dtype compute_dtype(Dtype d) { return d == Dtype::F64 ? Dtype::F64 : Dtype::F32; }

Vec to_vec(const TensorPtr& t) {
  autograd::GradModeGuard no_grad(false);  // a read of the values, never part of a graph
  TensorPtr c = contiguous_as(t, Dtype::F64);
  const double* p = host_data<double>(c);
  return Vec(p, p + c->numel());
}

TensorPtr from_vec(const Vec& v, const Shape& shape) {
  TensorPtr t = TensorImpl::empty(shape, Dtype::F64, Device::cpu());
  if (!v.empty()) std::memcpy(t->host_ptr(), v.data(), v.size() * sizeof(double));
  return t;
}

// The input as units of the compute dtype: rows [rows, len], one per (sample, channel),
// or, for batch norm of short spatial dims (len < kColumnsBelow), the columns of
// [n, k] = [N, C * len], one per (channel, position), so the lanes run across channels.
constexpr int64_t kColumnsBelow = 32;

struct Rows {
  TensorPtr x;
  int64_t rows = 0, len = 0;
  bool cols = false;
  int64_t n = 0, k = 0;
  int64_t units() const { return cols ? k : rows; }
  int64_t unit_count() const { return cols ? n : len; }  // elements per unit
};

Rows as_rows(const TensorPtr& input, bool allow_cols = false) {
  Rows r;
  r.x = contiguous_as(input, compute_dtype(input->dtype()));
  r.rows = input->shape()[0] * input->shape()[1];
  r.len = r.rows ? input->numel() / r.rows : 0;
  if (allow_cols && r.len < kColumnsBelow && r.rows > 0) {
    r.cols = true;
    r.n = input->shape()[0];
    r.k = input->shape()[1] * r.len;
  }
  return r;
}

void row_moments(const Rows& r, Vec& mean, Vec& m2) {
  mean.assign(r.units(), 0.0);
  m2.assign(r.units(), 0.0);
  const bool f32 = r.x->dtype() == Dtype::F32;
  if (r.cols && f32) cpu::norm_col_moments(host_data<float>(r.x), r.n, r.k, mean.data(), m2.data());
  else if (r.cols) cpu::norm_col_moments(host_data<double>(r.x), r.n, r.k, mean.data(), m2.data());
  else if (f32) cpu::norm_row_moments(host_data<float>(r.x), r.rows, r.len, mean.data(), m2.data());
  else cpu::norm_row_moments(host_data<double>(r.x), r.rows, r.len, mean.data(), m2.data());
}

void row_grad_sums(const Rows& r, const TensorPtr& dy, Vec& s1, Vec& s2) {
  s1.assign(r.units(), 0.0);
  s2.assign(r.units(), 0.0);
  const bool f32 = r.x->dtype() == Dtype::F32;
  if (r.cols && f32) cpu::norm_col_grad_sums(host_data<float>(dy), host_data<float>(r.x), r.n, r.k, s1.data(), s2.data());
  else if (r.cols) cpu::norm_col_grad_sums(host_data<double>(dy), host_data<double>(r.x), r.n, r.k, s1.data(), s2.data());
  else if (f32) cpu::norm_row_grad_sums(host_data<float>(dy), host_data<float>(r.x), r.rows, r.len, s1.data(), s2.data());
  else cpu::norm_row_grad_sums(host_data<double>(dy), host_data<double>(r.x), r.rows, r.len, s1.data(), s2.data());
}

template <typename T>
std::vector<T> narrow_vec(const Vec& v) {
  return std::vector<T>(v.begin(), v.end());
}

// y = x * scale[unit] + shift[unit], as the input's dtype
TensorPtr row_affine(const Rows& r, const TensorPtr& input, const Vec& scale, const Vec& shift) {
  TensorPtr y = TensorImpl::empty(input->shape(), r.x->dtype(), Device::cpu());
  if (r.x->dtype() == Dtype::F32) {
    auto s = narrow_vec<float>(scale), t = narrow_vec<float>(shift);
    if (r.cols) cpu::norm_col_affine(host_data<float>(r.x), host_data<float>(y), r.n, r.k, s.data(), t.data());
    else cpu::norm_row_affine(host_data<float>(r.x), host_data<float>(y), r.rows, r.len, s.data(), t.data());
  } else if (r.cols) {
    cpu::norm_col_affine(host_data<double>(r.x), host_data<double>(y), r.n, r.k, scale.data(), shift.data());
  } else {
    cpu::norm_row_affine(host_data<double>(r.x), host_data<double>(y), r.rows, r.len, scale.data(), shift.data());
  }
  return y->dtype() == input->dtype() ? y : y->clone(input->dtype());
}

// dx = a[unit] dy + b[unit] x + d[unit], in the compute dtype (the engine casts)
TensorPtr row_affine2(const Rows& r, const TensorPtr& dy, const Vec& a, const Vec& b, const Vec& d) {
  TensorPtr dx = TensorImpl::empty(r.x->shape(), r.x->dtype(), Device::cpu());
  if (r.x->dtype() == Dtype::F32) {
    auto a32 = narrow_vec<float>(a), b32 = narrow_vec<float>(b), d32 = narrow_vec<float>(d);
    if (r.cols)
      cpu::norm_col_affine2(host_data<float>(dy), host_data<float>(r.x), host_data<float>(dx), r.n, r.k, a32.data(), b32.data(),
                            d32.data());
    else
      cpu::norm_row_affine2(host_data<float>(dy), host_data<float>(r.x), host_data<float>(dx), r.rows, r.len, a32.data(),
                            b32.data(), d32.data());
  } else if (r.cols) {
    cpu::norm_col_affine2(host_data<double>(dy), host_data<double>(r.x), host_data<double>(dx), r.n, r.k, a.data(), b.data(),
                          d.data());
  } else {
    cpu::norm_row_affine2(host_data<double>(dy), host_data<double>(r.x), host_data<double>(dx), r.rows, r.len, a.data(), b.data(),
                          d.data());
  }
  return dx;
}

// Batch norm's units of channel c: the N rows (n, c), or the L columns (c, l).
struct ChannelUnits {
  const Rows& r;
  int64_t C;
  int64_t members() const { return r.cols ? r.len : (C ? r.rows / C : 0); }
  int64_t unit(int64_t c, int64_t j) const { return r.cols ? c * r.len + j : j * C + c; }
};

std::string shape_str(const Shape& s) {
  std::string out = "[";
  for (size_t i = 0; i < s.size(); ++i) out += str_cat(i ? ", " : "", s[i]);
  return out + "]";
}

void check_input(const char* name, const TensorPtr& input) {
  LUCID_CHECK(input, TypeError, name, "(): input must be a Tensor");
  require_cpu(name, input);
  LUCID_CHECK(is_floating(input->dtype()), RuntimeError, name, "(): expected a floating point input, got ",
              dtype_name(input->dtype()));
  LUCID_CHECK(input->ndim() >= 2, ValueError, name, "(): expected an input with at least 2 dimensions [N, C, *], got ",
              input->ndim(), "-D input of shape ", shape_str(input->shape()));
}

void check_vector(const char* name, const char* what, const TensorPtr& t, int64_t c) {
  if (!t) return;
  require_cpu(name, t);
  LUCID_CHECK(t->numel() == c, RuntimeError, name, "(): ", what, " should contain ", c, " elements not ",
              t->numel());
}

// The shape [1, C, 1, ...] a per-channel vector takes against an input of rank nd.
Shape channel_shape(int64_t c, int64_t nd) {
  Shape s(nd, 1);
  s[1] = c;
  return s;
}

std::vector<int64_t> non_channel_dims(int64_t nd) {
  std::vector<int64_t> d{0};
  for (int64_t i = 2; i < nd; ++i) d.push_back(i);
  return d;
}

TensorPtr sum_all_but(const TensorPtr& t, const std::vector<int64_t>& dims) { return sum(t, dims, false, std::nullopt); }

}  // namespace

TensorPtr batch_norm(const TensorPtr& input, const TensorPtr& weight, const TensorPtr& bias,
                     const TensorPtr& running_mean, const TensorPtr& running_var, bool training, double momentum,
                     double eps) {
  const char* name = "batch_norm";
  check_input(name, input);
  const int64_t N = input->shape()[0], C = input->shape()[1], nd = input->ndim();
  check_vector(name, "weight", weight, C);
  check_vector(name, "bias", bias, C);
  check_vector(name, "running_mean", running_mean, C);
  check_vector(name, "running_var", running_var, C);
  LUCID_CHECK(training || (running_mean && running_var), RuntimeError, name,
              "(): running_mean and running_var must be defined in evaluation mode");
  Rows r = as_rows(input, /*allow_cols=*/true);
  const ChannelUnits cu{r, C};
  const int64_t L = r.len, M = N * L;

  Vec bmean(C), invstd(C);
  if (training) {
    Vec rmean, rm2;
    row_moments(r, rmean, rm2);
    Vec m2(C, 0.0);
    const int64_t J = cu.members();
    for (int64_t c = 0; c < C; ++c) {  // Chan: combine the units of channel c (equal counts)
      double mu = 0;
      for (int64_t j = 0; j < J; ++j) mu += rmean[cu.unit(c, j)];
      mu = J ? mu / J : 0.0;
      double s = 0, dev = 0;
      for (int64_t j = 0; j < J; ++j) {
        s += rm2[cu.unit(c, j)];
        const double d = rmean[cu.unit(c, j)] - mu;
        dev += d * d;
      }
      bmean[c] = mu;
      m2[c] = s + static_cast<double>(r.unit_count()) * dev;
      invstd[c] = 1.0 / std::sqrt(M ? m2[c] / M + eps : eps);
    }
    if ((running_mean || running_var) && M > 0) {  // in place, outside autograd (buffers); an empty batch keeps them
      autograd::GradModeGuard no_grad(false);
      if (running_mean) {
        Vec rm = to_vec(running_mean);
        for (int64_t c = 0; c < C; ++c) rm[c] = (1 - momentum) * rm[c] + momentum * bmean[c];
        copy_(running_mean, reshape(from_vec(rm, {C}), running_mean->shape()));
      }
      if (running_var) {
        Vec rv = to_vec(running_var);
        for (int64_t c = 0; c < C; ++c)
          rv[c] = (1 - momentum) * rv[c] + momentum * (M > 1 ? m2[c] / (M - 1) : NAN);
        copy_(running_var, reshape(from_vec(rv, {C}), running_var->shape()));
      }
    }
  } else {
    bmean = to_vec(running_mean);
    Vec rv = to_vec(running_var);
    for (int64_t c = 0; c < C; ++c) invstd[c] = 1.0 / std::sqrt(rv[c] + eps);
  }

  const Vec w = weight ? to_vec(weight) : Vec(C, 1.0);
  const Vec b = bias ? to_vec(bias) : Vec(C, 0.0);
  Vec scale(r.units()), shift(r.units());
  for (int64_t c = 0; c < C; ++c)
    for (int64_t j = 0; j < cu.members(); ++j) {
      scale[cu.unit(c, j)] = invstd[c] * w[c];
      shift[cu.unit(c, j)] = b[c] - bmean[c] * invstd[c] * w[c];
    }
  TensorPtr out = row_affine(r, input, scale, shift);

  if (autograd::needs_grad({&input, &weight, &bias})) {
    const bool has_w = bool(weight);
    auto node = autograd::record("NativeBatchNormBackward0", {input, weight, bias}, {out},
                                 [N, C, nd, eps, training, has_w](const Node& n, const Grads& g) {
      TensorPtr x = n.saved(0), w = has_w ? n.saved(3) : nullptr;
      const auto dims = non_channel_dims(nd);
      const Shape cs = channel_shape(C, nd);
      if (autograd::grad_enabled()) {  // create_graph: the gradient as ops of x and w
        TensorPtr xhat, dx;
        TensorPtr gw = w ? mul(g[0], reshape(w, cs)) : g[0];
        if (training) {
          TensorPtr mu = mean(x, dims, true, std::nullopt);
          TensorPtr xc = sub(x, mu);
          TensorPtr is = rsqrt(add(mean(mul(xc, xc), dims, true, std::nullopt), Scalar(eps)));
          xhat = mul(xc, is);
          dx = mul(is, sub(sub(gw, mean(gw, dims, true, std::nullopt)),
                           mul(xhat, mean(mul(gw, xhat), dims, true, std::nullopt))));
        } else {
          TensorPtr mu = reshape(copy_to(n.saved(1), x->dtype(), std::nullopt), cs);
          TensorPtr is = reshape(copy_to(n.saved(2), x->dtype(), std::nullopt), cs);
          xhat = mul(sub(x, mu), is);
          dx = mul(gw, is);
        }
        return Grads{dx, sum_all_but(mul(g[0], xhat), dims), sum_all_but(g[0], dims)};
      }
      // fused: per-row sums of dy and dy*x, then dx = A dy + B x + D per row
      Rows r = as_rows(x, /*allow_cols=*/true);
      const ChannelUnits cu{r, C};
      const int64_t J = cu.members();
      TensorPtr dy = contiguous_as(g[0], r.x->dtype());
      Vec s1, s2;
      row_grad_sums(r, dy, s1, s2);
      const Vec mu = to_vec(n.saved(1)), is = to_vec(n.saved(2));
      const Vec wv = w ? to_vec(w) : Vec(C, 1.0);
      const double M = static_cast<double>(r.rows ? N * r.len : 0);
      Vec dw(C), db(C), A(r.units()), B(r.units()), D(r.units());
      for (int64_t c = 0; c < C; ++c) {
        double sdy = 0, sdyx = 0;
        for (int64_t j = 0; j < J; ++j) {
          sdy += s1[cu.unit(c, j)];
          sdyx += s2[cu.unit(c, j)];
        }
        const double sdyxc = sdyx - mu[c] * sdy;  // sum dy * (x - mean)
        dw[c] = is[c] * sdyxc;
        db[c] = sdy;
        const double a = wv[c] * is[c];
        double bb = 0, dd = 0;
        if (training && M > 0) {
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
      TensorPtr dx = n.next_edges[0].valid() ? reshape(row_affine2(r, dy, A, B, D), x->shape()) : nullptr;
      return Grads{dx, from_vec(dw, {C}), from_vec(db, {C})};
    });
    node->save(input);
    node->save(from_vec(bmean, {C}));
    node->save(from_vec(invstd, {C}));
    if (weight) node->save(weight);
  }
  return out;
}

TensorPtr group_norm(const TensorPtr& input, int64_t num_groups, const TensorPtr& weight, const TensorPtr& bias,
                     double eps) {
  const char* name = "group_norm";
  check_input(name, input);
  const int64_t N = input->shape()[0], C = input->shape()[1], nd = input->ndim(), G = num_groups;
  LUCID_CHECK(G > 0, ValueError, name, "(): num_groups must be positive, got ", G);
  LUCID_CHECK(C % G == 0, RuntimeError, name, "(): expected number of channels in input to be divisible by ",
              "num_groups, but got input of shape ", shape_str(input->shape()), " and num_groups=", G);
  for (auto [t, what] : {std::pair{weight, "weight"}, std::pair{bias, "bias"}}) {
    if (!t) continue;
    require_cpu(name, t);
    LUCID_CHECK(t->ndim() == 1 && t->numel() == C, RuntimeError, name, "(): expected ", what,
                " to be a vector of size equal to the number of channels in input, but got ", what, " of shape ",
                shape_str(t->shape()), " and input of shape ", shape_str(input->shape()));
  }
  Rows r = as_rows(input);
  const int64_t Cg = C / G, L = r.len, M = Cg * L;
  Vec rmean, rm2;
  row_moments(r, rmean, rm2);
  Vec gmean(N * G), rstd(N * G);
  for (int64_t q = 0; q < N * G; ++q) {  // the Cg consecutive rows of group q = n * G + g
    const double* m = rmean.data() + q * Cg;
    const double* s2 = rm2.data() + q * Cg;
    double mu = 0, s = 0, dev = 0;
    for (int64_t j = 0; j < Cg; ++j) mu += m[j];
    mu /= Cg;
    for (int64_t j = 0; j < Cg; ++j) {
      s += s2[j];
      dev += (m[j] - mu) * (m[j] - mu);
    }
    gmean[q] = mu;
    rstd[q] = 1.0 / std::sqrt(M ? (s + L * dev) / M + eps : eps);
  }
  const Vec w = weight ? to_vec(weight) : Vec(C, 1.0);
  const Vec b = bias ? to_vec(bias) : Vec(C, 0.0);
  Vec scale(r.rows), shift(r.rows);
  for (int64_t n = 0; n < N; ++n)
    for (int64_t c = 0; c < C; ++c) {
      const int64_t q = n * G + c / Cg;
      scale[n * C + c] = rstd[q] * w[c];
      shift[n * C + c] = b[c] - gmean[q] * rstd[q] * w[c];
    }
  TensorPtr out = row_affine(r, input, scale, shift);

  if (autograd::needs_grad({&input, &weight, &bias})) {
    const bool has_w = bool(weight);
    auto node = autograd::record("NativeGroupNormBackward0", {input, weight, bias}, {out},
                                 [N, C, G, nd, eps, has_w](const Node& n, const Grads& g) {
      TensorPtr x = n.saved(0), w = has_w ? n.saved(3) : nullptr;
      const int64_t Cg = C / G;
      if (autograd::grad_enabled()) {  // create_graph: the gradient as ops of x and w
        const Shape grouped{N, G, -1}, rows{N, C, -1};
        TensorPtr xg = reshape(x, grouped);
        TensorPtr mu = mean(xg, {2}, true, std::nullopt);
        TensorPtr xc = sub(xg, mu);
        TensorPtr is = rsqrt(add(mean(mul(xc, xc), {2}, true, std::nullopt), Scalar(eps)));
        TensorPtr xhat = mul(xc, is);  // [N, G, Cg*L]
        TensorPtr g3 = reshape(g[0], rows);
        TensorPtr gw = w ? mul(g3, reshape(w, {1, C, 1})) : g3;
        TensorPtr gwg = reshape(gw, grouped);
        TensorPtr dx = mul(is, sub(sub(gwg, mean(gwg, {2}, true, std::nullopt)),
                                   mul(xhat, mean(mul(gwg, xhat), {2}, true, std::nullopt))));
        TensorPtr gx = mul(g3, reshape(xhat, rows));
        return Grads{reshape(dx, x->shape()), sum(gx, {0, 2}, false, std::nullopt),
                     sum(g3, {0, 2}, false, std::nullopt)};
      }
      Rows r = as_rows(x);
      TensorPtr dy = contiguous_as(g[0], r.x->dtype());
      Vec s1, s2;
      row_grad_sums(r, dy, s1, s2);
      const Vec mu = to_vec(n.saved(1)), is = to_vec(n.saved(2));
      const Vec wv = w ? to_vec(w) : Vec(C, 1.0);
      const double M = static_cast<double>(Cg * r.len);
      Vec dw(C, 0.0), db(C, 0.0), A(r.rows), B(r.rows), D(r.rows);
      for (int64_t k = 0; k < N; ++k)
        for (int64_t gi = 0; gi < G; ++gi) {
          const int64_t q = k * G + gi;
          double sdx = 0, sdxx = 0;  // sum of dxhat = dy * w, and of dxhat * x
          for (int64_t j = 0; j < Cg; ++j) {
            const int64_t c = gi * Cg + j, row = k * C + c;
            sdx += wv[c] * s1[row];
            sdxx += wv[c] * s2[row];
            dw[c] += is[q] * (s2[row] - mu[q] * s1[row]);
            db[c] += s1[row];
          }
          const double sxh = is[q] * (sdxx - mu[q] * sdx);  // sum dxhat * xhat
          const double k2 = M > 0 ? is[q] * is[q] * sxh / M : 0.0;
          for (int64_t j = 0; j < Cg; ++j) {
            const int64_t c = gi * Cg + j, row = k * C + c;
            A[row] = is[q] * wv[c];
            B[row] = -k2;
            D[row] = M > 0 ? mu[q] * k2 - is[q] * sdx / M : 0.0;
          }
        }
      TensorPtr dx = n.next_edges[0].valid() ? reshape(row_affine2(r, dy, A, B, D), x->shape()) : nullptr;
      return Grads{dx, from_vec(dw, {C}), from_vec(db, {C})};
    });
    node->save(input);
    node->save(from_vec(gmean, {N * G}));
    node->save(from_vec(rstd, {N * G}));
    if (weight) node->save(weight);
  }
  return out;
}

}  // namespace lucid::ops
