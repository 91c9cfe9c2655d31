// The predicates isnan ... logical_not: any dtype in, bool out.
#include "backend/cpu/kernel_unit.h"

namespace lucid::cpu {

void unary_predicate(ops::UnaryOp op, TensorImpl& out, const TensorImpl& a) {
  run_unary_unit<Unit::Predicate>("unary_predicate", op, out, a);
}

}  // namespace lucid::cpu
