// The Special unit's binary kernels (backend/common/elementwise_units.h): the Hurwitz
// zeta (ops/special_math.h; integer inputs promoted to a floating dtype by the ops
// layer), gcd and lcm (integers) and nextafter.
#include "backend/cpu/kernel_unit.h"

namespace lucid::cpu {

void binary_special(ops::BinaryOp op, TensorImpl& out, const TensorImpl& a, const TensorImpl& b) {
  run_binary_unit<Unit::Special>("binary_special", op, out, a, b);
}

}  // namespace lucid::cpu
