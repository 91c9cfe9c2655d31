// add, sub, mul, div: the hot arithmetic ops.
#include "backend/cpu/kernel_unit.h"

namespace lucid::cpu {

void binary_arith(ops::BinaryOp op, TensorImpl& out, const TensorImpl& a, const TensorImpl& b) {
  run_binary_unit<Unit::Arith>("binary_arith", op, out, a, b);
}

RowKernels binary_arith_rows(ops::BinaryOp op, Dtype dtype) { return binary_rows_unit<Unit::Arith>(op, dtype); }

}  // namespace lucid::cpu
