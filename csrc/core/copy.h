// The host's one data-movement primitive: an N-d strided copy with a dtype cast.
// contiguous(), clone(), copy_(), fill_() (a 0-stride source), .to(dtype) and every
// host side of a transfer go through it, so the cast rules live in one place.
#pragma once

#include <cstddef>

#include "core/dtype.h"
#include "core/shape.h"

namespace lucid {

// dst[i] = cast<dst_dtype>(src[i]) for every index i of `shape`. Strides are in
// bytes; a 0 stride in src broadcasts. dst must not partially overlap src.
void host_strided_copy(std::byte* dst, const Stride& dst_stride, Dtype dst_dtype,
                       const std::byte* src, const Stride& src_stride, Dtype src_dtype,
                       const Shape& shape);

// Merges adjacent dimensions that are contiguous with each other in every operand
// and drops size-1 dimensions; returns the collapsed shape and rewrites `strides`.
// An empty result means a single element.
Shape collapse_dims(const Shape& shape, std::initializer_list<Stride*> strides);

}  // namespace lucid
