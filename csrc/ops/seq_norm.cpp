// layer_norm / rms_norm over the last dims: one fused forward kernel (rows over the
// thread pool) that also keeps each row's mean and 1/std. The backward is the fused
// kernel when no graph is being built (the usual loss.backward()), and the same formula
// written with differentiable ops under create_graph, so double backward works.
#include "autograd/record.h"
#include "ops/copy_ops.h"
#include "ops/elementwise.h"
#include "ops/prims/seq.h"
#include "ops/reduce.h"
#include "ops/reduce_plan.h"
#include "ops/seq_ops.h"

namespace lucid::ops {

namespace {

using autograd::Grads;

// dx (and dw, db) of the normalisation with differentiable ops, from the inputs.
Grads norm_grads_with_ops(const TensorPtr& g, const TensorPtr& x, const TensorPtr& w, bool has_b, int64_t k,
                          double eps, bool rms) {
  std::vector<int64_t> dims;
  for (int64_t d = x->ndim() - k; d < x->ndim(); ++d) dims.push_back(d);
  TensorPtr xc = rms ? x : sub(x, mean(x, dims, true, std::nullopt));
  TensorPtr rstd = rsqrt(add(mean(mul(xc, xc), dims, true, std::nullopt), Scalar(eps)));
  TensorPtr xhat = mul(xc, rstd);
  TensorPtr gw = w ? mul(g, w) : g;
  TensorPtr inner = mul(xhat, mean(mul(gw, xhat), dims, true, std::nullopt));
  if (!rms) inner = add(inner, mean(gw, dims, true, std::nullopt));
  TensorPtr dx = mul(rstd, sub(gw, inner));
  // dw, db in the broadcast shape: the engine sums them down to the weight's shape.
  return Grads{dx, w ? mul(g, xhat) : nullptr, has_b ? g : nullptr};
}

// The fused backward, from the saved row statistics.
Grads norm_grads_fused(const TensorPtr& g0, const TensorPtr& x0, const TensorPtr& w0, bool has_b,
                       const Shape& bias_shape, const TensorPtr& mean_t, const TensorPtr& rstd_t, int64_t n, Dtype ct,
                       bool rms) {
  TensorPtr g = contiguous_as(g0, ct), x = contiguous_as(x0, ct);
  TensorPtr w = w0 ? contiguous_as(w0, ct) : nullptr;
  TensorPtr dx = TensorImpl::empty(x->shape(), ct, x->device());
  TensorPtr dw = w ? TensorImpl::empty(w0->shape(), ct, x->device()) : nullptr;
  TensorPtr db = has_b ? TensorImpl::empty(bias_shape, ct, x->device()) : nullptr;
  NormRowsBackward p;
  p.n = n;
  p.rms = rms;
  p.has_weight = bool(w);
  p.has_bias = has_b;
  std::vector<TensorImpl*> outs{dx.get()};
  for (const TensorPtr& t : {dw, db})
    if (t) outs.push_back(t.get());
  std::vector<const TensorImpl*> ins{g.get(), x.get()};
  for (const TensorPtr& t : {w, mean_t, rstd_t})
    if (t) ins.push_back(t.get());
  launch(p, outs, ins);
  return Grads{dx, dw, db};
}

}  // namespace

TensorPtr norm_last_dims(const TensorPtr& x, int64_t k, const TensorPtr& weight, const TensorPtr& bias, double eps,
                         bool rms) {
  const char* name = rms ? "rms_norm" : "layer_norm";
  LUCID_CHECK(is_floating(x->dtype()), RuntimeError, name, "(): expected a floating-point input, got ",
              dtype_name(x->dtype()));
  LUCID_CHECK(k >= 0 && k <= x->ndim(), RuntimeError, name, "(): cannot normalise over the last ", k,
              " dims of an input with ", x->ndim(), " dims");
  const Device device = op_device(name, {x.get(), weight.get(), bias.get()});
  int64_t n = 1;
  for (int64_t d = x->ndim() - k; d < x->ndim(); ++d) n *= x->shape()[d];
  for (const TensorPtr* p : {&weight, &bias})
    if (*p)
      LUCID_CHECK((*p)->numel() == n, RuntimeError, name, "(): weight/bias must have ", n,
                  " elements (the normalized shape), got shape ", shape_str((*p)->shape()));
  // Computed in float32 (float64 for float64). A 16-bit x on the CPU is read and y written
  // in 16 bits, a row at a time through float buffers (layer_norm_half_rows); elsewhere
  // x and y are float32 copies. Weight, bias and the row statistics are in ct.
  const Dtype ct = x->dtype() == Dtype::F64 ? Dtype::F64 : Dtype::F32;
  const bool half_rows = (x->dtype() == Dtype::F16 || x->dtype() == Dtype::BF16) && device.is_cpu();
  const Dtype xt = half_rows ? x->dtype() : ct;
  const int64_t rows = n == 0 ? 0 : x->numel() / n;
  TensorPtr xc = contiguous_as(x, xt);
  TensorPtr wc = weight ? contiguous_as(weight, ct) : nullptr, bc = bias ? contiguous_as(bias, ct) : nullptr;
  TensorPtr y = TensorImpl::empty(x->shape(), xt, device);
  TensorPtr mean_t = rms ? nullptr : TensorImpl::empty({rows}, ct, device);
  TensorPtr rstd_t = TensorImpl::empty({rows}, ct, device);
  NormRows p;
  p.n = n;
  p.eps = eps;
  p.rms = rms;
  p.has_weight = bool(weight);
  p.has_bias = bool(bias);
  std::vector<TensorImpl*> outs{y.get()};
  if (mean_t) outs.push_back(mean_t.get());
  outs.push_back(rstd_t.get());
  std::vector<const TensorImpl*> ins{xc.get()};
  for (const TensorPtr& t : {wc, bc})
    if (t) ins.push_back(t.get());
  launch(p, outs, ins);
  TensorPtr out = xt == x->dtype() ? y : y->clone(x->dtype());
  if (autograd::needs_grad({&x, &weight, &bias})) {
    const bool has_w = weight != nullptr, has_b = bias != nullptr;
    const Shape bshape = has_b ? bias->shape() : Shape{};
    auto node = autograd::record(rms ? "RmsNormBackward0" : "NativeLayerNormBackward0", {x, weight, bias}, {out},
                                 [=](const Node& nd, const Grads& g) {
      TensorPtr xs = nd.saved(0), ws = has_w ? nd.saved(1) : nullptr;
      if (autograd::grad_enabled()) return norm_grads_with_ops(g[0], xs, ws, has_b, k, eps, rms);
      return norm_grads_fused(g[0], xs, ws, has_b, bshape, nd.saved(2), nd.saved(3), n, ct, rms);
    });
    node->save(x);
    node->save(weight);
    node->save(mean_t);
    node->save(rstd_t);
  }
  return out;
}

}  // namespace lucid::ops
