// max/min (full and along a dim), amax/amin, argmax/argmin, all/any, count_nonzero.
#include "autograd/record.h"
#include "ops/creation.h"
#include "ops/elementwise.h"
#include "ops/elementwise_extra.h"
#include "ops/prims/reduce.h"
#include "ops/reduce.h"
#include "ops/reduce_plan.h"
#include "ops/views.h"

namespace lucid::ops {

namespace {

std::vector<int64_t> reduced_dims(const ReducePlan& plan) {
  std::vector<int64_t> dims;
  for (size_t d = 0; d < plan.mask.size(); ++d)
    if (plan.mask[d]) dims.push_back(int64_t(d));
  return dims;
}

// The extremum of each row (values and/or first indices), shaped plan.kept_shape.
ValuesIndices extremum(const TensorPtr& a, const ReducePlan& plan, bool is_max, bool values, bool indices) {
  ValuesIndices r;
  TensorImpl* out_list[2];
  size_t n_outs = 0;
  if (values) out_list[n_outs++] = (r.values = TensorImpl::empty(plan.kept_shape, a->dtype(), a->device())).get();
  if (indices) out_list[n_outs++] = (r.indices = TensorImpl::empty(plan.kept_shape, Dtype::I64, a->device())).get();
  const Outputs outs(out_list, n_outs);
  if (plan.outer > 0 && block_float_dtype(*a)) {
    if (std::optional<DimPlan> b = contiguous_block(*a, plan)) {  // in place, vectorised, threaded
      ExtremumBlock p;
      p.outer = b->outer, p.n = b->n, p.inner = b->inner;
      p.is_max = is_max, p.values = values, p.indices = indices;
      const TensorImpl* ins[] = {a.get()};
      launch(p, outs, ins);
      return r;
    }
  }
  TensorPtr rows = reduction_rows(a, plan, a->dtype());
  if (plan.outer > 0) {
    ExtremumRows p;
    p.outer = plan.outer, p.n = plan.n;
    p.is_max = is_max, p.values = values, p.indices = indices;
    const TensorImpl* ins[] = {rows.get()};
    launch(p, outs, ins);
  }
  return r;
}

void check_ordered(const char* name, const TensorImpl& a) {
  LUCID_CHECK(!is_complex(a.dtype()), NotImplementedError, name, "(): not implemented for complex tensors (",
              dtype_name(a.dtype()), "): complex numbers have no order");
}

// amax/amin and the full max/min: the gradient goes evenly to every element equal
// to the result. The full max/min select as PyTorch's evenly_distribute_backward
// (a NaN result from the NaNs, zeros elsewhere); amax/amin scale as its
// scale_grad_by_count (grad * hit / count: a NaN row's gradient is NaN).
void record_evenly(const char* node_name, const TensorPtr& a, const TensorPtr& out, const ReducePlan& plan,
                   bool select) {
  if (!autograd::needs_grad({&a}) || !autograd::is_differentiable(out->dtype())) return;
  Shape in_shape = a->shape();
  std::vector<int64_t> dims = reduced_dims(plan);
  auto node = autograd::record(node_name, {a}, {out}, [plan, in_shape, dims, select](const Node& n,
                                                                                     const autograd::Grads& g) {
    TensorPtr x = n.saved(0), y = expand_back(n.saved(1), plan, in_shape);
    TensorPtr gk = expand_back(g[0], plan, in_shape);
    if (!select) {
      TensorPtr hit = eq(x, y);
      return autograd::Grads{div(mul(gk, hit), sum(hit, dims, true, std::nullopt))};
    }
    TensorPtr hit = logical_or(eq(x, y), logical_and(isnan(x), isnan(y)));
    TensorPtr count = sum(hit, dims, true, std::nullopt);
    return autograd::Grads{where(hit, Operand{div(gk, count), {}}, Operand{nullptr, Scalar(0.0)})};
  });
  node->save(a);
  node->save(out, true);
}

TensorPtr full_extremum(const TensorPtr& a, bool is_max) {
  const char* name = is_max ? "max" : "min";
  check_ordered(name, *a);
  ReducePlan plan = plan_reduction(*a, {});
  check_nonempty_reduction(name, *a, true, plan);
  TensorPtr out = extremum(a, plan, is_max, true, false).values;
  record_evenly(is_max ? "MaxBackward1" : "MinBackward1", a, out, plan, true);
  return out;
}

ValuesIndices dim_extremum(const TensorPtr& a, int64_t dim, bool keepdim, bool is_max) {
  const char* name = is_max ? "max" : "min";
  check_ordered(name, *a);
  ReducePlan plan = plan_reduction(*a, {dim});
  check_nonempty_reduction(name, *a, false, plan);
  ValuesIndices r = extremum(a, plan, is_max, true, true);
  if (keepdim) {
    r.values = view(r.values, plan.keepdim_shape);
    r.indices = view(r.indices, plan.keepdim_shape);
  }
  if (autograd::needs_grad({&a}) && autograd::is_differentiable(a->dtype())) {
    // The gradient goes to the chosen index: a one-hot mask along dim built by
    // comparing positions with the indices.
    Shape in_shape = a->shape();
    const int64_t nd = a->ndim(), wdim = nd ? wrap_dim(dim, nd) : 0;
    auto node = autograd::record(is_max ? "MaxBackward0" : "MinBackward0", {a}, {r.values, r.indices},
                                 [plan, in_shape, nd, wdim](const Node& n, const autograd::Grads& g) {
      TensorPtr gk = expand_back(g[0], plan, in_shape);
      if (nd == 0) return autograd::Grads{gk};
      TensorPtr idx = n.saved(0);  // on the input's device: the positions are made there too
      Shape pos_shape(size_t(nd), 1);
      pos_shape[wdim] = in_shape[wdim];
      TensorPtr pos = view(arange_int(0, in_shape[wdim], 1, Dtype::I64, idx->device()), pos_shape);
      TensorPtr onehot = eq(pos, reshape(idx, plan.keepdim_shape));
      return autograd::Grads{where(onehot, Operand{gk, {}}, Operand{nullptr, Scalar(0.0)})};
    });
    node->save(r.indices);  // int64: no history, so no cycle through the node
  }
  return r;
}

TensorPtr amax_amin(const TensorPtr& a, const std::vector<int64_t>& dims, bool keepdim, bool is_max) {
  const char* name = is_max ? "amax" : "amin";
  check_ordered(name, *a);
  ReducePlan plan = plan_reduction(*a, dims);
  check_nonempty_reduction(name, *a, dims.empty(), plan);
  TensorPtr out = extremum(a, plan, is_max, true, false).values;
  if (keepdim) out = view(out, plan.keepdim_shape);
  record_evenly(is_max ? "AmaxBackward0" : "AminBackward0", a, out, plan, false);
  return out;
}

TensorPtr arg_extremum(const TensorPtr& a, std::optional<int64_t> dim, bool keepdim, bool is_max) {
  const char* name = is_max ? "argmax" : "argmin";
  LUCID_CHECK(!is_complex(a->dtype()), TypeError, name, "(): does not support complex input");
  LUCID_CHECK(a->dtype() != Dtype::Bool, NotImplementedError, name, "(): does not support bool input");
  ReducePlan plan = dim ? plan_reduction(*a, {*dim}) : plan_reduction(*a, {});
  check_nonempty_reduction(name, *a, !dim, plan, true);
  TensorPtr out = extremum(a, plan, is_max, false, true).indices;
  return keepdim ? view(out, plan.keepdim_shape) : out;
}

TensorPtr all_any(const TensorPtr& a, const std::vector<int64_t>& dims, bool keepdim, bool is_all) {
  ReducePlan plan = plan_reduction(*a, dims);
  TensorPtr rows = reduction_rows(a, plan, Dtype::Bool);
  TensorPtr out = TensorImpl::empty(plan.kept_shape, Dtype::Bool, a->device());
  if (plan.outer > 0) {
    AllAnyRows p;
    p.outer = plan.outer, p.n = plan.n, p.is_all = is_all;
    launch(p, {out.get()}, {rows.get()});
  }
  if (a->dtype() == Dtype::U8) out = out->clone(Dtype::U8);  // PyTorch keeps uint8
  return keepdim ? view(out, plan.keepdim_shape) : out;
}

}  // namespace

TensorPtr max(const TensorPtr& a) { return full_extremum(a, true); }
TensorPtr min(const TensorPtr& a) { return full_extremum(a, false); }
ValuesIndices max_dim(const TensorPtr& a, int64_t dim, bool keepdim) { return dim_extremum(a, dim, keepdim, true); }
ValuesIndices min_dim(const TensorPtr& a, int64_t dim, bool keepdim) { return dim_extremum(a, dim, keepdim, false); }
TensorPtr amax(const TensorPtr& a, const std::vector<int64_t>& dims, bool keepdim) {
  return amax_amin(a, dims, keepdim, true);
}
TensorPtr amin(const TensorPtr& a, const std::vector<int64_t>& dims, bool keepdim) {
  return amax_amin(a, dims, keepdim, false);
}
TensorPtr argmax(const TensorPtr& a, std::optional<int64_t> dim, bool keepdim) {
  return arg_extremum(a, dim, keepdim, true);
}
TensorPtr argmin(const TensorPtr& a, std::optional<int64_t> dim, bool keepdim) {
  return arg_extremum(a, dim, keepdim, false);
}
TensorPtr all(const TensorPtr& a, const std::vector<int64_t>& dims, bool keepdim) {
  return all_any(a, dims, keepdim, true);
}
TensorPtr any(const TensorPtr& a, const std::vector<int64_t>& dims, bool keepdim) {
  return all_any(a, dims, keepdim, false);
}

TensorPtr count_nonzero(const TensorPtr& a, const std::vector<int64_t>& dims) {
  return sum(ne(a, Scalar(int64_t(0))), dims, false, std::nullopt);
}

}  // namespace lucid::ops
