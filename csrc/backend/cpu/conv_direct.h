// Stride-1 float32 convolutions as implicit products over the padded image, without
// a column matrix (Note [Direct convolution] in conv_direct.cpp). Same buffers and
// weight layout as conv_forward / conv_transpose_forward in conv_kernels.h.
#pragma once

#include <cstdint>

#include "backend/cpu/conv_kernels.h"

namespace lucid::cpu {

// Whether conv_direct_forward computes conv_forward for this geometry: stride 1 in
// every dim, and lucid's own GEMM runs on this CPU for the product's shape.
bool conv_direct_suits(const ConvGeom& g, int64_t c_small);
void conv_direct_forward(const float* big, const float* w, const float* bias, float* small, int64_t n,
                         int64_t c_big, int64_t c_small, const ConvGeom& g);

// The same for conv_weight_grad (its product is [C_big/g * K, C_small/g]).
bool conv_direct_weight_grad_suits(const ConvGeom& g, int64_t c_big, int64_t c_small);
void conv_direct_weight_grad(const float* big, const float* small, float* gw, int64_t n, int64_t c_big,
                             int64_t c_small, const ConvGeom& g);

// The same for conv_transpose_forward (also conv's input gradient): stride 1, and
// padding at most dil * (k - 1) in every dim.
bool conv_direct_transpose_suits(const ConvGeom& g, int64_t c_big);
void conv_direct_transpose(const float* small, const float* w, const float* bias, float* big, int64_t n,
                           int64_t c_big, int64_t c_small, const ConvGeom& g);

}  // namespace lucid::cpu
