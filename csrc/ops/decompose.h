// The matrix decompositions lucid.linalg builds on (python/lucid/linalg.py), as raw
// engine ops: no autograd here (linalg's Functions hold torch's gradient formulas), no
// broadcasting (linalg broadcasts first). Each takes float32/float64/complex64/complex128 batch + [m, n]
// operands of any strides on one device, copies them into the column-major layout of
// ops/prims/decompose.h, and returns its results in that layout (as torch's linalg
// results are), with int32 `info` [batch] that linalg turns into its errors.
#pragma once

#include <vector>

#include "core/tensor_impl.h"

namespace lucid::ops {

// {LU, pivots int32 [*, min(m, n)] (1-based), info}.
std::vector<TensorPtr> lu_factor(const TensorPtr& a);
// A^-1 B (adjoint: A^-T B) from lu_factor's LU and pivots; B [*, n, k] of LU's batch.
TensorPtr lu_solve(const TensorPtr& lu, const TensorPtr& pivots, const TensorPtr& b, bool adjoint);
// {L (in the lower triangle; the strict upper one holds A's), info}.
std::vector<TensorPtr> cholesky(const TensorPtr& a);
// X with op(A) X = B (left) or X op(A) = B, A triangular (upper or lower; unit diagonal).
TensorPtr solve_triangular(const TensorPtr& a, const TensorPtr& b, bool upper, bool left, bool unit,
                           bool transpose = false);
// {R and the reflectors (geqrf's packed form), tau [*, min(m, n)]}.
std::vector<TensorPtr> qr_factor(const TensorPtr& a);
// The first n columns of H_1 ... H_k: a [*, m, n] holds the reflectors, tau [*, k].
TensorPtr householder_product(const TensorPtr& a, const TensorPtr& tau);
// {eigenvalues [*, n] ascending, eigenvectors (as columns; null unless vectors), info}.
std::vector<TensorPtr> eigh(const TensorPtr& a, bool upper, bool vectors);
// {w [*, 2, n] (real parts, imaginary parts), packed real eigenvectors (null unless
// vectors), info} of a general real A (ops/prims/decompose.h's Eig).
std::vector<TensorPtr> eig(const TensorPtr& a, bool vectors);
// {LD (LAPACK's packed lower form), pivots int32 [*, n], info} of a symmetric A.
std::vector<TensorPtr> ldl_factor(const TensorPtr& a, bool hermitian);
// A^-1 B from ldl_factor's LD and pivots; B [*, n, k] of LD's batch.
TensorPtr ldl_solve(const TensorPtr& ld, const TensorPtr& pivots, const TensorPtr& b, bool hermitian);
// {U, S [*, k] descending, Vh, info}; U and Vh null unless vectors.
std::vector<TensorPtr> svd(const TensorPtr& a, bool full, bool vectors);

}  // namespace lucid::ops
