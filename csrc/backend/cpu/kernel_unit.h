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
      return run_binary<ops::fn::Fn>(#name, out, a, b, vec_binary(ops::BinaryOp::Fn, a.dtype())); \
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

// ---- row kernels (RowKernels, elementwise.h) ------------------------------------------

// Calls fn.template operator()<T>() for a float dtype's storage type; {} for the others.
template <typename Fn>
RowKernels for_float_dtype(Dtype dtype, Fn&& fn) {
  switch (dtype) {
    case Dtype::F16: return fn.template operator()<Half>();
    case Dtype::BF16: return fn.template operator()<BFloat16>();
    case Dtype::F32: return fn.template operator()<float>();
    case Dtype::F64: return fn.template operator()<double>();
    default: return {};
  }
}

// The dense loops run_binary runs for op on T: both operands rows (its vector kernel, or
// dense2), or one of them a broadcast value (scalar_b, scalar_a), with the same functor,
// hence the same code. The one value is given as T's opmath type C (float for the
// 16-bit floats): a number an op keeps in opmath (Note [Numbers in opmath]) is one, and
// any other value of T widens to C exactly, so the functor sees what it would have.
template <typename Op, typename T>
RowKernels binary_rows_of(ops::BinaryOp op, Dtype dtype) {
  using C = opmath_t<T>;
  if constexpr (!Op::template supports<C>) {
    return {};
  } else if constexpr (std::is_same_v<decltype(Op()(C(), C())), bool>) {
    return {};
  } else {
    RowKernels r;
    r.rows = vec_binary(op, dtype);
    if (!r.rows)
      r.rows = [](void* o, const void* a, const void* b, int64_t n) {
        dense2(static_cast<T*>(o), static_cast<const T*>(a), static_cast<const T*>(b), n, BinaryFn<Op, T>());
      };
    r.row_value = vec_half_arith(op, dtype, Operands::RowValue);
    if (!r.row_value)
      r.row_value = [](void* o, const void* a, const void* b, int64_t n) {
        scalar_b(static_cast<T*>(o), static_cast<const T*>(a), *static_cast<const C*>(b), n, BinaryFn<Op, T>());
      };
    r.value_row = vec_half_arith(op, dtype, Operands::ValueRow);
    if (!r.value_row)
      r.value_row = [](void* o, const void* a, const void* b, int64_t n) {
        scalar_a(static_cast<T*>(o), *static_cast<const C*>(a), static_cast<const T*>(b), n, BinaryFn<Op, T>());
      };
    return r;
  }
}

// The dense loop run_unary runs for op on T: its vector kernel when it has one, else
// dense1 with its functor.
template <typename Op, typename T>
RowKernels unary_rows_of(ops::UnaryOp op, Dtype dtype) {
  using C = opmath_t<T>;
  if constexpr (!Op::template supports<C>) {
    return {};
  } else if constexpr (std::is_same_v<decltype(Op()(C())), bool>) {
    return {};
  } else {
    RowKernels r;
    r.unary = vec_unary(op, dtype);
    if (!r.unary)
      r.unary = [](const void* in, void* o, int64_t n) {
        dense1(static_cast<T*>(o), static_cast<const T*>(in), n, UnaryFn<Op, T>());
      };
    return r;
  }
}

template <Unit U>
RowKernels binary_rows_unit(ops::BinaryOp op, Dtype dtype) {
  switch (op) {
#define LUCID_CASE(name, Fn, rule, operands)                                                     \
  case ops::BinaryOp::Fn:                                                                        \
    if constexpr (binary_unit(ops::BinaryOp::Fn) == U)                                           \
      return for_float_dtype(dtype, [&]<typename T>() { return binary_rows_of<ops::fn::Fn, T>(op, dtype); }); \
    break;
    LUCID_BINARY_OPS(LUCID_CASE)
#undef LUCID_CASE
  }
  return {};
}

template <Unit U>
RowKernels unary_rows_unit(ops::UnaryOp op, Dtype dtype) {
  switch (op) {
#define LUCID_CASE(name, Fn, rule)                                                                              \
  case ops::UnaryOp::Fn:                                                                                        \
    if constexpr (unary_unit(ops::UnaryOp::Fn) == U)                                                            \
      return for_float_dtype(dtype, [&]<typename T>() { return unary_rows_of<ops::fn::Fn, T>(op, dtype); });    \
    break;
    LUCID_UNARY_OPS(LUCID_CASE)
#undef LUCID_CASE
  }
  return {};
}

}  // namespace lucid::cpu
