// Ops that rearrange or combine whole tensors: cat, flip, roll, repeat, tril/triu,
// diagonal. Each computes its result without recording the steps it is built from
// and records one node named as PyTorch names it, whose VJP is written with ops
// (so create_graph works). Dims may be negative, as in PyTorch.
#pragma once

#include <functional>
#include <vector>

#include "autograd/node.h"
#include "core/tensor_impl.h"

namespace lucid::ops {

// torch.cat: result dtype promoted over the inputs; 1-D empty tensors are skipped
// in the shape checks (PyTorch's legacy rule).
TensorPtr cat(const std::vector<TensorPtr>& tensors, int64_t dim);
// Views of consecutive pieces of `dim` (sizes sum to its size) and of each index
// of `dim`. One node for all the pieces (SplitBackward0 / SplitWithSizesBackward0 /
// UnbindBackward0) whose VJP is a cat/stack, so backward costs one tensor's worth
// of memory, not one per piece.
std::vector<TensorPtr> split_with_sizes(const TensorPtr& t, const std::vector<int64_t>& sizes, int64_t dim,
                                        bool equal_split);
std::vector<TensorPtr> unbind(const TensorPtr& t, int64_t dim);
TensorPtr flip(const TensorPtr& t, const std::vector<int64_t>& dims);
// dims empty: roll the flattened tensor and restore its shape.
TensorPtr roll(const TensorPtr& t, const std::vector<int64_t>& shifts, const std::vector<int64_t>& dims);
TensorPtr repeat(const TensorPtr& t, const Shape& repeats);
TensorPtr tril(const TensorPtr& t, int64_t diagonal);
TensorPtr triu(const TensorPtr& t, int64_t diagonal);
// A view of the diagonal `offset` of the (dim1, dim2) planes, appended as the last dim.
TensorPtr diagonal(const TensorPtr& t, int64_t offset, int64_t dim1, int64_t dim2);

// The adjoint of a view that picks some elements of a tensor shaped like `input`:
// zeros of that shape with g written where view_of looks. Differentiable (its VJP
// applies view_of), so picking ops can use it as their backward.
using ViewFn = std::function<TensorPtr(const TensorPtr&)>;
TensorPtr embed_into_zeros(const TensorPtr& g, const TensorSpec& input, const ViewFn& view_of);

}  // namespace lucid::ops
