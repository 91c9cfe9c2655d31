// Reductions over dimensions. `dims` empty means every dimension (PyTorch's
// sum(t) and sum(t, dim=())); dims may be negative and must not repeat.
#pragma once

#include <optional>
#include <vector>

#include "core/tensor_impl.h"

namespace lucid::ops {

// torch.sum: integers and bool sum to int64 unless `dtype` says otherwise.
TensorPtr sum(const TensorPtr& a, const std::vector<int64_t>& dims, bool keepdim, std::optional<Dtype> dtype);
// torch.mean: floating and complex dtypes only (or a floating `dtype`).
TensorPtr mean(const TensorPtr& a, const std::vector<int64_t>& dims, bool keepdim, std::optional<Dtype> dtype);

}  // namespace lucid::ops
