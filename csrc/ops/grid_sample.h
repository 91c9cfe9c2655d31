// grid_sample for 4-D input (N, C, H, W) and grid (N, Ho, Wo, 2), bilinear or nearest,
// padding zeros / border / reflection (the GridSample primitives); float32 and float64
// on the CPU. The other cases (bicubic, 5-D) are compositions in
// nn/_functional_grid.py. The kernel's backward is not differentiable again: the Python
// grid_sample differentiates its composition when create_graph asks for second order.
#pragma once

#include <utility>

#include "core/tensor_impl.h"

namespace lucid::ops {

// mode: 0 bilinear, 1 nearest; padding: 0 zeros, 1 border, 2 reflection.
TensorPtr grid_sample2d(const TensorPtr& input, const TensorPtr& grid, int mode, int padding, bool align_corners);
// (grad_input, grad_grid) of grid_sample2d for grad_out.
std::pair<TensorPtr, TensorPtr> grid_sample2d_backward(const TensorPtr& grad_out, const TensorPtr& input,
                                                       const TensorPtr& grid, int mode, int padding,
                                                       bool align_corners);

}  // namespace lucid::ops
