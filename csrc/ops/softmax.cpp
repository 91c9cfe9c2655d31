// softmax / log_softmax along one dim, max-subtracted (compute_dtype: float32 and the
// 16-bit floats in float lanes, float64 in double), and their one-pass gradient.
#include "autograd/grad_mode.h"
#include "autograd/record.h"
#include "ops/copy_ops.h"
#include "ops/elementwise.h"
#include "ops/prims/reduce.h"
#include "ops/reduce.h"
#include "ops/reduce_plan.h"

namespace lucid::ops {

namespace {

using autograd::Grads;

// What SoftmaxDim and SoftmaxBackwardDim compute dtype `d` in: float32 in float lanes
// (vectorised exp), float64 in double, float16 and bfloat16 as float32 rounded once (as
// torch), the kernels reading and writing 16 bits (float32 copies of the whole tensor
// in and out would be several times the traffic of the kernel, at an attention's [B, H,
// L, S] weights several GiB): on the GPU natively, on the CPU through float copies of a
// row or column chunk at a time (Note [16-bit softmax on the CPU]).
Dtype compute_dtype(Dtype d) {
  if (d == Dtype::F16 || d == Dtype::BF16 || d == Dtype::F64) return d;
  return Dtype::F32;
}

// The gradient through softmax (log: log_softmax) along `dim` from its output y:
// y * (g - sum(g * y)) or g - exp(y) * sum(g), one SoftmaxBackwardDim pass (the
// composite form is four elementwise passes and a reduction, each 16-bit one rounded).
TensorPtr softmax_backward(const TensorPtr& y, const TensorPtr& g, int64_t dim, bool log) {
  const DimPlan p = plan_dim(*y, dim);
  const Dtype compute = compute_dtype(y->dtype());
  TensorPtr yc = contiguous_as(y, compute), gc = contiguous_as(g, compute);
  TensorPtr gx = TensorImpl::empty(y->shape(), compute, y->device());
  SoftmaxBackwardDim sb;
  sb.outer = p.outer, sb.n = p.n, sb.inner = p.inner, sb.log = log;
  launch(sb, {gx.get()}, {yc.get(), gc.get()});
  return compute == y->dtype() ? gx : gx->clone(y->dtype());
}

TensorPtr softmax_impl(const TensorPtr& a, int64_t dim, std::optional<Dtype> dtype, bool log) {
  const char* name = log ? "log_softmax" : "softmax";
  DimPlan p = plan_dim(*a, dim);
  if (dtype && *dtype != a->dtype()) return softmax_impl(copy_to(a, *dtype, std::nullopt), dim, std::nullopt, log);
  // (an empty tensor of any dtype comes back as is, as in PyTorch)
  if (a->numel() == 0) return TensorImpl::empty(a->shape(), a->dtype(), a->device());
  LUCID_CHECK(is_floating(a->dtype()), NotImplementedError, name, "(): not implemented for dtype ",
              dtype_name(a->dtype()), " (floating dtypes only; pass dtype= to compute in one)");
  const Dtype compute = compute_dtype(a->dtype());
  TensorPtr x = contiguous_as(a, compute);
  TensorPtr y = TensorImpl::empty(a->shape(), compute, a->device());
  SoftmaxDim sm;
  sm.outer = p.outer, sm.n = p.n, sm.inner = p.inner, sm.log = log;
  launch(sm, {y.get()}, {x.get()});
  TensorPtr out = a->dtype() == compute ? y : y->clone(a->dtype());
  if (autograd::needs_grad({&a})) {
    const int64_t d = p.dim;
    auto node = autograd::record(log ? "LogSoftmaxBackward0" : "SoftmaxBackward0", {a}, {out},
                                 [d, log](const Node& n, const Grads& g) {
      TensorPtr s = n.saved(0);
      // create_graph records the backward: the composite form, itself differentiable
      if (!autograd::grad_enabled()) return Grads{softmax_backward(s, g[0], d, log)};
      if (log)  // g - softmax * sum(g)
        return Grads{sub(g[0], mul(exp(s), sum(g[0], {d}, true, std::nullopt)))};
      return Grads{mul(s, sub(g[0], sum(mul(g[0], s), {d}, true, std::nullopt)))};
    });
    node->save(out, true);
  }
  return out;
}

}  // namespace

TensorPtr softmax(const TensorPtr& a, int64_t dim, std::optional<Dtype> dtype) {
  return softmax_impl(a, dim, dtype, false);
}
TensorPtr log_softmax(const TensorPtr& a, int64_t dim, std::optional<Dtype> dtype) {
  return softmax_impl(a, dim, dtype, true);
}

}  // namespace lucid::ops
