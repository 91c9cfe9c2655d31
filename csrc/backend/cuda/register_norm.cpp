// Registers the CUDA kernels of the normalisation primitives (norm.h).
#include "backend/cuda/fused_rows.h"
#include "backend/cuda/norm.h"
#include "backend/cuda/register.h"

namespace lucid::cuda {

void register_norm_kernels() {
  using ops::Prim;
  ops::register_kernel(Prim::NormMoments, DeviceType::GPU, norm_moments_kernel);
  ops::register_kernel(Prim::NormAffine, DeviceType::GPU, norm_affine_kernel);
  ops::register_kernel(Prim::NormGradSums, DeviceType::GPU, norm_grad_sums_kernel);
  ops::register_kernel(Prim::NormAffine2, DeviceType::GPU, norm_affine2_kernel);
  ops::register_kernel(Prim::BatchNormStats, DeviceType::GPU, batch_norm_stats_kernel);
  ops::register_kernel(Prim::BatchNormGradCoeffs, DeviceType::GPU, batch_norm_grad_coeffs_kernel);
  ops::register_kernel(Prim::GroupNormStats, DeviceType::GPU, group_norm_stats_kernel);
  ops::register_kernel(Prim::GroupNormGradCoeffs, DeviceType::GPU, group_norm_grad_coeffs_kernel);
  ops::register_kernel(Prim::NormRows, DeviceType::GPU, norm_rows_kernel);
  ops::register_kernel(Prim::NormRowsBackward, DeviceType::GPU, norm_rows_backward_kernel);
  ops::register_kernel(Prim::FusedNormRows, DeviceType::GPU, fused_norm_rows_kernel);  // Note [Fused norm rows]
  ops::register_kernel(Prim::FusedNormRowsBackward, DeviceType::GPU, fused_norm_rows_backward_kernel);
  ops::register_kernel(Prim::FusedSoftmaxRows, DeviceType::GPU, fused_softmax_rows_kernel);
  ops::register_kernel(Prim::FusedReduceRows, DeviceType::GPU, fused_reduce_rows_kernel);
}

}  // namespace lucid::cuda
