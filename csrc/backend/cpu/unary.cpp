// Unary kernels: out has the operand's dtype (the ops layer has already promoted
// integer inputs of the Float-rule ops to a floating dtype).
#include "backend/cpu/elementwise.h"
#include "backend/cpu/elementwise_loops.h"

namespace lucid::cpu {

void unary(ops::UnaryOp op, TensorImpl& out, const TensorImpl& a) {
  switch (op) {
#define LUCID_CASE(name, Fn, rule) \
  case ops::UnaryOp::Fn: return run_unary<ops::fn::Fn>(#name, out, a);
    LUCID_UNARY_OPS(LUCID_CASE)
#undef LUCID_CASE
  }
}

void complex_abs(TensorImpl& out, const TensorImpl& a) {
  const std::byte* const in[1] = {a.host_ptr()};
  elementwise_loop<float, complex64, 1>(out.host_ptr(), in, {out.stride(), a.stride()}, out.shape(),
                                        [](complex64 z) { return std::abs(z); });
}

}  // namespace lucid::cpu
