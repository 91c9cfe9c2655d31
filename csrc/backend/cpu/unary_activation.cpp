// gelu (exact and tanh) and silu: the fused activations (ops/activation_functors.h).
// float32 runs lucid's own vector code (vec_exp.cpp).
#include "backend/cpu/kernel_unit.h"

namespace lucid::cpu {

void unary_activation(ops::UnaryOp op, TensorImpl& out, const TensorImpl& a) {
  run_unary_unit<Unit::Activation>("unary_activation", op, out, a);
}

RowKernels unary_activation_rows(ops::UnaryOp op, Dtype dtype) {
  return unary_rows_unit<Unit::Activation>(op, dtype);
}

}  // namespace lucid::cpu
