// The sparse-times-dense product primitive (ops/sparse.cpp; lucid's sparse tensors,
// python/lucid/_sparse.py, build on it): lucid's own loop on the CPU, cuSPARSE on the GPU.
//
// CsrMatmul: out = A @ B for A [m, k] in compressed sparse rows and B [k, n] dense.
// ins: {crow int64 [m + 1], col int64 [nnz], values [nnz], b [k, n] row-major};
// outs: {out [m, n] row-major}; values, b and out of one float dtype, all on one device.
// Row i's entries are values[crow[i] .. crow[i+1]) in columns col[...] (any order,
// repeats add). The op checks shapes; the index values' soundness (crow rising from 0
// to nnz, 0 <= col < k) is the caller's promise, checked where the indices are made.
#pragma once

#include "ops/primitive.h"

namespace lucid::ops {

struct CsrMatmul : PrimitiveOf<Prim::CsrMatmul, CsrMatmul> {
  const char* name() const override { return "sparse.mm"; }
};

}  // namespace lucid::ops
