// Entry point of the CUDA backend. The Python bindings call register_runtime() at
// module import (under #ifdef LUCID_WITH_CUDA); from then on lucid::gpu_runtime()
// in core returns the CUDA runtime.
#pragma once

namespace lucid {
class TensorImpl;
}

namespace lucid::cuda {

// Registers the process-wide CudaRuntime with core. Cheap and idempotent, and
// initialises no CUDA context: a CUDA build imports fine on a machine without a GPU
// (device_count() then reports 0) and creates contexts only on first GPU use.
void register_runtime();

// Fills the GPU column of the (primitive, device) kernel table (ops/primitive.h).
// Also initialises no CUDA context.
void register_kernels();
// The version of the cuDNN that GPU convolutions use (e.g. 90100), loading it if it is
// not yet; 0 when libcudnn.so.9 cannot be loaded (lucid.backends.cudnn.version()).
int cudnn_version();
// The CUDA runtime lucid was built with (CUDART_VERSION, e.g. 13000): lucid.version.cuda.
int cuda_runtime_version();

// One per family, each in register_<family>.cpp beside the kernels it adapts.
void register_elementwise_kernels();
void register_fused_kernels();       // fused_elementwise.cu: chains fused at a flush
void register_creation_kernels();
void register_reduce_kernels();
void register_cross_entropy_kernels();  // cross_entropy.cu: the CrossEntropy primitives
void register_extremum_kernels();  // reduce_extremum.cu: max/min with or without indices
void register_random_kernels();
void register_linalg_kernels();
void register_index_kernels();
void register_index_write_kernels();
void register_shape_kernels();
void register_norm_kernels();
void register_conv_kernels();
void register_reduce_rows_kernels();
void register_scan_kernels();
void register_conj_kernels();
void register_seq_kernels();
void register_optim_kernels();
void register_pool_kernels();  // pool.cu: pooling, resample taps, grid_sample
void register_sort_kernels();  // sort.cu: SortRows, SearchSorted
void register_attention_kernels();  // attention.cpp: cuDNN's flash attention
void register_rope_kernels();       // rope.cu: lucid.fast.rope
void register_custom_kernels();     // custom_kernel.cpp: lucid.fast.cuda_kernel
void register_decompose_kernels();  // decompose.cpp: cuSOLVER's decompositions
void register_fft_kernels();        // fft.cpp: cuFFT
void register_sparse_kernels();     // sparse.cpp: cuSPARSE

// Whether AttentionForward and AttentionBackward of these GPU operands (as laid out,
// ops::attention_operand) run as cuDNN's flash attention: 16-bit, head dims cuDNN
// takes, a cuDNN that makes both plans (made and cached here, so that a backward never
// meets a graph cuDNN rejects). False, never an error, where not.
// (bias: the additive mask, ops::attention_fused's, or null; dropout: its probability)
bool attention_supported(const TensorImpl& q, const TensorImpl& k, const TensorImpl& v, bool causal,
                         const TensorImpl* bias = nullptr, double dropout = 0.0);

}  // namespace lucid::cuda
