// The special functions' kernels (unit Special, backend/common/elementwise_units.h;
// the functions in ops/special_math.h): lgamma, digamma, i0, i0e, i1, i1e, erfcx and
// the binary zeta (integer inputs promoted to a floating dtype by the ops layer), and
// the number-theoretic and representation ops gcd, lcm (integers) and nextafter.
#include "backend/cpu/kernel_unit.h"

namespace lucid::cpu {

void unary_special(ops::UnaryOp op, TensorImpl& out, const TensorImpl& a) {
  run_unary_unit<Unit::Special>("unary_special", op, out, a);
}

void binary_special(ops::BinaryOp op, TensorImpl& out, const TensorImpl& a, const TensorImpl& b) {
  run_binary_unit<Unit::Special>("binary_special", op, out, a, b);
}

}  // namespace lucid::cpu
