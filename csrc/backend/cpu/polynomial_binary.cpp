// The Polynomial unit's kernels (backend/common/elementwise_units.h): torch.special's
// orthogonal polynomial families (ops/polynomial_math.h), integer inputs promoted to a
// floating dtype by the ops layer.
#include "backend/cpu/kernel_unit.h"

namespace lucid::cpu {

void binary_polynomial(ops::BinaryOp op, TensorImpl& out, const TensorImpl& a, const TensorImpl& b) {
  run_binary_unit<Unit::Polynomial>("binary_polynomial", op, out, a, b);
}

}  // namespace lucid::cpu
