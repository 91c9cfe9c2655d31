// The GPU's matrix product (ops/prims/linalg.h, Gemm): cuBLASLt for floating and
// complex dtypes (gemm.cpp), a plain kernel for integers and empty sums (gemm_naive.cu).
#pragma once

#include <cstdint>

#include "core/tensor_impl.h"

namespace lucid::cuda {

// out[b] = alpha * a[b] @ x[b] + beta * out[b] over `batch` (shape) with element
// strides per batch dim; a [m, k] and x [k, n] with element strides (row, column);
// out contiguous. Any real or complex dtype; alpha and beta as in the primitive.
struct NaiveGemm {
  int64_t m, n, k;
  int ndim;  // batch dims, at most 8
  int64_t batch[8], a_batch[8], b_batch[8], c_batch[8];
  int64_t a_rs, a_cs, b_rs, b_cs;
};
void naive_gemm(const NaiveGemm& g, TensorImpl& out, const TensorImpl& a, const TensorImpl& b, const Scalar& alpha,
                const Scalar& beta);

}  // namespace lucid::cuda
