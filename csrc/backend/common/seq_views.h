// Views of a recurrent layer's contiguous [T, B, X] sequences and 2-D weights, as the
// layer loops of both backends take them (a step, all steps as one matrix, a weight's
// transpose): views made without the op layer, so no autograd and no copy.
#pragma once

#include "core/tensor_impl.h"

namespace lucid::backend {

// Step t of a contiguous [T, B, X] tensor, as the [B, X] view select(seq, 0, t) is.
inline TensorPtr step_view(const TensorImpl& seq, int64_t t) {
  const int64_t B = seq.shape()[1], X = seq.shape()[2], item = int64_t(seq.itemsize());
  return TensorImpl::view_of(seq, {B, X}, {X * item, item}, seq.storage_offset() + t * B * X * item);
}

// A contiguous [T, B, X] tensor as the [T * B, X] matrix, or its transpose.
inline TensorPtr as_matrix(const TensorImpl& seq, bool transposed) {
  const int64_t R = seq.shape()[0] * seq.shape()[1], X = seq.shape()[2], item = int64_t(seq.itemsize());
  if (transposed) return TensorImpl::view_of(seq, {X, R}, {item, X * item}, seq.storage_offset());
  return TensorImpl::view_of(seq, {R, X}, {X * item, item}, seq.storage_offset());
}

// w^T of a 2-D w, as transpose(w, 0, 1) is.
inline TensorPtr transposed(const TensorImpl& w) {
  return TensorImpl::view_of(w, {w.shape()[1], w.shape()[0]}, {w.stride()[1], w.stride()[0]}, w.storage_offset());
}

}  // namespace lucid::backend
