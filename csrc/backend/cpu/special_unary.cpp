// The special functions' kernels (unit Special, backend/common/elementwise_units.h;
// the functions in ops/special_math.h): lgamma, digamma, i0, i0e, i1, i1e and erfcx.
// The ops layer has promoted integer inputs to a floating dtype. The unit's binary
// ops are in special_binary.cpp (one unit took ~24 s to compile).
#include "backend/cpu/kernel_unit.h"

namespace lucid::cpu {

void unary_special(ops::UnaryOp op, TensorImpl& out, const TensorImpl& a) {
  run_unary_unit<Unit::Special>("unary_special", op, out, a);
}

}  // namespace lucid::cpu
