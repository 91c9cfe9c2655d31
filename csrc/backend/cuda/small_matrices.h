// Kernels for batches of small matrices (at most kSmallOrder on a side), which the
// GPU's decompositions (decompose.cpp) use where a library call per matrix would cost
// more host time than the arithmetic: the device array of a batch's matrix pointers
// that cuBLAS's batched routines take, Cholesky (LAPACK's potf2) and Householder QR
// (LAPACK's geqr2 and org2r) with one warp per matrix, all real; the pass that finishes
// cuSOLVER's Cholesky factors of any size and dtype as the primitive promises; and the
// conjugation of a complex Vh. Matrices are column-major, lda = rows, the batch dense
// (ops/prims/decompose.h); everything is enqueued on the device's stream.
#pragma once

#include <cstdint>

#include "core/dtype.h"

namespace lucid::cuda {

inline constexpr int kSmallOrder = 32;

// out[b] = base + b * step_bytes for b < count (out: a device array of count pointers).
void fill_pointer_array(void** out, void* base, int64_t step_bytes, int64_t count, int device);

// In place, per matrix [n, n] of `a` (n <= kSmallOrder): L of A = L L^T from its lower
// triangle (LAPACK's potf2), the strict upper triangle zeroed; info[b] 0, or the order
// of the first pivot that is not positive (NaN included), where the factorization stops.
void batched_potf2(Dtype dtype, void* a, int* info, int n, int64_t count, int device);

// Per matrix [n, n] of `a` (any n, float32, float64, complex64 or complex128) after
// cuSOLVER's potrf (or potrfBatched): the strict upper triangle
// zeroed, and info[b] = the order of the first NaN pivot where potrf reported 0 (it
// does not stop there; LAPACK does).
void finish_cholesky(Dtype dtype, void* a, int* info, int n, int64_t count, int device);

// In place, per matrix [m, n] of `a` (m, n <= kSmallOrder): R on and above the diagonal,
// the reflectors' vectors below it, their factors in tau [count, min(m, n)]; LAPACK's
// geqr2 (dlarfg's sign convention: beta = -sign(alpha) * norm, tau = 0 for a zero column).
void batched_geqr2(Dtype dtype, void* a, void* tau, int m, int n, int64_t count, int device);

// In place, per matrix [m, n] of `a` (n <= m <= kSmallOrder) holding k <= n reflectors
// (geqr2's form; tau [count, k]): the first n columns of H_1 ... H_k (LAPACK's org2r).
void batched_org2r(Dtype dtype, void* a, const void* tau, int m, int n, int k, int64_t count, int device);

}  // namespace lucid::cuda
