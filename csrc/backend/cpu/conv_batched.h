// Convolutions of small images with many channels as one product over a chunk of
// the batch (Note [Batched small images] in conv_batched.cpp). Same buffers and
// weight layout as conv_forward / conv_transpose_forward / conv_weight_grad in
// conv_kernels.h, which hand these the geometries that suit them.
#pragma once

#include <cstdint>

#include "backend/cpu/conv_kernels.h"

namespace lucid::cpu {

// Whether a batch of n images is better computed chunk by chunk than image by image:
// more than one image, few output positions per image, and a weight matrix per
// group large enough that reading it once per image is what bounds the time.
bool conv_batched_suits(const ConvGeom& g, int64_t n, int64_t c_big, int64_t c_small);

template <typename T>
void conv_batched_forward(const T* big, const T* w, const T* bias, T* small, int64_t n, int64_t c_big,
                          int64_t c_small, const ConvGeom& g);
template <typename T>
void conv_batched_transpose(const T* small, const T* w, const T* bias, T* big, int64_t n, int64_t c_big,
                            int64_t c_small, const ConvGeom& g);
template <typename T>
void conv_batched_weight_grad(const T* big, const T* small, T* gw, int64_t n, int64_t c_big, int64_t c_small,
                              const ConvGeom& g);

}  // namespace lucid::cpu
