// CPU kernels of advanced indexing (ops/index_ops.cpp builds their plans).
#pragma once

#include <vector>

#include "core/tensor_impl.h"

namespace lucid::cpu {

// One advanced-indexing loop, over the shape of the indexing result R. Element r of
// the result is the element of `self` at
//   self.data + sum_d r[d] * self_stride[d] + sum_k wrap(idx_k[r]) * idx_dim_stride[k]
// where self_stride is 0 on the dimensions the index tensors broadcast over, and
// idx_k[r] is read at byte offset sum_d r[d] * idx_stride[k][d] from idx[k] (int64,
// 0 on the dimensions idx_k does not vary). Negative indices wrap by idx_dim_size.
struct IndexPlan {
  Shape shape;        // R
  Stride self_stride;  // bytes, one per dimension of R
  std::vector<const TensorImpl*> idx;  // int64 index tensors, already bounds-checked
  std::vector<Stride> idx_stride;      // bytes, one per dimension of R
  std::vector<int64_t> idx_dim_size;   // size of the dimension of self each one indexes
  std::vector<int64_t> idx_dim_stride; // byte stride of that dimension in self
};

// IndexError unless every element of the int64 tensor `idx` lies in [-size, size);
// `dim` names the dimension in the message.
void check_index_bounds(const TensorImpl& idx, int64_t size, int64_t dim);

// out (contiguous, shape R, self's dtype) = self[plan].
void index_gather(TensorImpl& out, const TensorImpl& self, const IndexPlan& plan);
// self[plan] = values (or += with accumulate, summing duplicates in order). `values`
// has self's dtype and shape R (a broadcast view is fine).
void index_scatter(TensorImpl& self, const TensorImpl& values, const IndexPlan& plan, bool accumulate);

// nonzero's two passes over `flags`, a contiguous bool tensor (the input cast to bool,
// which decides what is nonzero for every dtype): the number of true elements, then
// their row-major coordinates into out (count, flags.ndim, int64).
int64_t count_true(const TensorImpl& flags);
void nonzero(TensorImpl& out, const TensorImpl& flags);

}  // namespace lucid::cpu
