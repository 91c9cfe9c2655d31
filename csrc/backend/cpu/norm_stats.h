// CPU kernels of the float64 arithmetic between batch_norm's and group_norm's unit
// passes (ops/prims/norm.h): Chan's combination of unit moments into channel or group
// statistics, the running statistics, and the fused backward's coefficients.
// Registered by register_norm.cpp.
#pragma once

#include "ops/primitive.h"

namespace lucid::cpu {

void batch_norm_stats(const ops::Primitive& p, ops::Outputs outs, ops::Inputs ins);
void batch_norm_grad_coeffs(const ops::Primitive& p, ops::Outputs outs, ops::Inputs ins);
void group_norm_stats(const ops::Primitive& p, ops::Outputs outs, ops::Inputs ins);
void group_norm_grad_coeffs(const ops::Primitive& p, ops::Outputs outs, ops::Inputs ins);

}  // namespace lucid::cpu
