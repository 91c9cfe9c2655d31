// CPU kernels of the elementwise ops (ops/elementwise_table.h). Operands are host
// tensors already broadcast to out's shape and cast to the op's compute dtype; out
// is that dtype, or bool for comparisons and predicates. Kernels write bytes only
// (no version bump).
//
// The op x dtype instantiations are spread over several translation units so that
// none is slow to compile; `binary_unit` / `unary_unit` say which unit has an op.
#pragma once

#include "core/copy.h"
#include "core/tensor_impl.h"
#include "backend/common/elementwise_units.h"
#include "ops/elementwise_table.h"
#include "ops/primitive.h"

namespace lucid::cpu {

using backend::Unit;
using backend::binary_unit;
using backend::unary_unit;

void binary_arith(ops::BinaryOp op, TensorImpl& out, const TensorImpl& a, const TensorImpl& b);    // binary_arith.cpp
void binary_extremum(ops::BinaryOp op, TensorImpl& out, const TensorImpl& a, const TensorImpl& b);  // binary_extremum.cpp
void binary_division(ops::BinaryOp op, TensorImpl& out, const TensorImpl& a, const TensorImpl& b);  // binary_division.cpp
void binary_equality(ops::BinaryOp op, TensorImpl& out, const TensorImpl& a, const TensorImpl& b);  // binary_equality.cpp
void binary_logical(ops::BinaryOp op, TensorImpl& out, const TensorImpl& a, const TensorImpl& b);   // binary_logical.cpp
void binary_order(ops::BinaryOp op, TensorImpl& out, const TensorImpl& a, const TensorImpl& b);     // binary_order.cpp
void binary_math(ops::BinaryOp op, TensorImpl& out, const TensorImpl& a, const TensorImpl& b);     // binary_math.cpp
void binary_logs(ops::BinaryOp op, TensorImpl& out, const TensorImpl& a, const TensorImpl& b);     // binary_logs.cpp
void binary_bitwise(ops::BinaryOp op, TensorImpl& out, const TensorImpl& a, const TensorImpl& b);  // binary_bitwise.cpp
void unary_basic(ops::UnaryOp op, TensorImpl& out, const TensorImpl& a);     // unary.cpp
void unary_math(ops::UnaryOp op, TensorImpl& out, const TensorImpl& a);      // unary_math.cpp
void unary_trig(ops::UnaryOp op, TensorImpl& out, const TensorImpl& a);      // unary_trig.cpp
void unary_rounding(ops::UnaryOp op, TensorImpl& out, const TensorImpl& a);  // unary_rounding.cpp
void unary_predicate(ops::UnaryOp op, TensorImpl& out, const TensorImpl& a);  // unary_predicate.cpp
void unary_special(ops::UnaryOp op, TensorImpl& out, const TensorImpl& a);    // special_unary.cpp
void unary_bessel(ops::UnaryOp op, TensorImpl& out, const TensorImpl& a);     // bessel_unary.cpp
void binary_special(ops::BinaryOp op, TensorImpl& out, const TensorImpl& a, const TensorImpl& b);  // special_binary.cpp
void binary_polynomial(ops::BinaryOp op, TensorImpl& out, const TensorImpl& a, const TensorImpl& b);  // polynomial_binary.cpp
void unary_activation(ops::UnaryOp op, TensorImpl& out, const TensorImpl& a);  // unary_activation.cpp
void binary_activation(ops::BinaryOp op, TensorImpl& out, const TensorImpl& a, const TensorImpl& b);  // binary_activation.cpp
void complex_abs(TensorImpl& out, const TensorImpl& a);  // complex64 -> float32

inline void binary(ops::BinaryOp op, TensorImpl& out, const TensorImpl& a, const TensorImpl& b) {
  switch (binary_unit(op)) {
    case Unit::Division: return binary_division(op, out, a, b);
    case Unit::Extremum: return binary_extremum(op, out, a, b);
    case Unit::Equality: return binary_equality(op, out, a, b);
    case Unit::Logical: return binary_logical(op, out, a, b);
    case Unit::Order: return binary_order(op, out, a, b);
    case Unit::Math: return binary_math(op, out, a, b);
    case Unit::Logs: return binary_logs(op, out, a, b);
    case Unit::Bitwise: return binary_bitwise(op, out, a, b);
    case Unit::Special: return binary_special(op, out, a, b);
    case Unit::Polynomial: return binary_polynomial(op, out, a, b);
    case Unit::Activation: return binary_activation(op, out, a, b);
    default: return binary_arith(op, out, a, b);
  }
}
inline void unary(ops::UnaryOp op, TensorImpl& out, const TensorImpl& a) {
  switch (unary_unit(op)) {
    case Unit::Math: return unary_math(op, out, a);
    case Unit::Trig: return unary_trig(op, out, a);
    case Unit::Rounding: return unary_rounding(op, out, a);
    case Unit::Predicate: return unary_predicate(op, out, a);
    case Unit::Special: return unary_special(op, out, a);
    case Unit::Bessel: return unary_bessel(op, out, a);
    case Unit::Activation: return unary_activation(op, out, a);
    default: return unary_basic(op, out, a);
  }
}

// Note [Compiled CPU chains] (ops/fusion.h): the loops an op's kernel runs over dense
// rows of a float dtype, which the CPU's fused programs (fused_elementwise.cpp) run on a
// block at a time: the same code as the eager kernel's, so the same bits. A member is
// null where the op has no such loop (not a float op of that dtype).
struct RowKernels {
  void (*unary)(const void* in, void* out, int64_t n) = nullptr;             // out = op(in)
  void (*rows)(void* out, const void* a, const void* b, int64_t n) = nullptr;       // out = op(a, b)
  // b (a): one value, of the dtype's opmath type (float for the 16-bit floats)
  void (*row_value)(void* out, const void* a, const void* b, int64_t n) = nullptr;
  void (*value_row)(void* out, const void* a, const void* b, int64_t n) = nullptr;
};
// Each kernel unit's (kernel_unit.h), for the units holding fusable ops (ops/prims/fused.h).
RowKernels binary_arith_rows(ops::BinaryOp op, Dtype dtype);
RowKernels binary_extremum_rows(ops::BinaryOp op, Dtype dtype);
RowKernels binary_division_rows(ops::BinaryOp op, Dtype dtype);
RowKernels binary_math_rows(ops::BinaryOp op, Dtype dtype);
RowKernels binary_logs_rows(ops::BinaryOp op, Dtype dtype);
RowKernels binary_activation_rows(ops::BinaryOp op, Dtype dtype);
RowKernels unary_basic_rows(ops::UnaryOp op, Dtype dtype);
RowKernels unary_math_rows(ops::UnaryOp op, Dtype dtype);
RowKernels unary_trig_rows(ops::UnaryOp op, Dtype dtype);
RowKernels unary_rounding_rows(ops::UnaryOp op, Dtype dtype);
RowKernels unary_activation_rows(ops::UnaryOp op, Dtype dtype);

inline RowKernels binary_rows(ops::BinaryOp op, Dtype dtype) {
  switch (binary_unit(op)) {
    case Unit::Arith: return binary_arith_rows(op, dtype);
    case Unit::Extremum: return binary_extremum_rows(op, dtype);
    case Unit::Division: return binary_division_rows(op, dtype);
    case Unit::Math: return binary_math_rows(op, dtype);
    case Unit::Logs: return binary_logs_rows(op, dtype);
    case Unit::Activation: return binary_activation_rows(op, dtype);
    default: return {};
  }
}
inline RowKernels unary_rows(ops::UnaryOp op, Dtype dtype) {
  switch (unary_unit(op)) {
    case Unit::Basic: return unary_basic_rows(op, dtype);
    case Unit::Math: return unary_math_rows(op, dtype);
    case Unit::Trig: return unary_trig_rows(op, dtype);
    case Unit::Rounding: return unary_rounding_rows(op, dtype);
    case Unit::Activation: return unary_activation_rows(op, dtype);
    default: return {};
  }
}

// The Pointwise primitive's kernel (pointwise.cpp, Note [One rounding]).
void pointwise_kernel(const ops::Primitive& prim, ops::Outputs outs, ops::Inputs ins);

// Writes `dense` (contiguous, out's shape and dtype) into `out` as it lies: how a
// kernel that runs on dense rows serves a strided output.
inline void write_dense_into(TensorImpl& out, const TensorImpl& dense) {
  host_strided_copy(out.host_ptr(), out.stride(), out.dtype(), dense.host_ptr(), dense.stride(), dense.dtype(),
                    out.shape());
}

// where(cond, a, b): cond bool, a and b of out's dtype, all broadcast to out's shape
// (where.cpp). A byte copy per element, so one loop serves every dtype.
void where(TensorImpl& out, const TensorImpl& cond, const TensorImpl& a, const TensorImpl& b);

}  // namespace lucid::cpu
