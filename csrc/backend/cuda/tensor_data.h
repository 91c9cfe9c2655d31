// A tensor's elements as a typed device pointer, for the kernels' host-side adapters
// (null for a null tensor: an optional operand, a bias that is not there).
#pragma once

#include "core/tensor_impl.h"

namespace lucid::cuda {

template <typename T>
const T* cdata(const TensorImpl* t) {
  return t ? reinterpret_cast<const T*>(t->data_ptr()) : nullptr;
}

template <typename T>
T* mdata(TensorImpl* t) {
  return t ? reinterpret_cast<T*>(t->data_ptr()) : nullptr;
}

}  // namespace lucid::cuda
