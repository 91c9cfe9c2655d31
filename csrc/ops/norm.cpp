// batch_norm and group_norm (ops/norm.h). Both see the input as contiguous rows
// [N*C, L], one per (sample, channel): per-row moments combine into the statistics
// of a channel (batch norm: the N rows of channel c) or of a group (group norm: the
// C/G rows of group g of sample n) with Chan's formula, and the output is a per-row
// affine map x * scale + shift. The fused backward is two passes as well: per-row
// sums of dy and dy * x, then dx = A dy + B x + D with per-row coefficients.
// float16/bfloat16 compute in float32, float32 in float32 lanes with double sums.
// Every pass and the float64 arithmetic between them is a primitive (ops/prims/norm.h).
#include "ops/norm.h"

#include "autograd/grad_mode.h"
#include "autograd/record.h"
#include "ops/copy_ops.h"
#include "ops/elementwise.h"
#include "ops/prims/norm.h"
#include "ops/reduce.h"
#include "ops/reduce_plan.h"
#include "ops/views.h"

namespace lucid::ops {

namespace {

using autograd::Grads;

Dtype compute_dtype(Dtype d) { return d == Dtype::F64 ? Dtype::F64 : Dtype::F32; }

// A per-channel vector (weight, bias, running statistics) as the float64 [C] the
// statistics primitives read; a read of the values, never part of a graph.
TensorPtr as_f64(const TensorPtr& t) {
  autograd::GradModeGuard no_grad(false);
  return contiguous_as(t, Dtype::F64);
}

// A float64 table [rows, n]: one row per quantity (ops/prims/norm.h).
TensorPtr f64_table(int64_t rows, int64_t n, const Device& device) {
  return TensorImpl::empty({rows, n}, Dtype::F64, device);
}

// The input as units of the compute dtype: rows [rows, len], one per (sample, channel),
// or, for batch norm of short spatial dims (len < kColumnsBelow), the columns of
// [n, k] = [N, C * len], one per (channel, position), so the lanes run across channels.
constexpr int64_t kColumnsBelow = 32;

struct Rows {
  TensorPtr x;
  NormUnits units;
  int64_t len = 0;  // elements per (sample, channel)
  int64_t count() const { return units.count(); }
};

Rows as_rows(const TensorPtr& input, bool allow_cols = false) {
  Rows r;
  r.x = contiguous_as(input, compute_dtype(input->dtype()));
  const int64_t rows = input->shape()[0] * input->shape()[1];
  r.len = rows ? input->numel() / rows : 0;
  if (allow_cols && r.len < kColumnsBelow && rows > 0)
    r.units = {true, input->shape()[0], input->shape()[1] * r.len};
  else
    r.units = {false, rows, r.len};
  return r;
}

// A unit pass over r's units.
template <class P>
P over_units(const NormUnits& units) {
  P p;
  p.units = units;
  return p;
}

// The mean and m2 of each unit: [2, units], float64.
TensorPtr unit_moments(const Rows& r) {
  TensorPtr moments = f64_table(2, r.count(), r.x->device());
  launch(over_units<NormMoments>(r.units), {moments.get()}, {r.x.get()});
  return moments;
}

// The sums of dy and dy * x over each unit: [2, units], float64.
TensorPtr unit_grad_sums(const Rows& r, const TensorPtr& dy) {
  TensorPtr sums = f64_table(2, r.count(), r.x->device());
  launch(over_units<NormGradSums>(r.units), {sums.get()}, {dy.get(), r.x.get()});
  return sums;
}

// y = x * scale[unit] + shift[unit], as the input's dtype
TensorPtr row_affine(const Rows& r, const TensorPtr& input, const TensorPtr& scale_shift) {
  TensorPtr y = TensorImpl::empty(input->shape(), r.x->dtype(), input->device());
  launch(over_units<NormAffine>(r.units), {y.get()}, {r.x.get(), scale_shift.get()});
  return y->dtype() == input->dtype() ? y : y->clone(input->dtype());
}

// dx = a[unit] dy + b[unit] x + d[unit], in the compute dtype (the engine casts)
TensorPtr row_affine2(const Rows& r, const TensorPtr& dy, const TensorPtr& abd) {
  TensorPtr dx = TensorImpl::empty(r.x->shape(), r.x->dtype(), r.x->device());
  launch(over_units<NormAffine2>(r.units), {dx.get()}, {dy.get(), r.x.get(), abd.get()});
  return dx;
}

// The present (non-null) ones of `ts`, as a launch's inputs or outputs: a primitive
// lists its optional tensors only when they are given.
std::vector<const TensorImpl*> present_ins(std::initializer_list<const TensorPtr*> ts) {
  std::vector<const TensorImpl*> out;
  for (const TensorPtr* t : ts)
    if (*t) out.push_back(t->get());
  return out;
}
std::vector<TensorImpl*> present_outs(std::initializer_list<const TensorPtr*> ts) {
  std::vector<TensorImpl*> out;
  for (const TensorPtr* t : ts)
    if (*t) out.push_back(t->get());
  return out;
}

void check_input(const char* name, const TensorPtr& input) {
  LUCID_CHECK(input, TypeError, name, "(): input must be a Tensor");
  LUCID_CHECK(is_floating(input->dtype()), RuntimeError, name, "(): expected a floating point input, got ",
              dtype_name(input->dtype()));
  LUCID_CHECK(input->ndim() >= 2, ValueError, name, "(): expected an input with at least 2 dimensions [N, C, *], got ",
              input->ndim(), "-D input of shape ", shape_str(input->shape()));
}

void check_vector(const char* name, const char* what, const TensorPtr& t, int64_t c) {
  if (!t) return;
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
  const Device device =
      op_device(name, {input.get(), weight.get(), bias.get(), running_mean.get(), running_var.get()});
  const int64_t N = input->shape()[0], C = input->shape()[1], nd = input->ndim();
  check_vector(name, "weight", weight, C);
  check_vector(name, "bias", bias, C);
  check_vector(name, "running_mean", running_mean, C);
  check_vector(name, "running_var", running_var, C);
  LUCID_CHECK(training || (running_mean && running_var), RuntimeError, name,
              "(): running_mean and running_var must be defined in evaluation mode");
  Rows r = as_rows(input, /*allow_cols=*/true);
  const int64_t M = N * r.len;

  BatchNormStats p;
  p.channels = C;
  p.units = r.units;
  p.eps = eps;
  p.momentum = momentum;
  p.training = training;
  // in place, outside autograd (buffers); an empty batch keeps them
  p.update_mean = training && running_mean && M > 0;
  p.update_var = training && running_var && M > 0;
  p.has_weight = bool(weight);
  p.has_bias = bool(bias);
  TensorPtr moments = training ? unit_moments(r) : nullptr;
  TensorPtr rm = running_mean && (!training || p.update_mean) ? as_f64(running_mean) : nullptr;
  TensorPtr rv = running_var && (!training || p.update_var) ? as_f64(running_var) : nullptr;
  TensorPtr w = weight ? as_f64(weight) : nullptr, b = bias ? as_f64(bias) : nullptr;
  TensorPtr stats = f64_table(2, C, device), scale_shift = f64_table(2, r.count(), device);
  TensorPtr running = p.update_mean || p.update_var ? f64_table(2, C, device) : nullptr;
  launch(p, present_outs({&stats, &scale_shift, &running}), present_ins({&moments, &rm, &rv, &w, &b}));
  if (running) {
    autograd::GradModeGuard no_grad(false);
    if (p.update_mean) copy_(running_mean, reshape(select(running, 0, 0), running_mean->shape()));
    if (p.update_var) copy_(running_var, reshape(select(running, 0, 1), running_var->shape()));
  }
  TensorPtr out = row_affine(r, input, scale_shift);

  if (autograd::needs_grad({&input, &weight, &bias})) {
    const bool has_w = bool(weight);
    auto node = autograd::record("NativeBatchNormBackward0", {input, weight, bias}, {out},
                                 [N, C, nd, eps, training, has_w](const Node& n, const Grads& g) {
      TensorPtr x = n.saved(0), stats = n.saved(1), w = has_w ? n.saved(2) : nullptr;
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
          TensorPtr mu = reshape(copy_to(select(stats, 0, 0), x->dtype(), std::nullopt), cs);
          TensorPtr is = reshape(copy_to(select(stats, 0, 1), x->dtype(), std::nullopt), cs);
          xhat = mul(sub(x, mu), is);
          dx = mul(gw, is);
        }
        return Grads{dx, sum_all_but(mul(g[0], xhat), dims), sum_all_but(g[0], dims)};
      }
      // fused: per-unit sums of dy and dy*x, then dx = A dy + B x + D per unit
      Rows r = as_rows(x, /*allow_cols=*/true);
      TensorPtr dy = contiguous_as(g[0], r.x->dtype());
      TensorPtr sums = unit_grad_sums(r, dy), wv = w ? as_f64(w) : nullptr;
      TensorPtr dw_db = f64_table(2, C, x->device()), abd = f64_table(3, r.count(), x->device());
      BatchNormGradCoeffs p;
      p.channels = C;
      p.units = r.units;
      p.training = training;
      p.has_weight = has_w;
      launch(p, present_outs({&dw_db, &abd}), present_ins({&sums, &stats, &wv}));
      TensorPtr dx = n.next_edges[0].valid() ? reshape(row_affine2(r, dy, abd), x->shape()) : nullptr;
      return Grads{dx, select(dw_db, 0, 0), select(dw_db, 0, 1)};
    });
    node->save(input);
    node->save(stats);
    if (weight) node->save(weight);
  }
  return out;
}

