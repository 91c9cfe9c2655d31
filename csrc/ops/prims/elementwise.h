// Primitives of the elementwise ops (ops/elementwise.cpp, ops/elementwise_extra.cpp).
//
// Tensor operands arrive cast to the compute dtype and broadcast to the output's shape
// (stride-0 views, no copies). A number operand (a Python number, or a 0-d CPU tensor
// joining a GPU op) travels as a parameter already converted to the compute dtype, so
// a GPU kernel reads it from its arguments: no one-element upload, no host sync.
#pragma once

#include <optional>

#include "ops/elementwise_table.h"
#include "ops/primitive.h"

namespace lucid::ops {

const char* op_name(BinaryOp op);
const char* op_name(UnaryOp op);

// out = op(x); out has x's dtype, or bool for predicates. ins: {x}.
struct Unary : PrimitiveOf<Prim::Unary, Unary> {
  UnaryOp op{};
  const char* name() const override { return op_name(op); }
};

// out = op(x, y). ins: the tensor operands in order (one when the other is a number).
// Integer division by zero raises RuntimeError("ZeroDivisionError") on every device.
struct Binary : PrimitiveOf<Prim::Binary, Binary> {
  BinaryOp op{};
  Dtype compute = Dtype::F32;   // the dtype the kernel computes in (out is bool for comparisons)
  std::optional<Scalar> lhs;    // x when it is a number
  std::optional<Scalar> rhs;    // y when it is a number
  const char* name() const override { return op_name(op); }
};

// out = |z| of complex z: complex64 to float32, complex128 to float64. ins: {z}.
struct ComplexAbs : PrimitiveOf<Prim::ComplexAbs, ComplexAbs> {
  const char* name() const override { return "abs"; }
};

// out = cond ? x : y. ins: {cond (bool), then x and y unless they are numbers}.
struct Where : PrimitiveOf<Prim::Where, Where> {
  std::optional<Scalar> lhs;  // x when it is a number
  std::optional<Scalar> rhs;  // y when it is a number
  const char* name() const override { return "where"; }
};

}  // namespace lucid::ops
