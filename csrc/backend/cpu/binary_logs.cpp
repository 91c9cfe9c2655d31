// xlogy, logaddexp, logaddexp2.
#include "backend/cpu/kernel_unit.h"

namespace lucid::cpu {

void binary_logs(ops::BinaryOp op, TensorImpl& out, const TensorImpl& a, const TensorImpl& b) {
  run_binary_unit<Unit::Logs>("binary_logs", op, out, a, b);
}

}  // namespace lucid::cpu
