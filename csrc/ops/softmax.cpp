// softmax / log_softmax along one dim, max-subtracted: float32 (and 16-bit floats) in
// float lanes with a vectorised exp, float64 in double.
#include "autograd/record.h"
#include "ops/copy_ops.h"
#include "ops/elementwise.h"
#include "ops/prims/reduce.h"
#include "ops/reduce.h"
#include "ops/reduce_plan.h"

namespace lucid::ops {

namespace {

using autograd::Grads;

TensorPtr softmax_impl(const TensorPtr& a, int64_t dim, std::optional<Dtype> dtype, bool log) {
  const char* name = log ? "log_softmax" : "softmax";
  DimPlan p = plan_dim(*a, dim);
  if (dtype && *dtype != a->dtype()) return softmax_impl(copy_to(a, *dtype, std::nullopt), dim, std::nullopt, log);
  // (an empty tensor of any dtype comes back as is, as in PyTorch)
  if (a->numel() == 0) return TensorImpl::empty(a->shape(), a->dtype(), a->device());
  LUCID_CHECK(is_floating(a->dtype()), NotImplementedError, name, "(): not implemented for dtype ",
              dtype_name(a->dtype()), " (floating dtypes only; pass dtype= to compute in one)");
  // float32 computes in float lanes (vectorised exp), float64 in double, float16 and
  // bfloat16 as float32 rounded once (as torch): on the GPU natively, the kernel reading
  // and writing 16 bits (a float32 copy in and out would be 5x the traffic of the
  // kernel, at an attention's [B, H, L, S] weights several GiB), elsewhere on float32
  // copies.
  const bool half = a->dtype() == Dtype::F16 || a->dtype() == Dtype::BF16;
  const Dtype compute = half && a->device().type == DeviceType::GPU ? a->dtype()
                        : a->dtype() == Dtype::F64                   ? Dtype::F64
                                                                     : Dtype::F32;
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
