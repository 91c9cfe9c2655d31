// Convolutions as im2col / col2im (im2col.cu) and the Gemm primitive (cuBLASLt,
// gemm.cpp): the route for the geometries cuDNN cannot express (conv.cpp, Note
// [Convolutions through cuDNN]). Tensors contiguous, float32 or float64, non-empty;
// the bias is the caller's. Deterministic: every sum has a fixed order.
#pragma once

#include "core/tensor_impl.h"
#include "ops/prims/spatial.h"

namespace lucid::cuda {

// small [N, Cs, *small] = conv(big [N, Cb, *big], w [Cs, Cb/groups, *k]).
void gemm_conv_forward(const TensorImpl& big, const TensorImpl& w, TensorImpl& small, const ops::ConvGeometry& g,
                       bool allow_tf32);
// big [N, Cb, *big] = conv_transpose(small [N, Cs, *small], w).
void gemm_conv_transpose(const TensorImpl& small, const TensorImpl& w, TensorImpl& big, const ops::ConvGeometry& g,
                         bool allow_tf32);
// gw [Cs, Cb/groups, *k] = sum over the batch of small @ im2col(big)^T.
void gemm_conv_weight_grad(const TensorImpl& big, const TensorImpl& small, TensorImpl& gw,
                           const ops::ConvGeometry& g, bool allow_tf32);

}  // namespace lucid::cuda
