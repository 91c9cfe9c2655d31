// Unary float math kernels (exp2 ... logit, without the trigonometric ones): the ops layer has promoted integer inputs to a floating dtype.
#include "backend/cpu/kernel_unit.h"

namespace lucid::cpu {

void unary_math(ops::UnaryOp op, TensorImpl& out, const TensorImpl& a) {
  run_unary_unit<Unit::Math>("unary_math", op, out, a);
}

RowKernels unary_math_rows(ops::UnaryOp op, Dtype dtype) { return unary_rows_unit<Unit::Math>(op, dtype); }

}  // namespace lucid::cpu
