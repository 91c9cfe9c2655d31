// Convolution, unfold/fold and pooling with PyTorch's semantics, all differentiable.
// Spatial ranks 1-3; their primitives are in ops/prims/spatial.h. Vectors of per-dim
// parameters (stride, padding, ...) have one entry per spatial dim.
#pragma once

#include <optional>
#include <utility>
#include <vector>

#include "core/tensor_impl.h"

namespace lucid::ops {

using IntVec = std::vector<int64_t>;

// lucid.backends.cudnn.allow_tf32: float32 convolutions (and their gradients) on the
// GPU may round their products to TF32. Default False, exact, unlike torch's True: lucid
// keeps float32 convolutions and products alike exact unless asked (docs/ENGINE.md, GPU).
void set_conv_allow_tf32(bool allow);
bool conv_allow_tf32();
// Whether GPU convolutions take only the algorithms cuDNN marks deterministic (the same
// bits every run): lucid.backends.cudnn.deterministic or use_deterministic_algorithms,
// both False by default, as torch's; then cuDNN's fastest (its backward passes may sum
// with atomics).
void set_conv_deterministic(bool deterministic);
bool conv_deterministic();

// aten::convolution: input [N, C, *sp] or unbatched [C, *sp]; weight [Cout, Cin/g, *k]
// (transposed: [Cin, Cout/g, *k]); bias [Cout] or null. `name` ("conv2d", ...) is
// used in error messages.
TensorPtr convolution(const char* name, const TensorPtr& input, const TensorPtr& weight, const TensorPtr& bias,
                      const IntVec& stride, const IntVec& padding, const IntVec& dilation, bool transposed,
                      const IntVec& output_padding, int64_t groups);

// F.unfold on [N, C, H, W] (or [C, H, W]) -> [N, C*kh*kw, L]; F.fold the adjoint.
TensorPtr unfold_im2col(const TensorPtr& input, const IntVec& kernel, const IntVec& dilation, const IntVec& padding,
                        const IntVec& stride);
TensorPtr fold_col2im(const TensorPtr& input, const IntVec& output_size, const IntVec& kernel,
                      const IntVec& dilation, const IntVec& padding, const IntVec& stride);

// Pools over the last kernel.size() dims of input ([N, C, *sp] or [C, *sp]).
// max_pool returns (values, indices); indices are flat positions in the spatial dims.
std::pair<TensorPtr, TensorPtr> max_pool(const char* name, const TensorPtr& input, const IntVec& kernel,
                                         const IntVec& stride, const IntVec& padding, const IntVec& dilation,
                                         bool ceil_mode);
TensorPtr avg_pool(const char* name, const TensorPtr& input, const IntVec& kernel, const IntVec& stride,
                   const IntVec& padding, bool ceil_mode, bool count_include_pad,
                   std::optional<int64_t> divisor_override);
TensorPtr adaptive_avg_pool(const char* name, const TensorPtr& input, const IntVec& output_size);
std::pair<TensorPtr, TensorPtr> adaptive_max_pool(const char* name, const TensorPtr& input, const IntVec& output_size);

}  // namespace lucid::ops
