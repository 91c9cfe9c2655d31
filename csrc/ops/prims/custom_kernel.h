// A kernel compiled from a user's CUDA source (lucid.fast.cuda_kernel, MLX's
// mx.fast.cuda_kernel): launched as the user sized it, its parameters the tensors'
// addresses and, where the source reads them, their shapes, strides and ranks. Recorded
// and run like any op (so it keeps its place among lazy GPU ops and in CUDA graphs). The
// kernel is the backend's (backend/cuda/custom_kernel.cpp); there is no CPU kernel.
#pragma once

#include <cstdint>
#include <vector>

#include "ops/primitive.h"

namespace lucid::ops {

inline constexpr int kCustomKernelMaxDims = 16;  // the rank a shape or strides parameter holds

// One parameter of the kernel's signature, in order. `tensor` indexes the call's inputs
// then its outputs (ins[0..], then outs[0..]).
struct CustomKernelParam {
  enum Kind : uint8_t { Pointer, Shape, Strides, Ndim } kind = Pointer;
  uint8_t tensor = 0;
};

// outs: the outputs, allocated (and filled with an initial value) by the caller; ins:
// the inputs. The kernel runs ceil(grid / block) blocks of `block` threads a dimension.
struct CustomKernel : PrimitiveOf<Prim::CustomKernel, CustomKernel> {
  const void* kernel = nullptr;  // the compiled kernel (a cudaKernel_t)
  unsigned grid[3] = {1, 1, 1}, block[3] = {1, 1, 1};
  unsigned shared_memory = 0;
  std::vector<CustomKernelParam> params;
  const char* name() const override { return "fast.cuda_kernel"; }
  uint64_t signature() const override {
    uint64_t h = reinterpret_cast<uintptr_t>(kernel);
    for (unsigned v : {grid[0], grid[1], grid[2], block[0], block[1], block[2], shared_memory})
      h = (h ^ v) * 0x100000001b3ull;
    return h;
  }
};

}  // namespace lucid::ops
