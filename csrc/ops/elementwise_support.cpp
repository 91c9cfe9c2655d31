// Which compute dtypes each elementwise op is defined for: its functor's supports<T>
// (ops/elementwise_table.h), which every device's kernels also honour. Checked when the
// op is called, because a lazy GPU runs the kernel later (Note [Lazy GPU execution])
// and the error must come from the call.
#include <type_traits>

#include "core/dtype.h"
#include "core/error.h"
#include "ops/elementwise.h"
#include "ops/elementwise_table.h"

namespace lucid::ops {

namespace {

// The type a functor computes in: float for float16/bfloat16 (as in both backends).
template <typename T>
using compute_t = std::conditional_t<std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>, float, T>;

template <typename Op>
bool supports(Dtype d) {
  return visit_dtype(d, []<typename T>() { return Op::template supports<compute_t<T>>; });
}

}  // namespace

void check_supported(BinaryOp op, Dtype compute) {
  bool ok = true;
  switch (op) {
#define LUCID_CASE(name, Fn, rule, operands) \
  case BinaryOp::Fn: ok = supports<fn::Fn>(compute); break;
    LUCID_BINARY_OPS(LUCID_CASE)
#undef LUCID_CASE
  }
  LUCID_CHECK(ok, NotImplementedError, op_name(op), " is not implemented for dtype ", dtype_name(compute));
}

void check_supported(UnaryOp op, Dtype compute) {
  bool ok = true;
  switch (op) {
#define LUCID_CASE(name, Fn, rule) \
  case UnaryOp::Fn: ok = supports<fn::Fn>(compute); break;
    LUCID_UNARY_OPS(LUCID_CASE)
#undef LUCID_CASE
  }
  LUCID_CHECK(ok, NotImplementedError, op_name(op), " is not implemented for dtype ", dtype_name(compute));
}

}  // namespace lucid::ops
