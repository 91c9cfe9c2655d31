// ops/resample.h: checks, layout and autograd around the ResampleTaps primitive
// (ops/prims/spatial.h).
#include "ops/resample.h"

#include "autograd/record.h"
#include "core/error.h"
#include "core/shape.h"
#include "ops/elementwise.h"
#include "ops/prims/spatial.h"
#include "ops/views.h"

namespace lucid::ops {

namespace {

// Checks the taps' dtypes and shapes against x; the kernel checks their indices (it
// reads them where they live).
void check_taps(const char* op, const TensorPtr& x, const TensorPtr& index, const TensorPtr& weight) {
  op_device(op, {x.get(), index.get(), weight.get()});
  LUCID_CHECK(x->dtype() == Dtype::F32 || x->dtype() == Dtype::F64, RuntimeError, op,
              "(): expected a float32 or float64 input, but got ", dtype_name(x->dtype()));
  LUCID_CHECK(weight->dtype() == x->dtype(), RuntimeError, op, "(): weight must have the input's dtype ",
              dtype_name(x->dtype()), ", but got ", dtype_name(weight->dtype()));
  LUCID_CHECK(index->dtype() == Dtype::I64, RuntimeError, op, "(): index must be int64, but got ",
              dtype_name(index->dtype()));
  LUCID_CHECK(index->ndim() == 2 && weight->shape() == index->shape(), RuntimeError, op,
              "(): index and weight must both be [taps, out_size], but got ", shape_str(index->shape()), " and ",
              shape_str(weight->shape()));
  LUCID_CHECK(index->shape()[0] > 0, RuntimeError, op, "(): at least one tap is needed");
}

// The taps applied to src along dim (adjoint false), or their adjoint: a result of
// size `in` along dim.
TensorPtr compute(bool adjoint, const TensorPtr& src, int64_t dim, const TensorPtr& index, const TensorPtr& weight,
                  int64_t in) {
  Shape shape = src->shape();
  shape[dim] = adjoint ? in : index->shape()[1];
  TensorPtr out = adjoint ? TensorImpl::full(shape, Scalar(0.0), src->dtype(), src->device())
                          : TensorImpl::empty(shape, src->dtype(), src->device());
  TensorPtr s = contiguous(src), idx = contiguous(index), w = contiguous(weight);
  ResampleTaps p;
  p.dim = dim;
  p.adjoint = adjoint;
  launch(p, {out.get()}, {s.get(), idx.get(), w.get()});
  return out;
}

}  // namespace

TensorPtr resample_taps(const TensorPtr& x, int64_t dim, const TensorPtr& index, const TensorPtr& weight) {
  dim = wrap_dim(dim, x->ndim());
  const int64_t in = x->shape()[dim];
  check_taps("resample_taps", x, index, weight);
  TensorPtr out = compute(false, x, dim, index, weight, in);
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
  check_taps("resample_taps_adjoint", g, index, weight);
  LUCID_CHECK(g->shape()[dim] == index->shape()[1], RuntimeError, "resample_taps_adjoint(): the gradient has size ",
              g->shape()[dim], " along dim ", dim, " but the taps have ", index->shape()[1], " outputs");
  TensorPtr out = compute(true, g, dim, index, weight, in_size);
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
