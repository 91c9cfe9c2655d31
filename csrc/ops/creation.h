// Creation ops that compute their values (the rest of lucid's creation functions are
// empty() plus fill()). Each fills its result on `device` (ops/prims/creation.h).
#pragma once

#include "core/tensor_impl.h"

namespace lucid::ops {

// Values start + i*step. Integer dtypes compute in int64 (exact past 2^53),
// floating dtypes in double, as PyTorch's accumulate types do.
TensorPtr arange(double start, double end, double step, Dtype dtype, Device device);
TensorPtr arange_int(int64_t start, int64_t end, int64_t step, Dtype dtype, Device device);
TensorPtr linspace(double start, double end, int64_t steps, Dtype dtype, Device device);
TensorPtr logspace(double start, double end, int64_t steps, double base, Dtype dtype, Device device);
TensorPtr eye(int64_t n, int64_t m, Dtype dtype, Device device);

}  // namespace lucid::ops
