// Winograd F(2x2, 3x3) for 3x3, stride-1 float32 2-d convolutions with enough
// channels (Note [Winograd convolution] in conv_winograd.cpp). The direct
// convolution (conv_direct.h) hands these to it, forward and (as a stride-1
// conv_transpose) input gradient.
#pragma once

#include <cstdint>

#include "backend/cpu/conv_kernels.h"

namespace lucid::cpu {

// Whether conv_winograd_forward computes this convolution big [c_big] -> small
// [c_small]: 2-d, 3x3, stride 1, undilated, at least kWinogradMinChannels channels a
// group on both sides, images of at least one product tile of 2x2 blocks, and the
// AVX-512 product tile on this CPU.
bool conv_winograd_suits(const ConvGeom& g, int64_t c_big, int64_t c_small);

// small [N, Cs, H, W] = conv(big [N, Cb, ...], w [Cs, Cb/G, 3, 3]) (+ bias), as
// conv_forward. Weights with an inf or NaN, and samples with one, go through the
// direct product instead, so non-finite values propagate as a direct sum does.
void conv_winograd_forward(const float* big, const float* w, const float* bias, float* small, int64_t n,
                           int64_t c_big, int64_t c_small, const ConvGeom& g);

}  // namespace lucid::cpu
