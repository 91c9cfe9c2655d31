// Generated kernels for fused elementwise programs (Note [Elementwise fusion],
// Note [Generated kernels]): each program becomes straight-line CUDA code, compiled
// with NVRTC, which runs a chain at the memory's speed where the interpreter
// (fused_elementwise.cu) spends its time choosing instructions.
#pragma once

#include <cstddef>
#include <string>

#include <cuda_runtime_api.h>

#include "ops/primitive.h"
#include "ops/prims/fused.h"

namespace lucid::cuda {

// The kernel's source, or "" when one of the program's ops has no generated form
// (those programs are always interpreted). `index32`: every index fits in an int.
std::string fused_kernel_source(const ops::FusedProgram& p, bool index32);

// Runs the program with its generated kernel when that kernel is compiled; false (and
// nothing launched) while it compiles, when it cannot be generated, or when compiling
// is off: the caller then interprets the program.
bool launch_generated_fused(const ops::FusedProgram& p, ops::Outputs outs, ops::Inputs ins, int64_t n, int device,
                            cudaStream_t stream);

// The fusion pass's FusedVariant (ops/prims/fused.h): 1 when the program's generated
// kernel is compiled (starting its compilation on first sight), else 0.
uint64_t fused_variant(const ops::FusedProgram& p, int64_t numel, int device);

// Fused calls run by generated kernels since the process started.
size_t generated_fused_launches();

}  // namespace lucid::cuda
