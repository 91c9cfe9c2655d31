// CPU kernels of the elementwise ops (ops/elementwise_table.h). Operands are host
// tensors already broadcast to out's shape and cast to the op's compute dtype; out
// is that dtype, or bool for comparisons. Kernels write bytes only (no version bump).
#pragma once

#include "core/tensor_impl.h"
#include "ops/elementwise_table.h"

namespace lucid::cpu {

void binary_arith(ops::BinaryOp op, TensorImpl& out, const TensorImpl& a, const TensorImpl& b);
void binary_compare(ops::BinaryOp op, TensorImpl& out, const TensorImpl& a, const TensorImpl& b);
void unary(ops::UnaryOp op, TensorImpl& out, const TensorImpl& a);
void complex_abs(TensorImpl& out, const TensorImpl& a);  // complex64 -> float32

}  // namespace lucid::cpu
