#include "ops/reduce.h"

#include <limits>

#include "autograd/record.h"
#include "ops/elementwise.h"
#include "ops/prims/reduce.h"
#include "ops/reduce_plan.h"
#include "ops/views.h"

namespace lucid::ops {

namespace {

TensorPtr reduce_sum(const TensorPtr& a, const std::vector<int64_t>& dims, bool keepdim,
                     Dtype out_dtype, bool average) {
  const int64_t nd = a->ndim();
  std::vector<bool> mask = reduced_mask(dims, nd);
  std::vector<int64_t> order;
  Shape keepdim_shape, kept_shape;
  int64_t count = 1;
  for (int64_t d = 0; d < nd; ++d) {
    if (!mask[d]) {
      order.push_back(d);
      kept_shape.push_back(a->shape()[d]);
      keepdim_shape.push_back(a->shape()[d]);
    } else {
      count *= a->shape()[d];
      keepdim_shape.push_back(1);
    }
  }
  size_t reduced = 0;
  for (int64_t d = 0; d < nd; ++d)
    if (mask[d]) order.push_back(d), ++reduced;
  TensorPtr out = TensorImpl::empty(kept_shape, out_dtype, a->device());
  double scale = average ? (count ? 1.0 / double(count) : std::numeric_limits<double>::quiet_NaN()) : 1.0;
  std::optional<DimPlan> block;
  if (a->dtype() == out_dtype && block_float_dtype(*a)) block = contiguous_block(*a, plan_reduction(*a, dims));
  if (block) {  // over a's own memory, vectorised and threaded
    MomentBlock p;
    p.moment = average ? BlockMoment::Mean : BlockMoment::Sum;
    p.outer = block->outer, p.n = block->n, p.inner = block->inner;
    launch(p, {out.get()}, {a.get()});
  } else {
    TensorPtr src = a->dtype() == out_dtype ? a : a->clone(out_dtype);
    TensorPtr moved = nd ? permute(src, order) : src;
    SumLastDims p;
    p.reduced = int64_t(reduced);
    p.mean = average;
    launch(p, {out.get()}, {moved.get()});
  }
  if (keepdim) out = view(out, keepdim_shape);
  if (autograd::needs_grad({&a}) && autograd::is_differentiable(out_dtype)) {
    // The gradient spreads back over the reduced elements (divided by their count
    // for the mean). Names follow PyTorch: ...Backward0 reduces everything.
    const char* node_name = average ? (dims.empty() ? "MeanBackward0" : "MeanBackward1")
                                    : (dims.empty() ? "SumBackward0" : "SumBackward1");
    Shape in_shape = a->shape();
    autograd::record(node_name, {a}, {out}, [=](const Node&, const autograd::Grads& g) {
      TensorPtr spread = expand(reshape(g[0], keepdim_shape), in_shape);
      return autograd::Grads{average ? binary(BinaryOp::Mul, {spread, {}}, {nullptr, Scalar(scale)}) : spread};
    });
  }
  return out;
}

}  // namespace

TensorPtr sum(const TensorPtr& a, const std::vector<int64_t>& dims, bool keepdim, std::optional<Dtype> dtype) {
  Dtype out = dtype.value_or(is_integral(a->dtype(), true) ? Dtype::I64 : a->dtype());
  return reduce_sum(a, dims, keepdim, out, false);
}

TensorPtr mean(const TensorPtr& a, const std::vector<int64_t>& dims, bool keepdim, std::optional<Dtype> dtype) {
  Dtype out = dtype.value_or(a->dtype());
  LUCID_CHECK(!is_integral(out, true), NotImplementedError, "mean(): could not infer output dtype. ",
              dtype ? "Optional" : "Input", " dtype must be either a floating point or complex dtype. Got: ",
              dtype_name(out));
  return reduce_sum(a, dims, keepdim, out, true);
}

}  // namespace lucid::ops
