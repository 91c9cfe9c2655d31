// The body of one elementwise kernel unit (binary_*.cpp, unary_*.cpp): the table's
// ops whose binary_unit() / unary_unit() is U. `if constexpr` keeps every other
// op's loops out, so each translation unit instantiates only its own op x dtype
// loops and none is slow to compile.
#pragma once

#include "backend/cpu/elementwise.h"
#include "backend/cpu/elementwise_loops.h"
#include "ops/elementwise.h"

namespace lucid::cpu {

template <Unit U>
void run_binary_unit(const char* unit_name, ops::BinaryOp op, TensorImpl& out, const TensorImpl& a,
                     const TensorImpl& b) {
  switch (op) {
#define LUCID_CASE(name, Fn, rule, operands)                     \
  case ops::BinaryOp::Fn:                                        \
    if constexpr (binary_unit(ops::BinaryOp::Fn) == U)           \
      return run_binary<ops::fn::Fn>(#name, out, a, b);          \
    break;
    LUCID_BINARY_OPS(LUCID_CASE)
#undef LUCID_CASE
  }
  fail<RuntimeError>("internal: ", unit_name, " given ", ops::op_name(op));
}

template <Unit U>
void run_unary_unit(const char* unit_name, ops::UnaryOp op, TensorImpl& out, const TensorImpl& a) {
  switch (op) {
#define LUCID_CASE(name, Fn, rule)                                                          \
  case ops::UnaryOp::Fn:                                                                    \
    if constexpr (unary_unit(ops::UnaryOp::Fn) == U)                                        \
      return run_unary<ops::fn::Fn>(#name, out, a, vec_unary(ops::UnaryOp::Fn, a.dtype()),  \
                                    unary_grain(ops::UnaryOp::Fn));                         \
    break;
    LUCID_UNARY_OPS(LUCID_CASE)
#undef LUCID_CASE
  }
  fail<RuntimeError>("internal: ", unit_name, " given ", ops::op_name(op));
}

}  // namespace lucid::cpu
