// The CUDA kernels of the elementwise primitives (ops/prims/elementwise.h), split over
// compile units as the CPU's are (backend/common/elementwise_units.h).
#pragma once

#include <cstdint>
#include <optional>

#include "backend/cuda/elementwise_loop.cuh"
#include "core/tensor_impl.h"
#include "ops/elementwise_table.h"

namespace lucid::ops {
struct Pointwise;
}

namespace lucid::cuda {

// One elementwise launch, planned on the host: the output, up to three inputs (a null
// input is the number in `number`), and their shape and byte strides after collapsing
// dimensions that are contiguous in every operand.
struct EwCall {
  TensorImpl* out = nullptr;
  const TensorImpl* in[3] = {};
  std::optional<Scalar> number[3];
  int n_in = 0;
  Dtype compute = Dtype::F32;  // the inputs' dtype
  int device = 0;
  int64_t numel = 0;
  bool contiguous = false;  // the output dense, each input dense in its order or periodic
  bool aligned = false;     // ... and every pointer allows 16-byte vector accesses
  int64_t period[3] = {};   // contiguous: input k repeats its first period[k] elements (0: dense)
  int ndim = 0;
  int64_t sizes[kMaxEwDims] = {};
  int64_t strides[4][kMaxEwDims] = {};  // [0]: out, [1 + k]: in[k] (bytes)
};

// Plans `call` (out, in, number, n_in, compute and device set); false when the operands
// collapse to more than kMaxEwDims dimensions (the caller stages them contiguously).
bool plan_elementwise(EwCall& call);

void binary_arith(ops::BinaryOp op, const EwCall& call);
void binary_division(ops::BinaryOp op, const EwCall& call);
void binary_equality(ops::BinaryOp op, const EwCall& call);
void binary_logical(ops::BinaryOp op, const EwCall& call);
void binary_extremum(ops::BinaryOp op, const EwCall& call);
void binary_logs(ops::BinaryOp op, const EwCall& call);
void binary_order(ops::BinaryOp op, const EwCall& call);
void binary_math(ops::BinaryOp op, const EwCall& call);
void binary_bitwise(ops::BinaryOp op, const EwCall& call);
void unary_basic(ops::UnaryOp op, const EwCall& call);
void unary_math(ops::UnaryOp op, const EwCall& call);
void unary_trig(ops::UnaryOp op, const EwCall& call);
void unary_rounding(ops::UnaryOp op, const EwCall& call);
void unary_predicate(ops::UnaryOp op, const EwCall& call);
void unary_special(ops::UnaryOp op, const EwCall& call);    // special_unary.cu
void unary_bessel(ops::UnaryOp op, const EwCall& call);     // bessel_unary.cu
void binary_special(ops::BinaryOp op, const EwCall& call);  // special_binary.cu
void binary_polynomial(ops::BinaryOp op, const EwCall& call);  // polynomial_binary.cu
void unary_activation(ops::UnaryOp op, const EwCall& call);   // unary_activation.cu
void binary_activation(ops::BinaryOp op, const EwCall& call);  // binary_activation.cu
// where(cond, x, y) moves bytes: one kernel per item size (where.cu).
void where(const EwCall& call);
void complex_abs(const EwCall& call);
// The Pointwise primitive over a call of three operands (pointwise.cu).
void pointwise(const ops::Pointwise& p, const EwCall& call);

}  // namespace lucid::cuda
