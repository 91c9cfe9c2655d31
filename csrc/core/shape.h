// Shapes and strides. Strides are in BYTES (the TensorImpl contract); the Python
// layer divides by the item size to present PyTorch's element strides.
#pragma once

#include <cstdint>
#include <vector>

#include "core/error.h"

namespace lucid {

using Shape = std::vector<int64_t>;
using Stride = std::vector<int64_t>;

int64_t numel_of(const Shape& shape);  // checks for overflow and negative sizes
Stride contiguous_strides(const Shape& shape, int64_t itemsize);
std::string shape_str(const Shape& shape);  // "[2, 3]"

// Dense byte strides that keep the memory order of `stride` (PyTorch's
// preserve_format / infer_dense_strides): equal to `stride` when that layout is
// already dense and non-overlapping, e.g. a transposed contiguous tensor.
Stride dense_strides_like(const Shape& shape, const Stride& stride, int64_t itemsize);

// When a tensor of `shape` with byte strides `stride` is a contiguous trailing block
// repeated along the leading dimensions with stride 0 (a bias row broadcast over a
// batch), the block's length in elements; else 0. A contiguous tensor is its own one
// block (the length is the element count).
int64_t repeated_block_len(const Shape& shape, const Stride& stride, int64_t itemsize);

// Wraps a possibly negative dimension into [0, ndim); IndexError when out of range.
int64_t wrap_dim(int64_t dim, int64_t ndim);

}  // namespace lucid
