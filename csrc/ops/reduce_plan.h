// What every reduction shares (internal to ops/): which dims are reduced, the
// output shapes with and without keepdim, and the input laid out as contiguous
// rows [outer, n] whose last axis is the reduced block, or, for the ops along one
// dim (scans, softmax), as a contiguous [outer, n, inner] block: the layouts the
// primitives of ops/prims/reduce.h take.
#pragma once

#include <optional>
#include <vector>

#include "core/tensor_impl.h"

namespace lucid::ops {

// The reduced dims as a mask (wrapped, checked for repeats; empty = every dim).
std::vector<bool> reduced_mask(const std::vector<int64_t>& dims, int64_t ndim);

struct ReducePlan {
  std::vector<bool> mask;
  Shape kept_shape;     // output shape without keepdim
  Shape keepdim_shape;  // output shape with keepdim (reduced dims as 1)
  int64_t outer = 1;    // number of output elements
  int64_t n = 1;        // elements reduced into each output element
  bool full = false;    // every dim is reduced (dims empty, or all listed)
  Shape out_shape(bool keepdim) const { return keepdim ? keepdim_shape : kept_shape; }
};

ReducePlan plan_reduction(const TensorImpl& a, const std::vector<int64_t>& dims);
// a's elements as contiguous rows [plan.outer, plan.n] of `dtype` (a itself when it
// already is; otherwise one copy that also casts).
TensorPtr reduction_rows(const TensorPtr& a, const ReducePlan& plan, Dtype dtype);
// IndexError unless every reduced dim has elements (ops without an identity:
// max, argmax, ...); for a reduction without dims (`no_dim`) of an empty tensor,
// RuntimeError (IndexError for argmax/argmin, as PyTorch).
void check_nonempty_reduction(const char* name, const TensorImpl& a, bool no_dim, const ReducePlan& plan,
                              bool full_is_index_error = false);

// A single dim along which an op runs (scans, softmax): a contiguous copy of `a`
// (as `dtype`) viewed as [outer, n, inner].
struct DimPlan {
  int64_t dim = 0, outer = 1, n = 1, inner = 1;
};
DimPlan plan_dim(const TensorImpl& a, int64_t dim);
TensorPtr contiguous_as(const TensorPtr& a, Dtype dtype);

// When `a` is contiguous and its reduced dims (size-1 dims aside) are adjacent, the
// reduction as one [outer, n, inner] block of a's own memory: no copy, and the
// outer-axis case streams rows (MomentBlock, ExtremumBlock). dim is unused.
std::optional<DimPlan> contiguous_block(const TensorImpl& a, const ReducePlan& plan);

// Keepdim-shaped reduction result `r` broadcast back over the input's shape
// (what most VJPs need): reshape(r, keepdim_shape) expanded to `in_shape`.
TensorPtr expand_back(const TensorPtr& r, const ReducePlan& plan, const Shape& in_shape);

}  // namespace lucid::ops
