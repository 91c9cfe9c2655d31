#include "backend/cpu/register.h"

namespace lucid::cpu {

void register_kernels() {
  register_elementwise_kernels();
  register_fused_kernels();
  register_reduce_kernels();
  register_linalg_kernels();
  register_decompose_kernels();
  register_fft_kernels();
  register_sparse_kernels();
  register_spatial_kernels();
  register_index_kernels();
  register_shape_kernels();
  register_creation_kernels();
  register_norm_kernels();
  register_seq_kernels();
  register_optim_kernels();
  register_random_kernels();
}

}  // namespace lucid::cpu
