// Index-driven ops: gather, scatter (assign / add / multiply), scatter_add,
// index_select, index_add, masked_fill. Index tensors are int64 or int32 (as
// PyTorch 2.x; other dtypes raise RuntimeError); indices are never wrapped: a negative or
// too-large index raises (RuntimeError for gather/scatter, IndexError for
// index_select/index_add, as PyTorch). Gradients: gather <-> scatter_add,
// index_select <-> index_add, masked_fill -> masked_fill with 0.
#pragma once

#include <optional>
#include <string>

#include "core/tensor_impl.h"

namespace lucid::ops {

TensorPtr gather(const TensorPtr& t, int64_t dim, const TensorPtr& index);
// reduce: "" (assign), "add" or "multiply".
TensorPtr scatter(const TensorPtr& t, int64_t dim, const TensorPtr& index, const TensorPtr& src,
                  const std::string& reduce = "");
TensorPtr scatter(const TensorPtr& t, int64_t dim, const TensorPtr& index, const Scalar& value,
                  const std::string& reduce = "");
TensorPtr scatter_add(const TensorPtr& t, int64_t dim, const TensorPtr& index, const TensorPtr& src);
TensorPtr index_select(const TensorPtr& t, int64_t dim, const TensorPtr& index);
TensorPtr index_add(const TensorPtr& t, int64_t dim, const TensorPtr& index, const TensorPtr& source,
                    const Scalar& alpha);
// value: a 0-d tensor (which may require grad) or a number.
TensorPtr masked_fill(const TensorPtr& t, const TensorPtr& mask, const TensorPtr& value);
TensorPtr masked_fill(const TensorPtr& t, const TensorPtr& mask, const Scalar& value);

}  // namespace lucid::ops
