// Strided device-to-device copy (GpuRuntime::strided_copy): contiguous(), clone()
// and copy_ between views of any layout, broadcast sources (stride 0) included.
#pragma once

#include <cstddef>
#include <cstdint>

#include "backend/cuda/strided_copy_kernel.cuh"
#include "core/shape.h"

namespace lucid::cuda {

// How a copy will be carried out, decided on the host from shape and strides alone.
struct StridedCopyPlan {
  int64_t numel = 0;        // elements of elem_size bytes to move; 0: nothing to do
  size_t elem_size = 0;     // bytes per kernel element: 1, 2, 4, 8 or 16
  bool contiguous = false;  // both sides dense and in order: one memcpy of numel*elem_size
  StridedCopyParams params;  // collapsed dims for the kernel (valid when numel > 0)
};

// Pure host function (no CUDA call), exposed for unit tests. Steps:
// 1. dims of size 1 are dropped (their strides never matter); a 0-size dim -> numel 0;
// 2. elem_size = the widest power of two <= 16 dividing the item size, both
//    addresses and every stride. Usually that is the item size; if it is smaller
//    (an odd item size, or a misaligned view) each item is copied as
//    itemsize/elem_size pieces through an extra innermost dim;
// 3. adjacent dims are merged where both src and dst are dense across them
//    (stride[d] == stride[d+1] * size[d+1] on BOTH sides), so a contiguous copy
//    becomes 1-d and a transposed 2-d copy stays 2-d.
// Throws lucid::RuntimeError on inconsistent arguments, and when more than
// kMaxCopyDims dims remain after merging.
StridedCopyPlan plan_strided_copy(const std::byte* dst, const Stride& dst_stride,
                                  const std::byte* src, const Stride& src_stride,
                                  const Shape& shape, size_t itemsize);

// dst[i] = src[i] over `shape` with byte strides, queued on the device's stream
// (asynchronous: returns before the copy has run). Both pointers are device
// addresses (a shared storage's device_ptr qualifies) of `device`.
void strided_copy(std::byte* dst, const Stride& dst_stride, const std::byte* src,
                  const Stride& src_stride, const Shape& shape, size_t itemsize, int device);

}  // namespace lucid::cuda
