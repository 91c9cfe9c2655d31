// maximum, minimum (NaN from either side wins).
#include "backend/cpu/kernel_unit.h"

namespace lucid::cpu {

void binary_extremum(ops::BinaryOp op, TensorImpl& out, const TensorImpl& a, const TensorImpl& b) {
  run_binary_unit<Unit::Extremum>("binary_extremum", op, out, a, b);
}

RowKernels binary_extremum_rows(ops::BinaryOp op, Dtype dtype) { return binary_rows_unit<Unit::Extremum>(op, dtype); }

}  // namespace lucid::cpu
