// maximum, minimum (NaN from either side wins).
#include "backend/cpu/kernel_unit.h"

namespace lucid::cpu {

void binary_extremum(ops::BinaryOp op, TensorImpl& out, const TensorImpl& a, const TensorImpl& b) {
  run_binary_unit<Unit::Extremum>("binary_extremum", op, out, a, b);
}

}  // namespace lucid::cpu
