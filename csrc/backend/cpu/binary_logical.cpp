// logical_and, logical_or, logical_xor: any dtypes in, bool out.
#include "backend/cpu/kernel_unit.h"

namespace lucid::cpu {

void binary_logical(ops::BinaryOp op, TensorImpl& out, const TensorImpl& a, const TensorImpl& b) {
  run_binary_unit<Unit::Logical>("binary_logical", op, out, a, b);
}

}  // namespace lucid::cpu
