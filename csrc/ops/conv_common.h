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

// The dtype of a convolution's product (forward, data and weight gradient): on the
// GPU float16/bfloat16 run natively, through cuDNN's tensor cores with float32
// accumulation, as PyTorch's do (a product computed in float32 would leave them
// at SIMT speed: 2-4x torch's time); elsewhere as conv_compute_dtype.
inline Dtype conv_product_dtype(const char* name, Dtype d, Device device) {
  if (device.type == DeviceType::GPU && (d == Dtype::F16 || d == Dtype::BF16)) return d;
  return conv_compute_dtype(name, d);
}

}  // namespace lucid::ops
