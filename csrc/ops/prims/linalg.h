// Primitives of the matrix products (ops/linalg.cpp; einsum and tensordot reduce to
// them too).
#pragma once

#include "ops/primitive.h"

namespace lucid::ops {

// out[i] = alpha * a[i] @ b[i] + beta * out[i] for every index i of a batch.
// ins: {a, b}: a is batch + [m, k] and b is batch + [k, n] with one batch shape, any
// strides (a broadcast batch is a stride-0 view, read in place, never copied); out is
// a contiguous batch + [m, n]. One dtype for all three, not bool. With beta == 0,
// out's old values are not read (BLAS semantics: a NaN there does not propagate), so
// out may be uninitialised; otherwise out holds the addend on entry.
//
// Two extras for a linear layer (Note [A linear layer's bias in its products],
// ops/linalg.cpp), for products without a batch of a real floating dtype:
//  - bias: ins {a, b, bias}, bias a contiguous [n]: out = alpha * a @ b + bias, each
//    row of out gets bias (beta is unused; out's old values are not read);
//  - row_sums: outs {out, sums}, sums a contiguous [m]: sums[i] = the sum over k of
//    a[i, k] (a linear layer's bias gradient, with a = g^T).
// And one a flush's fusion pass sets (GPU only; Note [Product epilogues], ops/fusion_products.cpp):
//  - relu: out = relu(the result above), with torch's CUDA relu's bits (never with row_sums).
struct Gemm : PrimitiveOf<Prim::Gemm, Gemm> {
  Scalar alpha = Scalar(int64_t(1));
  Scalar beta = Scalar(int64_t(0));
  // float32 (and complex64) products may use TF32 tensor cores (GPU only):
  // lucid.backends.cuda.matmul.allow_tf32, read when the op is called.
  bool allow_tf32 = false;
  bool bias = false;
  bool row_sums = false;
  bool relu = false;
  const char* name() const override { return "matmul"; }
  // (each flag picks other kernels: another cuBLASLt epilogue, TF32 tensor cores)
  uint64_t signature() const override { return uint64_t(allow_tf32) | uint64_t(bias) << 1 | uint64_t(row_sums) << 2 | uint64_t(relu) << 3; }
};

// out = conj(x) for complex64 x. ins: {x}; x and out contiguous, of one shape; out may
// be x itself (in place).
struct Conj : PrimitiveOf<Prim::Conj, Conj> {
  const char* name() const override { return "conj"; }
};

}  // namespace lucid::ops
