// Comparison kernels: computed in the operands' common dtype, written as bool.
#include "backend/cpu/elementwise.h"
#include "backend/cpu/elementwise_loops.h"
#include "ops/elementwise.h"

namespace lucid::cpu {

void binary_compare(ops::BinaryOp op, TensorImpl& out, const TensorImpl& a, const TensorImpl& b) {
  switch (op) {
#define LUCID_CASE(name, Fn, rule, operands)                                \
  case ops::BinaryOp::Fn:                                                   \
    if constexpr (binary_unit(ops::BinaryOp::Fn) == Unit::Compare)            \
      return run_binary<ops::fn::Fn>(#name, out, a, b);                     \
    break;
    LUCID_BINARY_OPS(LUCID_CASE)
#undef LUCID_CASE
  }
  fail<RuntimeError>("internal: binary_compare given ", ops::op_name(op));
}

}  // namespace lucid::cpu
