#include "ops/sort.h"

#include "autograd/grad_mode.h"
#include "core/error.h"
#include "core/shape.h"
#include "ops/primitive.h"
#include "ops/reduce_plan.h"
#include "ops/prims/reduce.h"
#include "ops/views.h"

namespace lucid::ops {

namespace {

// SortRows along dim: the first k positions of each line's sorted order (k < 0: all),
// and their values too when asked for (else null).
std::pair<TensorPtr, TensorPtr> sort_along(const TensorPtr& x, int64_t dim, bool descending, bool want_values,
                                           int64_t k = -1) {
  LUCID_CHECK(!is_complex(x->dtype()), TypeError, "Sort does not support complex dtypes (got ",
              dtype_name(x->dtype()), "): sort their real part or their absolute value");
  autograd::GradModeGuard no_graph(false);  // positions, and values off the graph (sort.h)
  if (x->ndim() == 0) {
    wrap_dim(dim, 1);  // (dim 0 or -1, as torch; another raises)
    return {want_values ? contiguous(x)->clone() : nullptr, TensorImpl::full({}, Scalar(int64_t(0)), Dtype::I64,
                                                                             x->device())};
  }
  const int64_t d = wrap_dim(dim, x->ndim()), last = x->ndim() - 1;
  // the sorted dim last and contiguous: one row per position of the other dims
  TensorPtr rows_view = contiguous(d == last ? x : transpose(x, d, last));
  SortRows p;
  p.n = x->shape()[d];
  p.k = k < 0 ? p.n : k;
  LUCID_CHECK(p.k <= p.n, RuntimeError, "selected index k out of range");
  p.rows = p.n == 0 ? 0 : x->numel() / p.n;
  p.descending = descending;
  p.values = want_values;
  Shape shape = rows_view->shape();
  shape.back() = p.k;
  TensorPtr positions = TensorImpl::empty(shape, Dtype::I64, x->device());
  TensorPtr values = want_values ? TensorImpl::empty(shape, x->dtype(), x->device()) : nullptr;
  if (want_values) launch(p, {positions.get(), values.get()}, {rows_view.get()});
  else launch(p, {positions.get()}, {rows_view.get()});
  if (d != last) {
    positions = contiguous(transpose(positions, d, last));
    if (values) values = contiguous(transpose(values, d, last));
  }
  return {values, positions};
}

}  // namespace

TensorPtr argsort(const TensorPtr& x, int64_t dim, bool descending) {
  return sort_along(x, dim, descending, false).second;
}

std::pair<TensorPtr, TensorPtr> sort(const TensorPtr& x, int64_t dim, bool descending) {
  return sort_along(x, dim, descending, true);
}

TensorPtr topk_positions(const TensorPtr& x, int64_t k, int64_t dim, bool largest) {
  LUCID_CHECK(k >= 0, RuntimeError, "selected index k out of range");
  return sort_along(x, dim, largest, false, x->ndim() == 0 ? -1 : k).second;
}

TensorPtr searchsorted(const TensorPtr& boundaries, const TensorPtr& values, bool right) {
  LUCID_CHECK(boundaries->device() == values->device(), RuntimeError,
              "torch.searchsorted(): boundaries and input value tensors should be on the same device, got ",
              boundaries->device().str(), " and ", values->device().str());
  const Shape& bs = boundaries->shape();
  const Shape& vs = values->shape();
  const bool shared = bs.size() == 1;
  bool leading_match = !bs.empty() && bs.size() == vs.size();
  for (size_t d = 0; leading_match && d + 1 < bs.size(); ++d) leading_match = bs[d] == vs[d];
  LUCID_CHECK(shared || leading_match, RuntimeError,
              "torch.searchsorted(): boundaries tensor should be 1 dimension or the first N-1 dimensions of "
              "boundaries tensor and input value tensor must match, but we got boundaries tensor ",
              shape_str(bs), " and input value tensor ", shape_str(vs));
  const Dtype dt = promote_types(boundaries->dtype(), values->dtype());
  LUCID_CHECK(!is_complex(dt), TypeError, "searchsorted: complex values have no order");
  autograd::GradModeGuard no_graph(false);
  TensorPtr b = contiguous_as(boundaries, dt), v = contiguous_as(values, dt);
  SearchSorted p;
  p.n = bs.back();
  p.m = vs.empty() ? 1 : vs.back();
  p.rows = p.m == 0 ? 0 : values->numel() / p.m;
  p.right = right;
  p.shared = shared;
  TensorPtr out = TensorImpl::empty(vs, Dtype::I64, values->device());
  launch(p, {out.get()}, {b.get(), v.get()});
  return out;
}

}  // namespace lucid::ops
