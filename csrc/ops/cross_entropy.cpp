// torch's cross_entropy with class indices, and nll_loss, as one engine op each (the
// CrossEntropy primitives, ops/prims/reduce.h): one pass over the logits forward (plus
// a one-block sum for the reductions) and one backward, where log_softmax + nll_loss +
// the reduction took about twenty launches (Note [The cross entropy as one op]).
// Argument parsing in PyTorch's spellings (1-D inputs, batch-size errors) lives in
// python/lucid/nn/functional.py.
#include "autograd/record.h"
#include "ops/copy_ops.h"
#include "ops/creation.h"
#include "ops/elementwise.h"
#include "ops/elementwise_extra.h"
#include "ops/gather_ops.h"
#include "ops/prims/reduce.h"
#include "ops/reduce.h"
#include "ops/reduce_plan.h"
#include "ops/seq_ops.h"
#include "ops/views.h"

namespace lucid::ops {

// Note [The cross entropy as one op]
// The forward writes each row's log-sum-exp (lse, float32 or float64) besides the loss;
// the backward needs nothing else: p = exp(x - lse) is the softmax, so the gradient is
// one elementwise pass over x (no log_softmax output is kept, half the memory of the
// composite's saved [rows, C] log-probabilities). Sums are in double and in a fixed
// order on both devices, so results never depend on the thread count. create_graph
// (second derivatives, MAML) takes the composite form instead: the same gradient as
// differentiable ops of x (through softmax) and of the incoming gradient.

namespace {

LossReduction reduction_of(const std::string& r) {
  if (r == "none") return LossReduction::None;
  if (r == "sum") return LossReduction::Sum;
  if (r == "mean") return LossReduction::Mean;
  throw ValueError(r + " is not a valid value for reduction");
}

// The dtype the kernels read x in: as it is, or float32 for 16-bit floats off the GPU
// (the GPU reads 16 bits and computes in float32, as softmax's kernels).
Dtype read_dtype(Dtype d, Device device) {
  const bool half = d == Dtype::F16 || d == Dtype::BF16;
  return half && device.type != DeviceType::GPU ? Dtype::F32 : d;
}

// The gradient as differentiable ops (create_graph): s * (softmax(x) * a - b), with
// a = (1 - eps) w[t] + eps / C sum(w) and b = (1 - eps) w[t] [c == t] + eps / C w[c]
// on rows that count constants, and s = g, or g / total for the mean, on rows that count
// (0 elsewhere).
TensorPtr composite_grad(const TensorPtr& x, const TensorPtr& t, const TensorPtr& w, const TensorPtr& g,
                         const CrossEntropyParams& p) {
  const Dtype dt = x->dtype();
  const int64_t C = p.n;
  const double keep = 1 - p.label_smoothing, spread = p.label_smoothing / double(C);
  Shape class_shape(x->ndim(), 1);
  class_shape[1] = C;
  TensorPtr a, b, total, valid, is_target;
  {
    autograd::GradModeGuard constants(false);
    valid = ne(t, Scalar(p.ignore_index));
    TensorPtr safe = where(valid, {t, {}}, {nullptr, Scalar(int64_t(0))});
    TensorPtr valid_f = copy_to(valid, dt, std::nullopt);
    TensorPtr wt = w ? mul(reshape(index_select(w, 0, reshape(safe, {-1})), t->shape()), valid_f) : valid_f;
    TensorPtr classes = reshape(arange_int(0, C, 1, Dtype::I64, x->device()), class_shape);
    is_target = eq(unsqueeze(safe, 1), classes);
    TensorPtr onehot = copy_to(is_target, dt, std::nullopt);
    a = mul(wt, keep);
    b = mul(onehot, unsqueeze(a, 1));
    if (p.label_smoothing != 0) {
      TensorPtr w_sum = w ? sum(w, {}, false, std::nullopt) : nullptr;
      a = add(a, w ? mul(valid_f, mul(w_sum, spread)) : mul(valid_f, spread * double(C)));
      TensorPtr spread_c = w ? mul(reshape(w, class_shape), spread) : nullptr;
      b = add(b, spread_c ? mul(unsqueeze(valid_f, 1), spread_c) : mul(unsqueeze(valid_f, 1), spread));
    }
    a = unsqueeze(a, 1);
    if (p.reduction == LossReduction::Mean) total = sum(wt, {}, false, std::nullopt);
  }
  TensorPtr s = p.reduction == LossReduction::None ? unsqueeze(g, 1)
                : p.reduction == LossReduction::Mean ? div(g, total)
                                                     : g;
  // ignored rows get exactly 0, also when the mean's total is 0 (s inf), as the kernel's
  s = where(unsqueeze(valid, 1), {s, {}}, {nullptr, Scalar(0.0)});
  // nll_loss: linear in x, -a s at the target and 0 elsewhere (also where a s is nan, as torch's)
  if (p.log_probs) return where(is_target, {mul(neg(a), s), {}}, {nullptr, Scalar(0.0)});
  return mul(sub(mul(softmax(x, 1, std::nullopt), a), b), s);
}

// cross_entropy, or with log_probs nll_loss (x: log-probabilities, no softmax).
TensorPtr class_index_loss(const TensorPtr& x, const TensorPtr& target, const TensorPtr& weight, int64_t ignore_index,
                           const std::string& reduction, double label_smoothing, bool log_probs) {
  const char* name = log_probs ? "nll_loss" : "cross_entropy";
  const LossReduction red = reduction_of(reduction);
  const Device device = op_device(name, {x.get(), target.get(), weight.get()});
  LUCID_CHECK(x->ndim() >= 2, RuntimeError, name, "(): expected input of shape [N, C, ...], got ",
              shape_str(x->shape()));
  LUCID_CHECK(is_floating(x->dtype()), RuntimeError, name, "(): expected a floating point input, got ",
              dtype_name(x->dtype()));
  LUCID_CHECK(target->dtype() == Dtype::I64, RuntimeError, "expected scalar type Long but found ",
              dtype_name(target->dtype()));
  Shape row_shape = x->shape();
  row_shape.erase(row_shape.begin() + 1);
  LUCID_CHECK(target->shape() == row_shape, RuntimeError, "Expected target size ", shape_str(row_shape), ", got ",
              shape_str(target->shape()));
  LUCID_CHECK(label_smoothing >= 0 && label_smoothing <= 1, RuntimeError,
              "label_smoothing must be between 0.0 and 1.0. Got: ", label_smoothing);
  const int64_t C = x->shape()[1];
  if (weight)
    LUCID_CHECK(weight->ndim() == 1 && weight->numel() == C, RuntimeError,
                "weight tensor should be defined either for all ", C,
                " classes or no classes but got weight tensor of shape: ", shape_str(weight->shape()));
  const DimPlan plan = plan_dim(*x, 1);
  const Dtype rd = read_dtype(x->dtype(), device);
  const Dtype sd = x->dtype() == Dtype::F64 ? Dtype::F64 : Dtype::F32;
  CrossEntropyParams params;
  params.outer = plan.outer, params.n = plan.n, params.inner = plan.inner;
  params.ignore_index = ignore_index, params.label_smoothing = label_smoothing;
  params.has_weight = weight != nullptr, params.reduction = red, params.log_probs = log_probs;

  TensorPtr xc = contiguous_as(x, rd), tc = contiguous_as(target, Dtype::I64);
  TensorPtr wc = weight ? contiguous_as(weight, rd) : nullptr;
  const int64_t rows = plan.outer * plan.inner;
  TensorPtr loss = TensorImpl::empty(red == LossReduction::None ? row_shape : Shape{}, rd, device);
  TensorPtr lse = TensorImpl::empty({rows}, sd, device), stats = TensorImpl::empty({2}, sd, device);
  TensorPtr partial = red == LossReduction::None ? nullptr : TensorImpl::empty({rows, 2}, Dtype::F64, device);
  CrossEntropy fwd;
  static_cast<CrossEntropyParams&>(fwd) = params;
  std::vector<TensorImpl*> outs{loss.get(), lse.get(), stats.get()};
  if (partial) outs.push_back(partial.get());
  std::vector<const TensorImpl*> ins{xc.get(), tc.get()};
  if (wc) ins.push_back(wc.get());
  launch(fwd, outs, ins);
  TensorPtr out = rd == x->dtype() ? loss : copy_to(loss, x->dtype(), std::nullopt);

  if (autograd::needs_grad({&x})) {
    // (torch's name for both: its cross_entropy is nll_loss of log_softmax, so the loss's
    // grad_fn is NllLossBackward0 there too)
    auto node = autograd::record("NllLossBackward0", {x}, {out}, [params, rd](const Node& n, const autograd::Grads& g) {
      TensorPtr xs = n.saved(0), ts = n.saved(1), ws = params.has_weight ? n.saved(4) : nullptr;
      if (autograd::grad_enabled()) return autograd::Grads{composite_grad(xs, ts, ws, g[0], params)};
      TensorPtr xr = contiguous_as(xs, rd), gr = contiguous_as(g[0], rd), lse = n.saved(2), stats = n.saved(3);
      TensorPtr gx = TensorImpl::empty(xs->shape(), rd, xs->device());
      CrossEntropyBackward back;
      static_cast<CrossEntropyParams&>(back) = params;
      std::vector<const TensorImpl*> bins{xr.get(), ts.get()};
      if (ws) bins.push_back(ws.get());
      bins.insert(bins.end(), {lse.get(), stats.get(), gr.get()});
      TensorImpl* gx_out = gx.get();
      launch(back, Outputs(&gx_out, 1), bins);
      return autograd::Grads{gx};
    });
    node->save(x);      // 0 (the composite differentiates through it)
    node->save(tc);     // 1
    node->save(lse);    // 2
    node->save(stats);  // 3
    if (wc) node->save(wc);  // 4
  }
  return out;
}

}  // namespace

TensorPtr cross_entropy(const TensorPtr& x, const TensorPtr& target, const TensorPtr& weight, int64_t ignore_index,
                        const std::string& reduction, double label_smoothing) {
  return class_index_loss(x, target, weight, ignore_index, reduction, label_smoothing, false);
}

TensorPtr nll_loss(const TensorPtr& x, const TensorPtr& target, const TensorPtr& weight, int64_t ignore_index,
                   const std::string& reduction) {
  return class_index_loss(x, target, weight, ignore_index, reduction, 0.0, true);
}

}  // namespace lucid::ops
