// Rounding, frac, square, relu and bitwise_not: out has the operand's dtype.
#include "backend/cpu/kernel_unit.h"

namespace lucid::cpu {

void unary_rounding(ops::UnaryOp op, TensorImpl& out, const TensorImpl& a) {
  run_unary_unit<Unit::Rounding>("unary_rounding", op, out, a);
}

RowKernels unary_rounding_rows(ops::UnaryOp op, Dtype dtype) { return unary_rows_unit<Unit::Rounding>(op, dtype); }

}  // namespace lucid::cpu
