// eq, ne: computed in the operands' common dtype, written as bool.
#include "backend/cpu/kernel_unit.h"

namespace lucid::cpu {

void binary_equality(ops::BinaryOp op, TensorImpl& out, const TensorImpl& a, const TensorImpl& b) {
  run_binary_unit<Unit::Equality>("binary_equality", op, out, a, b);
}

}  // namespace lucid::cpu
