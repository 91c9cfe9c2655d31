// The fused activations' derivatives: _gelu_backward, _gelu_tanh_backward and
// _silu_backward (ops/activation_functors.h). float32 runs lucid's own vector code
// (vec_exp.cpp).
#include "backend/cpu/kernel_unit.h"

namespace lucid::cpu {

void binary_activation(ops::BinaryOp op, TensorImpl& out, const TensorImpl& a, const TensorImpl& b) {
  run_binary_unit<Unit::Activation>("binary_activation", op, out, a, b);
}

RowKernels binary_activation_rows(ops::BinaryOp op, Dtype dtype) {
  return binary_rows_unit<Unit::Activation>(op, dtype);
}

}  // namespace lucid::cpu
