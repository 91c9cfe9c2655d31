// The CUDA kernels of the normalisation primitives (ops/prims/norm.h, and NormRows /
// NormRowsBackward of ops/prims/seq.h), split over three files so that each compiles
// quickly: norm_units.cu (the unit passes of batch_norm and group_norm),
// norm_stats.cu (the float64 per-channel / per-group arithmetic between them) and
// norm_rows.cu (layer_norm / rms_norm). register_norm.cpp puts them in the table.
#pragma once

#include "ops/primitive.h"

namespace lucid::cuda {

void norm_moments_kernel(const ops::Primitive& p, ops::Outputs outs, ops::Inputs ins);
void norm_affine_kernel(const ops::Primitive& p, ops::Outputs outs, ops::Inputs ins);
void norm_grad_sums_kernel(const ops::Primitive& p, ops::Outputs outs, ops::Inputs ins);
void norm_affine2_kernel(const ops::Primitive& p, ops::Outputs outs, ops::Inputs ins);

void batch_norm_stats_kernel(const ops::Primitive& p, ops::Outputs outs, ops::Inputs ins);
void batch_norm_grad_coeffs_kernel(const ops::Primitive& p, ops::Outputs outs, ops::Inputs ins);
void group_norm_stats_kernel(const ops::Primitive& p, ops::Outputs outs, ops::Inputs ins);
void group_norm_grad_coeffs_kernel(const ops::Primitive& p, ops::Outputs outs, ops::Inputs ins);

void norm_rows_kernel(const ops::Primitive& p, ops::Outputs outs, ops::Inputs ins);
void norm_rows_backward_kernel(const ops::Primitive& p, ops::Outputs outs, ops::Inputs ins);

}  // namespace lucid::cuda
