// Unary trigonometric and hyperbolic kernels (tan ... atanh): inputs already promoted to a floating dtype.
#include "backend/cpu/kernel_unit.h"

namespace lucid::cpu {

void unary_trig(ops::UnaryOp op, TensorImpl& out, const TensorImpl& a) {
  run_unary_unit<Unit::Trig>("unary_trig", op, out, a);
}

RowKernels unary_trig_rows(ops::UnaryOp op, Dtype dtype) { return unary_rows_unit<Unit::Trig>(op, dtype); }

}  // namespace lucid::cpu
