#include "ops/sort.h"

#include "autograd/grad_mode.h"
#include "core/error.h"
#include "core/shape.h"
#include "ops/primitive.h"
#include "ops/prims/reduce.h"
#include "ops/views.h"

namespace lucid::ops {

TensorPtr argsort(const TensorPtr& x, int64_t dim, bool descending) {
  LUCID_CHECK(x->dtype() != Dtype::C64, TypeError, "Sort does not support complex dtypes (got ",
              dtype_name(x->dtype()), "): sort their real part or their absolute value");
  autograd::GradModeGuard no_graph(false);  // positions only: nothing to record
  if (x->ndim() == 0) {
    wrap_dim(dim, 1);  // (dim 0 or -1, as torch; another raises)
    return TensorImpl::full({}, Scalar(int64_t(0)), Dtype::I64, x->device());
  }
  const int64_t d = wrap_dim(dim, x->ndim()), last = x->ndim() - 1;
  // the sorted dim last and contiguous: one row per position of the other dims
  TensorPtr rows_view = contiguous(d == last ? x : transpose(x, d, last));
  SortRows p;
  p.n = x->shape()[d];
  p.rows = p.n == 0 ? 0 : x->numel() / p.n;
  p.descending = descending;
  TensorPtr positions = TensorImpl::empty(rows_view->shape(), Dtype::I64, x->device());
  launch(p, {positions.get()}, {rows_view.get()});
  return d == last ? positions : contiguous(transpose(positions, d, last));
}

}  // namespace lucid::ops
