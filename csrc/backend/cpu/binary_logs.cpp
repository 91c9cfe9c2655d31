// xlogy, logaddexp, logaddexp2.
#include "backend/cpu/kernel_unit.h"

namespace lucid::cpu {

void binary_logs(ops::BinaryOp op, TensorImpl& out, const TensorImpl& a, const TensorImpl& b) {
  run_binary_unit<Unit::Logs>("binary_logs", op, out, a, b);
}

RowKernels binary_logs_rows(ops::BinaryOp op, Dtype dtype) { return binary_rows_unit<Unit::Logs>(op, dtype); }

}  // namespace lucid::cpu
