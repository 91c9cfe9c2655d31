// grid_sample's 2-D kernels (bilinear and nearest; zeros / border / reflection padding),
// with ATen's coordinate formulas (ATen/native/GridSampler.h). input [N, C, H, W], grid
// [N, P, 2] (x, y), out / grad_out [N, C, P]; all contiguous.
#pragma once

#include <cstdint>

#include "backend/common/grid_coords.h"

namespace lucid::cpu {

using backend::GridSampleArgs;

template <typename T>
void grid_sample2d_forward(T* out, const T* input, const T* grid, const GridSampleArgs& a);

// grad_input (zeroed by the caller) and grad_grid (written) from grad_out.
template <typename T>
void grid_sample2d_backward(T* grad_input, T* grad_grid, const T* grad_out, const T* input, const T* grid,
                            const GridSampleArgs& a);

}  // namespace lucid::cpu
