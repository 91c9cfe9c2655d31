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

// ---- the rest of PyTorch's reductions (reduce_minmax.cpp, reduce_stats.cpp,
// scan.cpp, softmax.cpp). Dims follow the same rules; a single `dim` wraps.
namespace lucid::ops {

struct ValuesIndices {
  TensorPtr values, indices;  // indices: int64
};

// max()/min() of every element (RuntimeError when empty); gradient split evenly
// among ties (MaxBackward1), as PyTorch.
TensorPtr max(const TensorPtr& a);
TensorPtr min(const TensorPtr& a);
// max(dim)/min(dim): the values and the index of the first extremum (NaN wins);
// the gradient goes to that index (MaxBackward0).
ValuesIndices max_dim(const TensorPtr& a, int64_t dim, bool keepdim);
ValuesIndices min_dim(const TensorPtr& a, int64_t dim, bool keepdim);
TensorPtr amax(const TensorPtr& a, const std::vector<int64_t>& dims, bool keepdim);
TensorPtr amin(const TensorPtr& a, const std::vector<int64_t>& dims, bool keepdim);
// dim == nullopt: the index into the flattened tensor.
TensorPtr argmax(const TensorPtr& a, std::optional<int64_t> dim, bool keepdim);
TensorPtr argmin(const TensorPtr& a, std::optional<int64_t> dim, bool keepdim);
// bool results (uint8 for a uint8 input, as PyTorch).
TensorPtr all(const TensorPtr& a, const std::vector<int64_t>& dims, bool keepdim);
TensorPtr any(const TensorPtr& a, const std::vector<int64_t>& dims, bool keepdim);
TensorPtr count_nonzero(const TensorPtr& a, const std::vector<int64_t>& dims);

// torch.prod: one dim or all; integers and bool give int64 unless `dtype` says otherwise.
TensorPtr prod(const TensorPtr& a, std::optional<int64_t> dim, bool keepdim, std::optional<Dtype> dtype);
// var/std with Bessel's `correction` (1 = unbiased); floating dtypes only.
TensorPtr var(const TensorPtr& a, const std::vector<int64_t>& dims, double correction, bool keepdim);
TensorPtr std(const TensorPtr& a, const std::vector<int64_t>& dims, double correction, bool keepdim);
TensorPtr logsumexp(const TensorPtr& a, const std::vector<int64_t>& dims, bool keepdim);
// The vector p-norm over dims (all when empty): p may be 0, +-inf or any number.
TensorPtr norm(const TensorPtr& a, double p, const std::vector<int64_t>& dims, bool keepdim,
               std::optional<Dtype> dtype);

TensorPtr cumsum(const TensorPtr& a, int64_t dim, std::optional<Dtype> dtype);
TensorPtr cumprod(const TensorPtr& a, int64_t dim, std::optional<Dtype> dtype);
TensorPtr softmax(const TensorPtr& a, int64_t dim, std::optional<Dtype> dtype);
TensorPtr log_softmax(const TensorPtr& a, int64_t dim, std::optional<Dtype> dtype);

}  // namespace lucid::ops
