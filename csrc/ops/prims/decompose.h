// Primitives of the matrix decompositions (ops/decompose.cpp; lucid.linalg builds on
// them): LAPACK on the CPU, cuSOLVER on the GPU.
//
// Every matrix operand is float32, float64, complex64 or complex128, batch + [m, n]
// with each matrix column-major and the batch dense (element (i, j) of matrix b at
// b * m * n + i + j * m: strides [..., 1, m] in elements), LAPACK's and cuSOLVER's
// layout. Factors are
// computed in place in their output, which the op has filled with the input. A
// real-valued result of a complex matrix (singular values, a Hermitian matrix's
// eigenvalues) has the real dtype of its precision (float32 for complex64). info
// outputs are int32 [batch]: 0 for success, else LAPACK's code for that matrix (the
// op turns them into errors naming the batch element).
#pragma once

#include <cstdint>

#include "core/half.h"  // (LUCID_HD)
#include "ops/primitive.h"

namespace lucid::ops {

// A = P L U with partial pivoting (getrf). outs: {a [*, m, n] (in: A; out: L below the
// diagonal, unit diagonal implied, U on and above), pivots int32 [*, min(m, n)]
// (1-based row swaps, LAPACK's), info}. info > 0: U[info-1, info-1] is exactly zero.
struct LuFactor : PrimitiveOf<Prim::LuFactor, LuFactor> {
  const char* name() const override { return "linalg.lu_factor"; }
};

// X = A^-1 B (adjoint: A^-H B, the conjugate transpose for a complex A) from
// LuFactor's result (getrs). ins: {lu [*, n, n], pivots [*, n]}; outs: {b [*, n, k]
// (in: B; out: X)}; one batch shape for all.
struct LuSolve : PrimitiveOf<Prim::LuSolve, LuSolve> {
  bool adjoint = false;
  const char* name() const override { return "linalg.lu_solve"; }
};

// A = L L^H (potrf). outs: {a [*, n, n] (in: A, only its lower triangle read; out: L
// in the lower triangle, the strict upper one zeroed), info}. info > 0: the leading
// minor of that order is not positive-definite, or its pivot is NaN (reference
// LAPACK's stop, which OpenBLAS's and cuSOLVER's potrf do not make: the kernels check).
struct Cholesky : PrimitiveOf<Prim::Cholesky, Cholesky> {
  const char* name() const override { return "linalg.cholesky"; }
};

// op(A) X = B (left) or X op(A) = B, A triangular (trsm). ins: {a [*, n, n]}; outs:
// {b (in: B; out: X) [*, n, k] (left) or [*, k, n]}. Only A's `upper` (or lower)
// triangle is read; unit: its diagonal is taken as ones; transpose: op(A) = A^H (A^T
// for a real A).
struct TriangularSolve : PrimitiveOf<Prim::TriangularSolve, TriangularSolve> {
  bool upper = false, left = true, unit = false, transpose = false;
  const char* name() const override { return "linalg.solve_triangular"; }
};

// A = Q R by Householder reflections (geqrf). outs: {a [*, m, n] (in: A; out: R on and
// above the diagonal, the reflectors' vectors below it), tau [*, min(m, n)]}.
struct QrFactor : PrimitiveOf<Prim::QrFactor, QrFactor> {
  const char* name() const override { return "linalg.qr"; }
};

// The first n columns of the product of the k reflectors H_1 ... H_k (orgqr; ungqr
// for complex: torch's linalg.householder_product). ins: {tau [*, k]}; outs: {a [*, m, n] (in: the
// reflectors' vectors below the diagonal of the first k columns, as QrFactor leaves
// them; out: the product's columns)}; m >= n >= k.
struct HouseholderProduct : PrimitiveOf<Prim::HouseholderProduct, HouseholderProduct> {
  const char* name() const override { return "linalg.householder_product"; }
};

// The eigenvalues (ascending) and, when `vectors`, eigenvectors of a symmetric or
// Hermitian A (syevd, heevd). outs: {a [*, n, n] (in: A, its `upper` or lower triangle
// read; out: the eigenvectors as columns when `vectors`, else destroyed), w [*, n] (real),
// info}. info > 0: the algorithm did not converge.
struct Eigh : PrimitiveOf<Prim::Eigh, Eigh> {
  bool upper = false, vectors = true;
  const char* name() const override { return "linalg.eigh"; }
};

// The eigenvalues and, when `vectors`, the right eigenvectors of a general A (geev;
// the GPU's cusolverDnXgeev). A complex A: outs {a [*, n, n] (in: A; destroyed), w [*, n],
// info, and when `vectors`, v [*, n, n]}, each vector of norm 1 with its largest
// component real. A real A: outs: {a [*, n, n] (in: A; destroyed), w [*, 2, n] (the
// eigenvalues' real parts, then their imaginary parts; a complex-conjugate pair is
// adjacent, its positive imaginary part first), info, and when `vectors`, v [*, n, n]
// in LAPACK's real packing (a real eigenvalue's vector in its column; a pair's real
// and imaginary parts in its two columns), each vector of norm 1 with its largest
// component real}. info > 0: the QR algorithm did not converge.
struct Eig : PrimitiveOf<Prim::Eig, Eig> {
  bool vectors = true;
  const char* name() const override { return "linalg.eig"; }
};

// A = U diag(S) Vh (gesdd; the GPU's Jacobi gesvdj). ins: {a [*, m, n] (destroyed: a copy the
// op made)}; outs: {s [*, k] (real, descending, k = min(m, n)), info, and when `vectors`,
// u [*, m, full ? m : k] and vh [*, full ? n : k, n]}.
struct Svd : PrimitiveOf<Prim::Svd, Svd> {
  bool vectors = true, full = false;
  const char* name() const override { return "linalg.svd"; }
};

// A = L D L^T with Bunch-Kaufman pivoting, A symmetric (sytrf, lower triangle), or for a
// complex A with `hermitian`, A = L D L^H (hetrf; on the GPU lucid's own sytf2 / hetf2
// but for one or two large symmetric matrices, as cuSOLVER has no hetrf). outs:
// {a [*, n, n] (in: A, only its lower triangle read; out: L's multipliers and D's
// blocks in LAPACK's packed lower form), pivots int32 [*, n] (LAPACK's: negative for
// a 2 x 2 block), info}. info > 0: D[info-1, info-1] is exactly zero.
struct LdlFactor : PrimitiveOf<Prim::LdlFactor, LdlFactor> {
  bool hermitian = false;
  const char* name() const override { return "linalg.ldl_factor"; }
};

// X = A^-1 B from LdlFactor's result (sytrs; hetrs for a `hermitian` factor). ins:
// {ld [*, n, n], pivots int32 [*, n]}; outs: {b [*, n, k] (in: B; out: X)}; one batch
// shape for all. The pivots are the user's: a kernel checks them (sytrf's form) before
// reading anything through them.
struct LdlSolve : PrimitiveOf<Prim::LdlSolve, LdlSolve> {
  bool hermitian = false;
  const char* name() const override { return "linalg.ldl_solve"; }
};

// The first position of pivots p[0..n) that is not sytrf's lower form (1 to n, or a pair
// of equal negatives, -1 to -n, for a 2 x 2 block), -1 if none: LdlSolve's kernels test
// it before reading through them, and report it with fail_bad_ldl_pivot (the GPU's
// through its device-error slot).
LUCID_HD inline int first_bad_ldl_pivot(const int* p, int n) {
  for (int k = 0; k < n;) {
    const int v = p[k];
    if (v >= 1 && v <= n) k += 1;
    else if (v <= -1 && v >= -n && k + 1 < n && p[k + 1] == v) k += 2;
    else return k;
  }
  return -1;
}
[[noreturn]] void fail_bad_ldl_pivot(int64_t position, int64_t value, int64_t n);

}  // namespace lucid::ops
