// pow, fmax, fmin, atan2, hypot (elementwise_functors.h).
#include "backend/cpu/kernel_unit.h"

namespace lucid::cpu {

void binary_math(ops::BinaryOp op, TensorImpl& out, const TensorImpl& a, const TensorImpl& b) {
  run_binary_unit<Unit::Math>("binary_math", op, out, a, b);
}

RowKernels binary_math_rows(ops::BinaryOp op, Dtype dtype) { return binary_rows_unit<Unit::Math>(op, dtype); }

}  // namespace lucid::cpu
