// Unary kernels: out has the operand's dtype (the ops layer has already promoted
// integer inputs of the Float-rule ops to a floating dtype).
#include "backend/cpu/elementwise.h"
#include "backend/cpu/elementwise_loops.h"
#include "ops/elementwise.h"

namespace lucid::cpu {

void unary_basic(ops::UnaryOp op, TensorImpl& out, const TensorImpl& a) {
  switch (op) {
#define LUCID_CASE(name, Fn, rule)                                          \
  case ops::UnaryOp::Fn:                                                    \
    if constexpr (unary_unit(ops::UnaryOp::Fn) == Unit::Basic)              \
      return run_unary<ops::fn::Fn>(#name, out, a, vec_unary(ops::UnaryOp::Fn, a.dtype()), unary_grain(ops::UnaryOp::Fn)); \
    break;
    LUCID_UNARY_OPS(LUCID_CASE)
#undef LUCID_CASE
  }
  fail<RuntimeError>("internal: unary_basic given ", ops::op_name(op));
}

void complex_abs(TensorImpl& out, const TensorImpl& a) {
  const std::byte* const in[1] = {a.host_ptr()};
  elementwise_loop<float, complex64, 1>(out.host_ptr(), in, {out.stride(), a.stride()}, out.shape(),
                                        [](complex64 z) { return std::abs(z); });
}

}  // namespace lucid::cpu
