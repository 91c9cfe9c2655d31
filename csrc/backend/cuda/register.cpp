#include "backend/cuda/register.h"

#include "backend/cuda/flush_graphs.h"
#include "backend/cuda/fused_codegen.h"
#include "backend/cuda/fused_rows.h"
#include "backend/cuda/runtime.h"
#include "core/gpu_runtime.h"
#include "ops/fusion.h"

namespace lucid::cuda {

void register_runtime() {
  // Leaked on purpose: core keeps a raw pointer to the runtime, and tensors freed
  // during interpreter shutdown (after static destructors ran) may still call into
  // it. The object holds no resources of its own, so leaking it costs nothing.
  static CudaRuntime* runtime = new CudaRuntime();
  register_gpu_runtime(runtime);
  pending::set_list_runner(&run_list_as_graph);  // Note [Flush graphs]
  pending::set_replay_runner(&replay_fixed);     // Note [Fixed replays]
  ops::set_fused_variant(fused_variant);          // Note [Elementwise fusion]
  // Note [Fused norm rows]
  ops::set_fused_rows_variants(
      {fused_rows_variant, fused_rows_backward_variant, fused_softmax_variant, fused_reduce_variant});
}

void register_kernels() {
  register_elementwise_kernels();
  register_fused_kernels();
  register_creation_kernels();
  register_reduce_kernels();
  register_cross_entropy_kernels();
  register_extremum_kernels();
  register_random_kernels();
  register_linalg_kernels();
  register_index_kernels();
  register_index_write_kernels();
  register_shape_kernels();
  register_norm_kernels();
  register_conv_kernels();
  register_reduce_rows_kernels();
  register_scan_kernels();
  register_conj_kernels();
  register_seq_kernels();
  register_optim_kernels();
  register_pool_kernels();
  register_sort_kernels();
  register_attention_kernels();
  register_rope_kernels();
  register_custom_kernels();
  register_decompose_kernels();
  register_fft_kernels();
  register_sparse_kernels();
}

}  // namespace lucid::cuda
