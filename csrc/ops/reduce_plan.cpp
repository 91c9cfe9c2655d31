#include "ops/reduce_plan.h"

#include <algorithm>

#include "ops/views.h"

namespace lucid::ops {

std::vector<bool> reduced_mask(const std::vector<int64_t>& dims, int64_t ndim) {
  std::vector<bool> mask(size_t(std::max<int64_t>(ndim, 0)), dims.empty());
  for (int64_t d : dims) {
    int64_t w = wrap_dim(d, ndim);
    if (ndim == 0) continue;
    LUCID_CHECK(!mask[w], RuntimeError, "dim ", w, " appears multiple times in the list of dims");
    mask[w] = true;
  }
  return mask;
}

ReducePlan plan_reduction(const TensorImpl& a, const std::vector<int64_t>& dims) {
  ReducePlan p;
  const int64_t nd = a.ndim();
  p.mask = reduced_mask(dims, nd);
  p.full = true;
  for (int64_t d = 0; d < nd; ++d) {
    if (p.mask[d]) {
      p.n *= a.shape()[d];
      p.keepdim_shape.push_back(1);
    } else {
      p.full = false;
      p.outer *= a.shape()[d];
      p.kept_shape.push_back(a.shape()[d]);
      p.keepdim_shape.push_back(a.shape()[d]);
    }
  }
  return p;
}

TensorPtr reduction_rows(const TensorPtr& a, const ReducePlan& plan, Dtype dtype) {
  const int64_t nd = a->ndim();
  std::vector<int64_t> order;
  for (int64_t d = 0; d < nd; ++d)
    if (!plan.mask[d]) order.push_back(d);
  for (int64_t d = 0; d < nd; ++d)
    if (plan.mask[d]) order.push_back(d);
  // Detached: the rows feed kernels only; ops record their own nodes.
  TensorPtr moved = nd ? permute(std::make_shared<TensorImpl>(a->storage(), a->meta()), order) : a;
  if (moved->is_contiguous() && moved->dtype() == dtype) return moved;
  return moved->clone(dtype);
}

void check_nonempty_reduction(const char* name, const TensorImpl& a, bool no_dim, const ReducePlan& plan,
                              bool full_is_index_error) {
  if (no_dim && a.numel() == 0) {
    if (full_is_index_error)
      fail<IndexError>(name, "(): Expected reduction dim to be specified for input.numel() == 0.");
    fail<RuntimeError>(name, "(): Expected reduction dim to be specified for input.numel() == 0. "
                       "Specify the reduction dim with the 'dim' argument.");
  }
  for (int64_t d = 0; d < a.ndim(); ++d)
    LUCID_CHECK(!(plan.mask[d] && a.shape()[d] == 0), IndexError, name, "(): Expected reduction dim ", d,
                " to have non-zero size.");
}

DimPlan plan_dim(const TensorImpl& a, int64_t dim) {
  DimPlan p;
  const int64_t nd = a.ndim();
  p.dim = wrap_dim(dim, nd);
  for (int64_t d = 0; d < nd; ++d) {
    if (d < p.dim) p.outer *= a.shape()[d];
    else if (d == p.dim) p.n = a.shape()[d];
    else p.inner *= a.shape()[d];
  }
  return p;
}

TensorPtr contiguous_as(const TensorPtr& a, Dtype dtype) {
  if (a->is_contiguous() && a->dtype() == dtype) return a;
  return a->clone(dtype);
}

std::optional<DimPlan> contiguous_block(const TensorImpl& a, const ReducePlan& plan) {
  if (!a.is_contiguous()) return std::nullopt;
  const int64_t nd = a.ndim();
  int64_t first = -1, last = -1;
  for (int64_t d = 0; d < nd; ++d)
    if (plan.mask[d] && a.shape()[d] != 1) {
      if (first < 0) first = d;
      last = d;
    }
  DimPlan p;
  for (int64_t d = 0; d < nd; ++d) {
    const int64_t s = a.shape()[d];
    if (first >= 0 && d >= first && d <= last) {
      if (!plan.mask[d] && s != 1) return std::nullopt;  // a kept dim between reduced ones
      p.n *= s;
    } else if (first < 0 || d < first) {
      p.outer *= s;
    } else {
      p.inner *= s;
    }
  }
  return p;
}

TensorPtr expand_back(const TensorPtr& r, const ReducePlan& plan, const Shape& in_shape) {
  return expand(reshape(r, plan.keepdim_shape), in_shape);
}

}  // namespace lucid::ops