TensorPtr group_norm(const TensorPtr& input, int64_t num_groups, const TensorPtr& weight, const TensorPtr& bias,
                     double eps) {
  const char* name = "group_norm";
  check_input(name, input);
  const Device device = op_device(name, {input.get(), weight.get(), bias.get()});
  const int64_t N = input->shape()[0], C = input->shape()[1], G = num_groups;
  LUCID_CHECK(G > 0, ValueError, name, "(): num_groups must be positive, got ", G);
  LUCID_CHECK(C % G == 0, RuntimeError, name, "(): expected number of channels in input to be divisible by ",
              "num_groups, but got input of shape ", shape_str(input->shape()), " and num_groups=", G);
  for (auto [t, what] : {std::pair{weight, "weight"}, std::pair{bias, "bias"}}) {
    if (!t) continue;
    LUCID_CHECK(t->ndim() == 1 && t->numel() == C, RuntimeError, name, "(): expected ", what,
                " to be a vector of size equal to the number of channels in input, but got ", what, " of shape ",
                shape_str(t->shape()), " and input of shape ", shape_str(input->shape()));
  }
  Rows r = as_rows(input);
  TensorPtr moments = unit_moments(r);
  TensorPtr w = weight ? as_f64(weight) : nullptr, b = bias ? as_f64(bias) : nullptr;
  TensorPtr stats = f64_table(2, N * G, device), scale_shift = f64_table(2, r.count(), device);
  GroupNormStats p;
  p.batch = N;
  p.channels = C;
  p.groups = G;
  p.len = r.len;
  p.eps = eps;
  p.has_weight = bool(weight);
  p.has_bias = bool(bias);
  launch(p, present_outs({&stats, &scale_shift}), present_ins({&moments, &w, &b}));
  TensorPtr out = row_affine(r, input, scale_shift);

  if (autograd::needs_grad({&input, &weight, &bias})) {
    const bool has_w = bool(weight);
    auto node = autograd::record("NativeGroupNormBackward0", {input, weight, bias}, {out},
                                 [N, C, G, eps, has_w](const Node& n, const Grads& g) {
      TensorPtr x = n.saved(0), w = has_w ? n.saved(2) : nullptr;
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
      TensorPtr sums = unit_grad_sums(r, dy), stats = n.saved(1), wv = w ? as_f64(w) : nullptr;
      TensorPtr dw_db = f64_table(2, C, x->device()), abd = f64_table(3, r.count(), x->device());
      GroupNormGradCoeffs p;
      p.batch = N;
      p.channels = C;
      p.groups = G;
      p.len = r.len;
      p.has_weight = has_w;
      launch(p, present_outs({&dw_db, &abd}), present_ins({&sums, &stats, &wv}));
      TensorPtr dx = n.next_edges[0].valid() ? reshape(row_affine2(r, dy, abd), x->shape()) : nullptr;
      return Grads{dx, select(dw_db, 0, 0), select(dw_db, 0, 1)};
    });
    node->save(input);
    node->save(stats);
    if (weight) node->save(weight);
  }
  return out;
}

}  // namespace lucid::ops
