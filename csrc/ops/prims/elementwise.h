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

// Note [Numbers in opmath]
// A Python number joining a float16 / bfloat16 product or quotient stays a float32 (the
// type such ops compute in, torch's opmath type), as in torch: bf16(1000) * 0.998 is
// bf16(1000 * 0.998f) = 1000, where rounding the number first would give
// 1000 * bf16(0.998) = 996, and x.mul_(0.99) took 7 to 6.90625, not 6.9375; leaky_relu's
// slope likewise. torch's CUDA kernels keep an added or subtracted number so too, its
// CPU kernels convert it to the tensor's dtype first, and each device here does as
// torch's does. The other ops take the number in the tensor's dtype (torch's pow, fmod,
// atan2 convert it). The kernels read such a number as their opmath value: the CPU's row
// kernels take one value in opmath_t (kernel_unit.h), the GPU's functors always did
// (elementwise_launch.cuh).
constexpr bool number_in_opmath(BinaryOp op, Dtype compute, DeviceType device) {
  if (compute != Dtype::F16 && compute != Dtype::BF16) return false;
  if (op == BinaryOp::Add || op == BinaryOp::Sub) return device == DeviceType::GPU;
  return op == BinaryOp::Mul || op == BinaryOp::Div || op == BinaryOp::FloorDivide || op == BinaryOp::LeakyRelu;
}
// The dtype a number operand of `op` is carried in: float32 where it stays in opmath,
// else the compute dtype.
constexpr Dtype number_dtype(BinaryOp op, Dtype compute, DeviceType device) {
  return number_in_opmath(op, compute, device) ? Dtype::F32 : compute;
}

// out = op(x, y). ins: the tensor operands in order (one when the other is a number).
// Integer division by zero raises RuntimeError("ZeroDivisionError") on every device.
struct Binary : PrimitiveOf<Prim::Binary, Binary> {
  BinaryOp op{};
  Dtype compute = Dtype::F32;   // the dtype the kernel computes in (out is bool for comparisons)
  std::optional<Scalar> lhs;    // x when it is a number (a value of number_dtype(op, compute, device))
  std::optional<Scalar> rhs;    // y when it is a number
  const char* name() const override { return op_name(op); }
};

// Note [One rounding]
// add(a, b, alpha=) of two tensors, lerp, addcmul and addcdiv: torch computes each as
// one expression in the opmath type and rounds once. As compositions of table ops they
// round after every step: in bfloat16 a lerp rounded three times, and in float32 each
// differed from torch's bits in about a quarter of the elements. For float dtypes they
// are one primitive, whose functors (ops/pointwise_functors.h) are torch's expressions
// on each device: its CPU and CUDA kernels differ for addcmul and addcdiv (the CUDA
// ones contract a multiply and an add), and lucid's follow each. Integer, bool and
// complex operands keep the compositions (exact, or rarely used).
enum class PointwiseOp : uint8_t { AddScaled, Lerp, Addcmul, Addcdiv };

// out = op(x, y, z, value) in the opmath type of `compute` (a float dtype). ins: x, y,
// then z unless `z` holds it (add's alpha, lerp's weight as a number); each of dtype
// `compute` and broadcast to out's shape, which has that dtype too.
struct Pointwise : PrimitiveOf<Prim::Pointwise, Pointwise> {
  PointwiseOp op{};
  Dtype compute = Dtype::F32;
  std::optional<double> z;
  double value = 1;  // addcmul's and addcdiv's
  const char* name() const override;
  uint64_t signature() const override { return uint64_t(op) * 2 + (z ? 1 : 0) + 1; }
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
