// The sparse-times-dense product as a raw engine op (python/lucid/_sparse.py builds
// the sparse layouts, their checks and the gradients on it).
#pragma once

#include "core/tensor_impl.h"

namespace lucid::ops {

// A @ b for A [rows, b.shape[0]] in compressed sparse rows (crow, col, values; see
// ops/prims/sparse.h), b a float32 or float64 matrix of values' dtype, on values' device.
TensorPtr csr_matmul(const TensorPtr& crow, const TensorPtr& col, const TensorPtr& values, const TensorPtr& b,
                     int64_t rows);

}  // namespace lucid::ops
