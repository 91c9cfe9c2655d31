// The CPU backend's entries in the (primitive, device) kernel table (ops/primitive.h).
// Called once at import (bindings/module.cpp) and by the C++ tests' main: the library
// is static, so registration is an explicit call, not a static initialiser the linker
// could drop.
#pragma once

namespace lucid::cpu {

void register_kernels();

// One per family, each in register_<family>.cpp beside the kernels it adapts.
void register_elementwise_kernels();
void register_fused_kernels();      // fused_elementwise.cpp
void register_reduce_kernels();
void register_linalg_kernels();
void register_decompose_kernels();  // lapack.cpp: the decompositions
void register_fft_kernels();        // fft.cpp: MKL's DFTI
void register_sparse_kernels();     // sparse.cpp
void register_spatial_kernels();
void register_index_kernels();
void register_shape_kernels();
void register_creation_kernels();
void register_norm_kernels();
void register_seq_kernels();
void register_attention_kernels();  // attention.cpp, called by register_seq_kernels
void register_rope_kernels();       // rope.cpp, called by register_seq_kernels
void register_optim_kernels();
void register_random_kernels();

}  // namespace lucid::cpu
