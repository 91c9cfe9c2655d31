// Vectorised float32/float64 transcendentals over dense arrays, for the unary
// kernels. The scalar std:: functions do not vectorise (they set errno and have no
// SIMD variants in the C++ library), so exp over 16M floats would otherwise take
// ~5 ns an element. With SLEEF (Debian libsleef-dev, the library PyTorch uses) the
// functions are its 1-ULP (u10; erfc u15) AVX2 / AVX-512 versions, chosen at run
// time; without it only the exactly-rounded ones (sqrt, reciprocal, rsqrt) are
// vectorised and the rest use the scalar loop.
#pragma once

#include <cstdint>

#include "core/dtype.h"
#include "ops/elementwise_table.h"

namespace lucid::cpu {

// out[i] = op(in[i]) for i < n, over dense arrays of one dtype.
using VecUnaryFn = void (*)(const void* in, void* out, int64_t n);

// The vector kernel of `op` for `dtype` on this CPU, or nullptr (other dtypes,
// ops without one, no SLEEF, or a CPU without AVX2). float16 and bfloat16 run the
// float32 kernel on blocks widened to float (Note [16-bit rows]).
VecUnaryFn vec_unary(ops::UnaryOp op, Dtype dtype);

// out[i] = op(a[i], b[i]) for i < n, over dense arrays of one dtype (out first, as
// RowKernels' rows).
using VecBinaryFn = void (*)(void* out, const void* a, const void* b, int64_t n);
// The vector kernel of binary `op` for `dtype` on this CPU, or nullptr: the fused
// activations' derivatives (float32) and the 16-bit arithmetic (vec_half_arith) have one;
// the other arithmetic vectorises as plain loops.
VecBinaryFn vec_binary(ops::BinaryOp op, Dtype dtype);

// float16 / bfloat16 +, -, *, /, maximum and minimum converted in registers (vec_half.cpp,
// Note [16-bit arithmetic in registers]), or nullptr (other ops or dtypes, a CPU without
// AVX2). The
// operands are two rows, or a row and one number (a float, the op's opmath type), passed
// as RowKernels' row_value / value_row pass them.
enum class Operands { Rows, RowValue, ValueRow };
VecBinaryFn vec_half_arith(ops::BinaryOp op, Dtype dtype, Operands form);

// float32 exp, tanh, sigmoid, erf, gelu and silu in lucid's own vector code (vec_exp.cpp, used with or
// without SLEEF), or nullptr.
enum class Isa : int;
VecUnaryFn vec_f32_activation(ops::UnaryOp op, Isa isa);
// float32 gelu and silu derivatives (vec_exp.cpp), or nullptr.
VecBinaryFn vec_f32_activation_backward(ops::BinaryOp op, Isa isa);
// float32 sin and cos (vec_exp.cpp, Cephes' reduction and polynomials, within 2 ULP),
// for builds without SLEEF, or nullptr.
VecUnaryFn vec_f32_sincos(ops::UnaryOp op, Isa isa);

}  // namespace lucid::cpu
