// floor_divide, the truncating division, remainder and fmod.
#include "backend/cpu/kernel_unit.h"

namespace lucid::cpu {

void binary_division(ops::BinaryOp op, TensorImpl& out, const TensorImpl& a, const TensorImpl& b) {
  run_binary_unit<Unit::Division>("binary_division", op, out, a, b);
}

RowKernels binary_division_rows(ops::BinaryOp op, Dtype dtype) { return binary_rows_unit<Unit::Division>(op, dtype); }

}  // namespace lucid::cpu
