// softmax / log_softmax along one dim, max-subtracted: float32 in float lanes with a
// vectorised exp, other dtypes in double.
#include "autograd/record.h"
#include "backend/cpu/reduce.h"
#include "backend/cpu/reduce_fast.h"
#include "ops/require_cpu.h"
#include "ops/copy_ops.h"
#include "ops/elementwise.h"
#include "ops/reduce.h"
#include "ops/reduce_plan.h"

namespace lucid::ops {

namespace {

using autograd::Grads;

TensorPtr softmax_impl(const TensorPtr& a, int64_t dim, std::optional<Dtype> dtype, bool log) {
  const char* name = log ? "log_softmax" : "softmax";
  require_cpu(name, *a);
  DimPlan p = plan_dim(*a, dim);
  if (dtype && *dtype != a->dtype()) return softmax_impl(copy_to(a, *dtype, std::nullopt), dim, std::nullopt, log);
  // (an empty tensor of any dtype comes back as is, as in PyTorch)
  if (a->numel() == 0) return TensorImpl::empty(a->shape(), a->dtype(), Device::cpu());
  LUCID_CHECK(is_floating(a->dtype()), NotImplementedError, name, "(): not implemented for dtype ",
              dtype_name(a->dtype()), " (floating dtypes only; pass dtype= to compute in one)");
  TensorPtr out;
  if (a->dtype() == Dtype::F32) {  // float lanes, vectorised exp
    TensorPtr x = contiguous_as(a, Dtype::F32);
    out = TensorImpl::empty(a->shape(), Dtype::F32, Device::cpu());
    cpu::softmax_dim_f32(reinterpret_cast<const float*>(x->host_ptr()), reinterpret_cast<float*>(out->host_ptr()),
                         p.outer, p.n, p.inner, log);
  } else {
    TensorPtr x = contiguous_as(a, Dtype::F64);
    TensorPtr y = TensorImpl::empty(a->shape(), Dtype::F64, Device::cpu());
    cpu::softmax_dim(reinterpret_cast<const double*>(x->host_ptr()), reinterpret_cast<double*>(y->host_ptr()),
                     p.outer, p.n, p.inner, log);
    out = a->dtype() == Dtype::F64 ? y : y->clone(a->dtype());
  }
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
