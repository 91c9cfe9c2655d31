// ops/resample.h: checks, layout and autograd around the kernels of backend/cpu/resample.h.
#include "ops/resample.h"

#include "autograd/record.h"
#include "backend/cpu/resample.h"
#include "core/error.h"
#include "core/shape.h"
#include "ops/require_cpu.h"
#include "ops/views.h"

namespace lucid::ops {

namespace {

struct Plan {
  int64_t outer = 1, inner = 1, k = 0, osz = 0;
};

// Validates the taps against x (whose dim has `in` entries) and returns the loop sizes.
Plan plan_of(const char* op, const TensorPtr& x, int64_t dim, const TensorPtr& index, const TensorPtr& weight,
             int64_t in) {
  require_cpu(op, x);
  require_cpu(op, index);
  require_cpu(op, weight);
  LUCID_CHECK(x->dtype() == Dtype::F32 || x->dtype() == Dtype::F64, RuntimeError, op,
              "(): expected a float32 or float64 input, but got ", dtype_name(x->dtype()));
  LUCID_CHECK(weight->dtype() == x->dtype(), RuntimeError, op, "(): weight must have the input's dtype ",
              dtype_name(x->dtype()), ", but got ", dtype_name(weight->dtype()));
  LUCID_CHECK(index->dtype() == Dtype::I64, RuntimeError, op, "(): index must be int64, but got ",
              dtype_name(index->dtype()));
  LUCID_CHECK(index->ndim() == 2 && weight->shape() == index->shape(), RuntimeError, op,
              "(): index and weight must both be [taps, out_size], but got ", shape_str(index->shape()), " and ",
              shape_str(weight->shape()));
  Plan p;
  p.k = index->shape()[0];
  p.osz = index->shape()[1];
  LUCID_CHECK(p.k > 0, RuntimeError, op, "(): at least one tap is needed");
  for (int64_t d = 0; d < x->ndim(); ++d) {
    if (d < dim) p.outer *= x->shape()[d];
    if (d > dim) p.inner *= x->shape()[d];
  }
  TensorPtr idx = contiguous(index);
  const int64_t* ip = reinterpret_cast<const int64_t*>(idx->host_ptr());
  for (int64_t j = 0; j < idx->numel(); ++j)
    LUCID_CHECK(ip[j] >= 0 && ip[j] < in, IndexError, op, "(): tap index ", ip[j], " is out of range for size ", in);
  return p;
}

template <typename T>
void run(bool adjoint, const TensorPtr& out, const TensorPtr& src, const TensorPtr& idx, const TensorPtr& w,
         const Plan& p, int64_t in) {
  T* o = reinterpret_cast<T*>(out->host_ptr());
  const T* s = reinterpret_cast<const T*>(src->host_ptr());
  const int64_t* ip = reinterpret_cast<const int64_t*>(idx->host_ptr());
  const T* wp = reinterpret_cast<const T*>(w->host_ptr());
  if (adjoint)
    cpu::taps_adjoint<T>(o, s, ip, wp, p.outer, in, p.osz, p.inner, p.k);
  else
    cpu::taps_forward<T>(o, s, ip, wp, p.outer, in, p.osz, p.inner, p.k);
}

TensorPtr compute(bool adjoint, const TensorPtr& src, int64_t dim, const TensorPtr& index, const TensorPtr& weight,
                  const Plan& p, int64_t in) {
  Shape shape = src->shape();
  shape[dim] = adjoint ? in : p.osz;
  TensorPtr out = adjoint ? TensorImpl::full(shape, Scalar(0.0), src->dtype(), src->device())
                          : TensorImpl::empty(shape, src->dtype(), src->device());
  if (out->numel() == 0 || src->numel() == 0) return out;
  TensorPtr s = contiguous(src), idx = contiguous(index), w = contiguous(weight);
  if (src->dtype() == Dtype::F32)
    run<float>(adjoint, out, s, idx, w, p, in);
  else
    run<double>(adjoint, out, s, idx, w, p, in);
  return out;
}

}  // namespace

TensorPtr resample_taps(const TensorPtr& x, int64_t dim, const TensorPtr& index, const TensorPtr& weight) {
  dim = wrap_dim(dim, x->ndim());
  int64_t in = x->shape()[dim];
  Plan p = plan_of("resample_taps", x, dim, index, weight, in);
  TensorPtr out = compute(false, x, dim, index, weight, p, in);
  if (autograd::needs_grad({&x})) {
    auto node = autograd::record("ResampleTapsBackward0", {x}, {out}, [dim, in](const Node& n,
                                                                           const autograd::Grads& g) {
      return autograd::Grads{resample_taps_adjoint(g[0], dim, n.saved(0), n.saved(1), in)};
    });
    node->save(index);
    node->save(weight);
  }
  return out;
}

TensorPtr resample_taps_adjoint(const TensorPtr& g, int64_t dim, const TensorPtr& index, const TensorPtr& weight,
                                int64_t in_size) {
  dim = wrap_dim(dim, g->ndim());
  LUCID_CHECK(in_size > 0, RuntimeError, "resample_taps_adjoint(): in_size must be positive, got ", in_size);
  Plan p = plan_of("resample_taps_adjoint", g, dim, index, weight, in_size);
  LUCID_CHECK(g->shape()[dim] == p.osz, RuntimeError, "resample_taps_adjoint(): the gradient has size ",
              g->shape()[dim], " along dim ", dim, " but the taps have ", p.osz, " outputs");
  TensorPtr out = compute(true, g, dim, index, weight, p, in_size);
  if (autograd::needs_grad({&g})) {
    auto node = autograd::record("ResampleTapsAdjointBackward0", {g}, {out}, [dim](const Node& n,
                                                                               const autograd::Grads& gg) {
      return autograd::Grads{resample_taps(gg[0], dim, n.saved(0), n.saved(1))};
    });
    node->save(index);
    node->save(weight);
  }
  return out;
}

}  // namespace lucid::ops
