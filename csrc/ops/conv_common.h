// The dtype the convolution and pooling kernels compute in, shared by their ops
// (conv.cpp, pool.cpp).
#pragma once

#include "core/error.h"
#include "core/tensor_impl.h"

namespace lucid::ops {

// float16/bfloat16 compute in float32 (as their elementwise ops do), float32 and
// float64 natively. Other dtypes raise NotImplementedError (PyTorch's type for a
// dtype a kernel lacks; its CPU convolutions also take integers and complex, lucid's
// do not yet).
inline Dtype conv_compute_dtype(const char* name, Dtype d) {
  if (d == Dtype::F64) return Dtype::F64;
  if (d == Dtype::F32 || d == Dtype::F16 || d == Dtype::BF16) return Dtype::F32;
  fail<NotImplementedError>("\"", name, "\" not implemented for dtype ", dtype_name(d),
                            " (lucid computes it in floating dtypes only)");
}

}  // namespace lucid::ops
