// The generated kernels of fused norms and softmax (Note [Fused norm rows],
// ops/fusion_rows.cpp): norm_rows_forward.cuh's (softmax_rows_forward.cuh's) text with
// the prologue's chain in its loads and the epilogue's in its stores, compiled with
// NVRTC and cached like the fused elementwise kernels (Note [Generated kernels]).
#pragma once

#include <cstddef>
#include <string>

#include "ops/primitive.h"
#include "ops/prims/fused_rows.h"

namespace lucid::cuda {

// The kernel's source, or "" when a chain has an op without a generated form.
// The forward takes the layout norm_forward_layout gives its rows ("" for rows read
// again at each pass). The backward's: `threads` a row (32 or 256, norm_row_threads),
// `cached` elements of a thread's share in registers (8 or 32, norm_backward_cached).
std::string fused_rows_source(const ops::FusedNormRows& p);
std::string fused_rows_backward_source(const ops::FusedNormRowsBackward& p, int threads, int cached);
// The softmax's, in the norm forward's layout.
std::string fused_softmax_source(const ops::FusedSoftmaxRows& p);
// The row sum's, walking rows as the unfused sum does ("" for sums it splits).
std::string fused_reduce_source(const ops::FusedReduceRows& p);

// The pass's FusedRowsVariants: the compiled kernel (a cudaKernel_t) for the call's
// rows, or 0 while it compiles, when compiling is off, for rows too long to stage in
// shared memory, or for a chain without a generated form. The first sight of a kernel
// starts its compilation.
uint64_t fused_rows_variant(const ops::FusedNormRows& p, int device);
uint64_t fused_rows_backward_variant(const ops::FusedNormRowsBackward& p, int device);
uint64_t fused_softmax_variant(const ops::FusedSoftmaxRows& p, int device);
uint64_t fused_reduce_variant(const ops::FusedReduceRows& p, int device);

// The kernels of FusedNormRows, FusedNormRowsBackward, FusedSoftmaxRows and
// FusedReduceRows calls
// (registered by register_norm_kernels); the norm backward's runs the column sums of
// d weight and d bias after the generated kernel.
void fused_norm_rows_kernel(const ops::Primitive& p, ops::Outputs outs, ops::Inputs ins);
void fused_norm_rows_backward_kernel(const ops::Primitive& p, ops::Outputs outs, ops::Inputs ins);
void fused_softmax_rows_kernel(const ops::Primitive& p, ops::Outputs outs, ops::Inputs ins);
void fused_reduce_rows_kernel(const ops::Primitive& p, ops::Outputs outs, ops::Inputs ins);

// FusedNormRows / FusedNormRowsBackward / FusedSoftmaxRows / FusedReduceRows calls run
// since the process started.
size_t fused_rows_launches();
size_t fused_rows_backward_launches();
size_t fused_softmax_launches();
size_t fused_reduce_launches();

}  // namespace lucid::cuda
