// Unary float math kernels (exp2 ... logit): the ops layer has promoted integer
// inputs to a floating dtype.
#include "backend/cpu/elementwise.h"
#include "backend/cpu/elementwise_loops.h"
#include "ops/elementwise.h"

namespace lucid::cpu {

void unary_math(ops::UnaryOp op, TensorImpl& out, const TensorImpl& a) {
  switch (op) {
#define LUCID_CASE(name, Fn, rule)                                          \
  case ops::UnaryOp::Fn:                                                    \
    if constexpr (unary_unit(ops::UnaryOp::Fn) == Unit::Math)              \
      return run_unary<ops::fn::Fn>(#name, out, a, vec_unary(ops::UnaryOp::Fn, a.dtype()), unary_grain(ops::UnaryOp::Fn)); \
    break;
    LUCID_UNARY_OPS(LUCID_CASE)
#undef LUCID_CASE
  }
  fail<RuntimeError>("internal: unary_math given ", ops::op_name(op));
}

}  // namespace lucid::cpu
