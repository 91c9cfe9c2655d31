// Normalisation layers with a fused CPU kernel: batch_norm (also what instance_norm
// runs on a reshaped view, in Python) and group_norm. Each records one node whose
// VJP is a fused kernel, or, under create_graph, the same gradient written with
// differentiable ops (so double backward works).
#pragma once

#include "core/tensor_impl.h"

namespace lucid::ops {

// input [N, C, *]. Batch statistics when `training` (and then running_mean /
// running_var, when given, are updated in place: r = (1 - momentum) r + momentum s,
// with the unbiased variance, as torch); the running statistics otherwise.
// weight, bias, running_mean, running_var may be null.
TensorPtr batch_norm(const TensorPtr& input, const TensorPtr& weight, const TensorPtr& bias,
                     const TensorPtr& running_mean, const TensorPtr& running_var, bool training, double momentum,
                     double eps);

// input [N, C, *], statistics over each group of C / num_groups channels of a sample.
TensorPtr group_norm(const TensorPtr& input, int64_t num_groups, const TensorPtr& weight, const TensorPtr& bias,
                     double eps);

}  // namespace lucid::ops
