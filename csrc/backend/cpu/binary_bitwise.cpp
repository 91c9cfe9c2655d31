// Bitwise and shift kernels: integer and bool dtypes only.
#include "backend/cpu/kernel_unit.h"

namespace lucid::cpu {

void binary_bitwise(ops::BinaryOp op, TensorImpl& out, const TensorImpl& a, const TensorImpl& b) {
  run_binary_unit<Unit::Bitwise>("binary_bitwise", op, out, a, b);
}

}  // namespace lucid::cpu
