// The elementwise ops: dtype promotion, broadcasting and device checks around the
// backend kernels. One entry point per arity; the op comes from elementwise_table.h.
#pragma once

#include "core/tensor_impl.h"
#include "ops/elementwise_table.h"

namespace lucid::ops {

// An operand: a tensor, or a Python number (a "wrapped number" in promotion).
struct Operand {
  TensorPtr tensor;  // null for a number
  Scalar number;
};

Shape broadcast_shapes(const Shape& a, const Shape& b);  // RuntimeError when incompatible

TensorPtr binary(BinaryOp op, const Operand& a, const Operand& b);
TensorPtr unary(UnaryOp op, const TensorPtr& a);

const char* op_name(BinaryOp op);
const char* op_name(UnaryOp op);

}  // namespace lucid::ops
