// Bitwise and shift kernels: integer and bool dtypes only.
#include "backend/cpu/elementwise.h"
#include "backend/cpu/elementwise_loops.h"
#include "ops/elementwise.h"

namespace lucid::cpu {

void binary_bitwise(ops::BinaryOp op, TensorImpl& out, const TensorImpl& a, const TensorImpl& b) {
  switch (op) {
#define LUCID_CASE(name, Fn, rule, operands)                                \
  case ops::BinaryOp::Fn:                                                   \
    if constexpr (binary_unit(ops::BinaryOp::Fn) == Unit::Bitwise)            \
      return run_binary<ops::fn::Fn>(#name, out, a, b);                     \
    break;
    LUCID_BINARY_OPS(LUCID_CASE)
#undef LUCID_CASE
  }
  fail<RuntimeError>("internal: binary_bitwise given ", ops::op_name(op));
}

}  // namespace lucid::cpu
