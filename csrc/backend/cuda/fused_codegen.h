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

// The fusion pass's FusedVariant (ops/prims/fused.h), called once a fused call at its
// flush: the program's generated kernel (a cudaKernel_t) when it is compiled, else 0
// (interpreted: while it compiles, when compiling is off, or when the program has no
// generated form). The first sight of a program starts its compilation.
uint64_t fused_variant(const ops::FusedProgram& p, int64_t numel, int device);

// Runs the program with `kernel`, the generated kernel fused_variant gave for it.
void launch_generated_fused(const ops::FusedProgram& p, const void* kernel, ops::Outputs outs, ops::Inputs ins,
                            int64_t n, int device, cudaStream_t stream);

// Fused calls run by generated kernels since the process started.
size_t generated_fused_launches();

}  // namespace lucid::cuda
