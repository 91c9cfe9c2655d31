// The Bessel unit's kernels (backend/common/elementwise_units.h): J0, J1, Y0, Y1, K0,
// K1, the scaled K0 and K1 and Airy's Ai of torch.special (ops/special_math.h, in double). The
// ops layer has promoted integer inputs to a floating dtype.
#include "backend/cpu/kernel_unit.h"

namespace lucid::cpu {

void unary_bessel(ops::UnaryOp op, TensorImpl& out, const TensorImpl& a) {
  run_unary_unit<Unit::Bessel>("unary_bessel", op, out, a);
}

}  // namespace lucid::cpu
