// A number parameter of a primitive (ops/prims/*.h) as the stride-0 host view the CPU
// loops read: they take tensors, and a GPU kernel takes the number by value instead.
#pragma once

#include "core/tensor_impl.h"

namespace lucid::cpu {

inline TensorPtr number_view(const Scalar& value, Dtype dtype, const Shape& shape) {
  TensorPtr t = TensorImpl::full({}, value, dtype, Device::cpu());
  return TensorImpl::view_of(*t, shape, Stride(shape.size(), 0), 0);
}

}  // namespace lucid::cpu
