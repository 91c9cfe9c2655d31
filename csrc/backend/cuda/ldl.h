// The GPU's own LDL kernels: the factorization of batches and of Hermitian matrices
// (LAPACK's sytf2 / hetf2; cuSOLVER's sytrf is symmetric only and slow per call, see
// ldl_factor.cu) and the solve from the factors (LAPACK's sytrs / hetrs; cuSOLVER's
// Xsytrs poisoned a context in testing, see ldl_solve.cu). Matrices are column-major
// in LAPACK's lower form throughout.
#pragma once

#include <cstdint>

#include "core/dtype.h"

namespace lucid::cuda {

// In place, per matrix b < count of a[b] [n, n] (float32/64, complex64/128): A = P L D L^T P^T
// (symmetric) or, for a complex `hermitian` one, A = P L D L^H P^T, with Bunch-Kaufman
// pivoting (LAPACK's sytf2 / hetf2, lower), one block of threads per matrix; only the
// lower triangle read or written. pivots[b] [n] and info[b] as LAPACK's (info: 1-based
// index of the first exactly zero pivot, 0 if none). `work`: ldl_factor_workspace(n,
// count) elements of a's dtype. ldl_factor_by_blocks: whether this beats cuSOLVER's
// sytrf for such a batch (which is the way for one or two large matrices).
void ldl_factor(Dtype dtype, bool hermitian, void* a, int* pivots, int* info, void* work, int n, int64_t count,
                int device);
int64_t ldl_factor_workspace(int n, int64_t count);
bool ldl_factor_by_blocks(int n, int64_t count);

// info[b] as LAPACK's for a factorization already made (cuSOLVER's sytrf's own differs).
void ldl_factor_info(Dtype dtype, const void* a, const int* pivots, int* info, int n, int64_t count, int device);

// In place, per matrix b < count: x[b] [n, k] (column-major) <- A^-1 x[b], A given by
// ld[b] [n, n] and pivots[b] [n] (LAPACK's, 1-based, negative for a 2 x 2 block), from
// sytrf (A = L D L^T) or, for a complex `hermitian` factor, hetrf (A = L D L^H). A pivot
// that is not of that form is reported as a device error (device_error.h) and its
// matrix's columns left as they were.
void ldl_solve(Dtype dtype, bool hermitian, const void* ld, const int* pivots, void* x, int n, int k, int64_t count,
               int device);

}  // namespace lucid::cuda
