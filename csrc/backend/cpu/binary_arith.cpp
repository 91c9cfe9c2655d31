// Arithmetic binary kernels. Comparisons live in binary_compare.cpp so that each
// translation unit instantiates about half of the op x dtype loops; both switch
// over the one op table and keep the entries of their own rule.
#include "backend/cpu/elementwise.h"
#include "backend/cpu/elementwise_loops.h"
#include "ops/elementwise.h"

namespace lucid::cpu {

void binary_arith(ops::BinaryOp op, TensorImpl& out, const TensorImpl& a, const TensorImpl& b) {
  switch (op) {
#define LUCID_CASE(name, Fn, rule, operands)                                \
  case ops::BinaryOp::Fn:                                                   \
    if constexpr (binary_unit(ops::BinaryOp::Fn) == Unit::Arith)            \
      return run_binary<ops::fn::Fn>(#name, out, a, b);                     \
    break;
    LUCID_BINARY_OPS(LUCID_CASE)
#undef LUCID_CASE
  }
  fail<RuntimeError>("internal: binary_arith given ", ops::op_name(op));
}

}  // namespace lucid::cpu
