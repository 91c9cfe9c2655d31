// View ops: new metadata over the same storage, no data movement. Sizes, dims and
// indices here are in elements (PyTorch's conventions); strides stored in the
// TensorImpl stay in bytes. Every function validates its arguments and raises the
// error type PyTorch raises.
#pragma once

#include <optional>
#include <vector>

#include "core/tensor_impl.h"

namespace lucid::ops {

// Resolves one -1 in `shape` against `numel`; RuntimeError when incompatible.
Shape infer_size(const Shape& shape, int64_t numel);

TensorPtr view(const TensorPtr& t, const Shape& shape);     // RuntimeError if not viewable
TensorPtr reshape(const TensorPtr& t, const Shape& shape);  // view when possible, else a copy
TensorPtr permute(const TensorPtr& t, const std::vector<int64_t>& dims);
TensorPtr transpose(const TensorPtr& t, int64_t dim0, int64_t dim1);
TensorPtr expand(const TensorPtr& t, const Shape& shape);  // -1 keeps a size
TensorPtr squeeze(const TensorPtr& t, const std::vector<int64_t>& dims);  // empty: all size-1
TensorPtr unsqueeze(const TensorPtr& t, int64_t dim);
TensorPtr flatten(const TensorPtr& t, int64_t start_dim, int64_t end_dim);
TensorPtr unflatten(const TensorPtr& t, int64_t dim, const Shape& sizes);
// Python-style slice along dim: start/stop are clamped, step must be positive.
TensorPtr slice(const TensorPtr& t, int64_t dim, std::optional<int64_t> start,
                std::optional<int64_t> stop, int64_t step);
TensorPtr narrow(const TensorPtr& t, int64_t dim, int64_t start, int64_t length);
TensorPtr select(const TensorPtr& t, int64_t dim, int64_t index);
TensorPtr as_strided(const TensorPtr& t, const Shape& size, const Shape& stride,
                     std::optional<int64_t> storage_offset);
TensorPtr contiguous(const TensorPtr& t);  // itself when already contiguous
// The complex tensor's bytes as float32 pairs [..., 2] (real, imaginary), and back: views
// of the same storage, each the other's gradient (torch's view_as_real/view_as_complex).
TensorPtr view_as_real(const TensorPtr& t);
TensorPtr view_as_complex(const TensorPtr& t);
// Tensor.view(dtype): t's bytes read as `dtype`; with another element size the last dim
// (of unit stride) is split or merged. Not differentiable, as torch's.
TensorPtr view_dtype(const TensorPtr& t, Dtype dtype);

}  // namespace lucid::ops
