// CPU kernels of the matrix decompositions (ops/prims/decompose.h): LAPACK (MKL's when
// it loads, else OpenBLAS's: Note [The CPU's LAPACK]), called once per matrix of the batch.
//
// Note [LAPACK threads]
// LAPACK runs single-threaded under lucid's pool (Note [One pool for products],
// blas.cpp). A batch of matrices is split across the pool, one matrix per call; a
// single large matrix is one call with the library's own threads switched on for its
// duration (its blocked factorizations are where the time of a large matrix goes), under a
// lock so that two such calls never change the thread count under each other.
#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdint>
#include <mutex>
#include <vector>

#include "backend/cpu/blas.h"
#include "backend/cpu/mkl.h"
#include "backend/cpu/register.h"
#include "core/error.h"
#include "core/parallel.h"
#include "ops/prims/decompose.h"

#ifdef LUCID_HAVE_OPENBLAS
#include <cblas.h>

// LAPACK's Fortran entry points (OpenBLAS exports them; gfortran's hidden string
// lengths last).
extern "C" {
void sgetrf_(const int* m, const int* n, float* a, const int* lda, int* ipiv, int* info);
void dgetrf_(const int* m, const int* n, double* a, const int* lda, int* ipiv, int* info);
void slaswp_(const int* n, float* a, const int* lda, const int* k1, const int* k2, const int* ipiv, const int* incx);
void dlaswp_(const int* n, double* a, const int* lda, const int* k1, const int* k2, const int* ipiv, const int* incx);
void sgetrs_(const char* trans, const int* n, const int* nrhs, const float* a, const int* lda, const int* ipiv,
             float* b, const int* ldb, int* info, size_t);
void dgetrs_(const char* trans, const int* n, const int* nrhs, const double* a, const int* lda, const int* ipiv,
             double* b, const int* ldb, int* info, size_t);
void spotrf_(const char* uplo, const int* n, float* a, const int* lda, int* info, size_t);
void dpotrf_(const char* uplo, const int* n, double* a, const int* lda, int* info, size_t);
void sgeqrf_(const int* m, const int* n, float* a, const int* lda, float* tau, float* work, const int* lwork,
             int* info);
void dgeqrf_(const int* m, const int* n, double* a, const int* lda, double* tau, double* work, const int* lwork,
             int* info);
void sorgqr_(const int* m, const int* n, const int* k, float* a, const int* lda, const float* tau, float* work,
             const int* lwork, int* info);
void dorgqr_(const int* m, const int* n, const int* k, double* a, const int* lda, const double* tau, double* work,
             const int* lwork, int* info);
void ssyevd_(const char* jobz, const char* uplo, const int* n, float* a, const int* lda, float* w, float* work,
             const int* lwork, int* iwork, const int* liwork, int* info, size_t, size_t);
void dsyevd_(const char* jobz, const char* uplo, const int* n, double* a, const int* lda, double* w, double* work,
             const int* lwork, int* iwork, const int* liwork, int* info, size_t, size_t);
void ssytrf_(const char* uplo, const int* n, float* a, const int* lda, int* ipiv, float* work, const int* lwork,
             int* info, size_t);
void dsytrf_(const char* uplo, const int* n, double* a, const int* lda, int* ipiv, double* work, const int* lwork,
             int* info, size_t);
void ssytrs_(const char* uplo, const int* n, const int* nrhs, const float* a, const int* lda, const int* ipiv,
             float* b, const int* ldb, int* info, size_t);
void dsytrs_(const char* uplo, const int* n, const int* nrhs, const double* a, const int* lda, const int* ipiv,
             double* b, const int* ldb, int* info, size_t);
void sgeev_(const char* jobvl, const char* jobvr, const int* n, float* a, const int* lda, float* wr, float* wi,
            float* vl, const int* ldvl, float* vr, const int* ldvr, float* work, const int* lwork, int* info, size_t,
            size_t);
void dgeev_(const char* jobvl, const char* jobvr, const int* n, double* a, const int* lda, double* wr, double* wi,
            double* vl, const int* ldvl, double* vr, const int* ldvr, double* work, const int* lwork, int* info,
            size_t, size_t);
void sgesdd_(const char* jobz, const int* m, const int* n, float* a, const int* lda, float* s, float* u,
             const int* ldu, float* vt, const int* ldvt, float* work, const int* lwork, int* iwork, int* info,
             size_t);
void dgesdd_(const char* jobz, const int* m, const int* n, double* a, const int* lda, double* s, double* u,
             const int* ldu, double* vt, const int* ldvt, double* work, const int* lwork, int* iwork, int* info,
             size_t);
}

// The complex routines (c: complex64, z: complex128). std::complex has Fortran
// COMPLEX's layout; real-valued arguments (eigenvalues, singular values, rwork) are
// the real precision. One template declares both precisions' entry points by name.
#define LUCID_COMPLEX_LAPACK(P, C, R)                                                                             \
  void P##getrf_(const int* m, const int* n, C* a, const int* lda, int* ipiv, int* info);                       \
  void P##getrs_(const char* trans, const int* n, const int* nrhs, const C* a, const int* lda, const int* ipiv, \
                 C* b, const int* ldb, int* info, size_t);                                                      \
  void P##potrf_(const char* uplo, const int* n, C* a, const int* lda, int* info, size_t);                      \
  void P##geqrf_(const int* m, const int* n, C* a, const int* lda, C* tau, C* work, const int* lwork, int* info); \
  void P##ungqr_(const int* m, const int* n, const int* k, C* a, const int* lda, const C* tau, C* work,          \
                 const int* lwork, int* info);                                                                  \
  void P##heevd_(const char* jobz, const char* uplo, const int* n, C* a, const int* lda, R* w, C* work,          \
                 const int* lwork, R* rwork, const int* lrwork, int* iwork, const int* liwork, int* info, size_t, \
                 size_t);                                                                                       \
  void P##sytrf_(const char* uplo, const int* n, C* a, const int* lda, int* ipiv, C* work, const int* lwork,     \
                 int* info, size_t);                                                                            \
  void P##hetrf_(const char* uplo, const int* n, C* a, const int* lda, int* ipiv, C* work, const int* lwork,     \
                 int* info, size_t);                                                                            \
  void P##sytrs_(const char* uplo, const int* n, const int* nrhs, const C* a, const int* lda, const int* ipiv,  \
                 C* b, const int* ldb, int* info, size_t);                                                      \
  void P##hetrs_(const char* uplo, const int* n, const int* nrhs, const C* a, const int* lda, const int* ipiv,  \
                 C* b, const int* ldb, int* info, size_t);                                                      \
  void P##geev_(const char* jobvl, const char* jobvr, const int* n, C* a, const int* lda, C* w, C* vl,           \
                const int* ldvl, C* vr, const int* ldvr, C* work, const int* lwork, R* rwork, int* info, size_t, \
                size_t);                                                                                        \
  void P##gesdd_(const char* jobz, const int* m, const int* n, C* a, const int* lda, R* s, C* u, const int* ldu, \
                 C* vt, const int* ldvt, C* work, const int* lwork, R* rwork, int* iwork, int* info, size_t);
extern "C" {
LUCID_COMPLEX_LAPACK(c, std::complex<float>, float)
LUCID_COMPLEX_LAPACK(z, std::complex<double>, double)
}
#undef LUCID_COMPLEX_LAPACK
#endif

namespace lucid::cpu {

namespace {

using ops::Inputs;
using ops::Outputs;
using ops::prim_cast;

// Matrix b of a column-major batch (ops/prims/decompose.h's layout).
template <class T>
T* matrix(const TensorImpl* t, int64_t b) {
  const int64_t r = t->ndim();
  const int64_t size = r >= 2 ? t->shape()[r - 2] * t->shape()[r - 1] : t->shape()[r - 1];
  return reinterpret_cast<T*>(t->host_ptr()) + b * size;
}
// The batch's size: the elements of `t` over those of one matrix (or vector: `dims` 1).
int64_t batch_of(const TensorImpl* t, int dims) {
  int64_t n = 1;
  for (int64_t i = 0; i < t->ndim() - dims; ++i) n *= t->shape()[i];
  return n;
}
int rows(const TensorImpl* t) { return int(t->shape()[t->ndim() - 2]); }
int cols(const TensorImpl* t) { return int(t->shape()[t->ndim() - 1]); }
int32_t* info_of(const TensorImpl* t) { return reinterpret_cast<int32_t*>(t->host_ptr()); }

#ifdef LUCID_HAVE_OPENBLAS

std::mutex g_threads_mutex;

// A single matrix of at least this order runs on OpenBLAS's threads; below it the
// threads' start costs more than they save (and the switch takes a lock).
constexpr int64_t kThreadedOrder = 256;

// fn(b) for every matrix b of a batch of `count` matrices of order up to `order`: across
// lucid's pool, or, for one large matrix, on OpenBLAS's threads (Note [LAPACK threads]).
template <class F>
void each_matrix(int64_t count, int64_t order, F&& fn) {
  if (count == 1 && order >= kThreadedOrder) {
    std::lock_guard<std::mutex> lock(g_threads_mutex);
    MklThreads mkl_threads(get_num_threads());
    openblas_set_num_threads(get_num_threads());
    try {
      fn(int64_t(0));
    } catch (...) {
      openblas_set_num_threads(1);
      throw;
    }
    openblas_set_num_threads(1);
    return;
  }
  parallel_for(count, 1, [&](int64_t lo, int64_t hi) {
    MklThreads one(1);  // (lucid's pool is the parallelism here)
    for (int64_t b = lo; b < hi; ++b) fn(b);
  });
}

// The complex dtypes (their LAPACK routines are the c and z ones).
template <class T>
constexpr bool kComplex = std::is_same_v<T, complex64> || std::is_same_v<T, complex128>;
// The real type of T's parts: eigenvalues of a Hermitian matrix, singular values.
template <class T>
using Real = decltype(std::real(T()));

// f.template operator()<T>() for float32, float64, complex64 or complex128.
template <class F>
void visit_float(Dtype d, const char* op, F&& f) {
  switch (d) {
    case Dtype::F32: return f.template operator()<float>();
    case Dtype::F64: return f.template operator()<double>();
    case Dtype::C64: return f.template operator()<complex64>();
    case Dtype::C128: return f.template operator()<complex128>();
    default: fail<NotImplementedError>(op, ": not implemented for '", dtype_name(d), "' on the CPU");
  }
}

// Note [The CPU's LAPACK]
// OpenBLAS's LAPACK is linked; MKL's (PyPI's `mkl`, which lucid's FFT already needs) is
// used instead when it loads (mkl.h), every routine from one library. Measured on the
// 2-core CI machine, one [1024, 1024] float32 matrix: gesdd 128 ms in MKL against 225 ms
// in OpenBLAS, syevd 49 against 80 (OpenBLAS's level-2 kernels are where it loses).
// Each entry point is taken from MKL by name at the first call (a failed lookup of any
// one keeps OpenBLAS for all), so a machine without MKL runs as before.
#define LUCID_REAL_LAPACK_ROUTINES(X, P) \
  X(P, getrf) X(P, laswp) X(P, getrs) X(P, potrf) X(P, geqrf) X(P, orgqr) X(P, syevd) X(P, sytrf) X(P, sytrs) \
  X(P, geev) X(P, gesdd)
#define LUCID_COMPLEX_LAPACK_ROUTINES(X, P) \
  X(P, getrf) X(P, getrs) X(P, potrf) X(P, geqrf) X(P, ungqr) X(P, heevd) X(P, sytrf) X(P, hetrf) X(P, sytrs) \
  X(P, hetrs) X(P, geev) X(P, gesdd)
#define LUCID_ALL_LAPACK_ROUTINES(X)                                     \
  LUCID_REAL_LAPACK_ROUTINES(X, s) LUCID_REAL_LAPACK_ROUTINES(X, d)      \
  LUCID_COMPLEX_LAPACK_ROUTINES(X, c) LUCID_COMPLEX_LAPACK_ROUTINES(X, z)

struct LapackApi {
#define LUCID_FIELD(P, name) decltype(&P##name##_) P##name = &P##name##_;
  LUCID_ALL_LAPACK_ROUTINES(LUCID_FIELD)
#undef LUCID_FIELD
  bool mkl = false;
};

LapackApi load_lapack() {
  LapackApi mkl;
  bool found = mkl_library() != nullptr;
#define LUCID_FROM_MKL(P, name)                                                                       \
  mkl.P##name = reinterpret_cast<decltype(&P##name##_)>(found ? mkl_symbol(#P #name "_") : nullptr); \
  found = found && mkl.P##name;
  LUCID_ALL_LAPACK_ROUTINES(LUCID_FROM_MKL)
#undef LUCID_FROM_MKL
  if (!found) return LapackApi{};  // OpenBLAS's
  mkl.mkl = true;
  return mkl;
}

const LapackApi& lapack() {
  static const LapackApi api = load_lapack();
  return api;
}

// One LAPACK entry point of T's precision: s, d, c or z + name. LUCID_LAPACK_REAL and
// LUCID_LAPACK_COMPLEX name routines that exist only for real (orgqr, syevd) or complex
// (ungqr, heevd, hetrf) matrices; both sit in `if constexpr` branches on kComplex<T>.
#define LUCID_LAPACK_REAL(name, T, ...)                                   \
  do {                                                                    \
    if constexpr (std::is_same_v<T, float>) lapack().s##name(__VA_ARGS__); \
    else lapack().d##name(__VA_ARGS__);                                   \
  } while (0)
#define LUCID_LAPACK_COMPLEX(name, T, ...)                                    \
  do {                                                                        \
    if constexpr (std::is_same_v<T, complex64>) lapack().c##name(__VA_ARGS__); \
    else lapack().z##name(__VA_ARGS__);                                       \
  } while (0)
#define LUCID_LAPACK(name, T, ...)                                        \
  do {                                                                    \
    if constexpr (kComplex<T>) LUCID_LAPACK_COMPLEX(name, T, __VA_ARGS__); \
    else LUCID_LAPACK_REAL(name, T, __VA_ARGS__);                         \
  } while (0)

// Note [Recursive LU]
// (Real matrices: its products are gemm_raw's, which is real. A complex LU is getrf's.)
// OpenBLAS's getrf threads poorly (on 2 cores, 1024 x 1024: 1.2x over one thread,
// MKL's 1.7x). Toledo's recursive LU puts almost all of the work into one matrix
// product per level, which lucid's pool-threaded gemm runs near its peak: factor the
// left half of the columns (recursively), swap its pivot rows through the right half,
// A12 = L11^-1 A12, A22 -= A21 A12, factor A22, and swap A22's pivot rows back through
// the left half. Panels of up to kLuPanel columns are OpenBLAS's getrf. The pivots
// (and so L and U) are the ones getrf's partial pivoting picks. With MKL (Note [The
// CPU's LAPACK]) its own getrf is used: it threads well, and its OpenMP threads and
// lucid's pool taking turns inside one recursion cost more than either alone (1024:
// 18.5 ms recursive, torch's MKL 8.2).
constexpr int kLuPanel = 64;

template <class T>
int lu_recursive(int m, int n, T* a, int lda, int* ipiv) {
  const int k = std::min(m, n);
  if (k <= kLuPanel) {
    int info = 0;
    LUCID_LAPACK(getrf, T, &m, &n, a, &lda, ipiv, &info);
    return info;
  }
  const int n1 = k / 2, n2 = n - n1, one = 1;
  int info = lu_recursive(m, n1, a, lda, ipiv);
  T* right = a + int64_t(n1) * lda;
  LUCID_LAPACK_REAL(laswp, T, &n2, right, &lda, &one, &n1, ipiv, &one);
  // A12 = L11^-1 A12, column blocks across the pool
  parallel_for(n2, 64, [&](int64_t lo, int64_t hi) {
    const int cols = int(hi - lo);
    T* block = right + lo * lda;
    if constexpr (std::is_same_v<T, float>)
      cblas_strsm(CblasColMajor, CblasLeft, CblasLower, CblasNoTrans, CblasUnit, n1, cols, 1.0f, a, lda, block, lda);
    else
      cblas_dtrsm(CblasColMajor, CblasLeft, CblasLower, CblasNoTrans, CblasUnit, n1, cols, 1.0, a, lda, block, lda);
  });
  // A22 -= A21 A12: column-major, so row-major A22^T -= A12^T A21^T
  gemm_raw<T>(false, false, n2, m - n1, n1, T(-1), right, lda, a + n1, lda, T(1), right + n1, lda);
  const int info2 = lu_recursive(m - n1, n2, right + n1, lda, ipiv + n1);
  if (info == 0 && info2 > 0) info = info2 + n1;
  for (int i = n1; i < k; ++i) ipiv[i] += n1;
  const int first = n1 + 1;
  LUCID_LAPACK_REAL(laswp, T, &n1, a, &lda, &first, &k, ipiv, &one);
  return info;
}

// Note [Small matrices]
// A LAPACK call on an 8 x 8 matrix costs about 0.7 us in OpenBLAS, most of it the call
// itself (argument checks, its thread and buffer setup), ten times the arithmetic. A
// batch of matrices up to kSmall on a side is factored by the unblocked algorithms
// LAPACK's getf2 and potf2 run, written here for real and complex matrices alike: the
// same pivots and info codes (the first largest pivot in a column by |re| + |im|, the
// measure of LAPACK's i?amax; the first zero pivot; the first minor that is not
// positive-definite), values to rounding.
constexpr int kSmall = 16;

// LAPACK's pivot measure: |re| + |im| (|x| for a real x).
template <class T>
Real<T> abs1(T x) {
  return std::abs(std::real(x)) + std::abs(std::imag(x));
}
template <class T>
T conj_of(T x) {
  if constexpr (kComplex<T>) return std::conj(x);
  else return x;
}

template <class T>
int small_lu(int m, int n, T* a, int lda, int* ipiv) {
  int info = 0;
  for (int j = 0; j < std::min(m, n); ++j) {
    int p = j;
    for (int i = j + 1; i < m; ++i)
      if (abs1(a[i + j * lda]) > abs1(a[p + j * lda])) p = i;
    ipiv[j] = p + 1;
    const T pivot = a[p + j * lda];
    if (pivot != T(0)) {
      if (p != j)
        for (int c = 0; c < n; ++c) std::swap(a[j + c * lda], a[p + c * lda]);
      for (int i = j + 1; i < m; ++i) a[i + j * lda] /= pivot;
    } else if (info == 0) {
      info = j + 1;
    }
    for (int c = j + 1; c < n; ++c) {
      const T ajc = a[j + c * lda];
      for (int i = j + 1; i < m; ++i) a[i + c * lda] -= a[i + j * lda] * ajc;
    }
  }
  return info;
}

// (A Hermitian A's pivots are real: the diagonal's real part, less |l_jk|^2.)
template <class T>
int small_cholesky(int n, T* a, int lda) {
  for (int j = 0; j < n; ++j) {
    Real<T> ajj = std::real(a[j + j * lda]);
    for (int k = 0; k < j; ++k) ajj -= std::norm(a[j + k * lda]);
    if (!(ajj > 0)) {  // (NaN too)
      a[j + j * lda] = ajj;
      return j + 1;
    }
    ajj = std::sqrt(ajj);
    a[j + j * lda] = ajj;
    for (int i = j + 1; i < n; ++i) {
      T v = a[i + j * lda];
      for (int k = 0; k < j; ++k) v -= a[i + k * lda] * conj_of(a[j + k * lda]);
      a[i + j * lda] = v / ajj;
    }
  }
  return 0;
}

void lu_factor_kernel(const ops::Primitive&, Outputs outs, Inputs) {
  const TensorImpl *a = outs[0], *piv = outs[1];
  const int m = rows(a), n = cols(a), k = std::min(m, n), lda = std::max(1, m);
  const int64_t count = batch_of(a, 2);
  visit_float(a->dtype(), "linalg.lu_factor", [&]<class T>() {
    if constexpr (!kComplex<T>) {
      if (count == 1 && k > kLuPanel && !lapack().mkl) {  // one large matrix: Note [Recursive LU]
        info_of(outs[2])[0] = lu_recursive(m, n, matrix<T>(a, 0), lda, reinterpret_cast<int*>(piv->host_ptr()));
        return;
      }
    }
    const bool small = count > 1 && std::max(m, n) <= kSmall;  // Note [Small matrices]
    each_matrix(count, std::max(m, n), [&](int64_t b) {
      int* ipiv = reinterpret_cast<int*>(piv->host_ptr()) + b * k;
      int info = 0;
      if (small) info = small_lu(m, n, matrix<T>(a, b), lda, ipiv);
      else if (m > 0 && n > 0) LUCID_LAPACK(getrf, T, &m, &n, matrix<T>(a, b), &lda, ipiv, &info);
      info_of(outs[2])[b] = info;
    });
  });
}

void lu_solve_kernel(const ops::Primitive& prim, Outputs outs, Inputs ins) {
  const auto& p = prim_cast<ops::LuSolve>(prim);
  const TensorImpl *lu = ins[0], *piv = ins[1], *x = outs[0];
  const int n = rows(lu), k = cols(x), ld = std::max(1, n);
  visit_float(lu->dtype(), "linalg.lu_solve", [&]<class T>() {
    const char trans = !p.adjoint ? 'N' : kComplex<T> ? 'C' : 'T';
    each_matrix(batch_of(x, 2), std::max(n, k), [&](int64_t b) {
      const int* ipiv = reinterpret_cast<const int*>(piv->host_ptr()) + b * n;
      int info = 0;
      if (n > 0 && k > 0) LUCID_LAPACK(getrs, T, &trans, &n, &k, matrix<T>(lu, b), &ld, ipiv, matrix<T>(x, b), &ld,
                                       &info, 1);
    });
  });
}

// The Cholesky primitive's contract past potrf's: the strict upper triangle zeroed, and
// info naming the first NaN pivot, where reference LAPACK (and torch) stops and
// OpenBLAS's potrf carries on.
template <class T>
int finish_cholesky(int n, T* a, int info) {
  for (int j = 0; j < n; ++j) {
    if (info == 0 && std::isnan(std::real(a[j + j * n]))) info = j + 1;  // (complex: potrf's diagonal is real)
    for (int i = 0; i < j; ++i) a[i + j * n] = T(0);
  }
  return info;
}

void cholesky_kernel(const ops::Primitive&, Outputs outs, Inputs) {
  const TensorImpl* a = outs[0];
  const int n = rows(a), ld = std::max(1, n);
  const char uplo = 'L';
  const int64_t count = batch_of(a, 2);
  const bool small = count > 1 && n <= kSmall;  // Note [Small matrices]
  visit_float(a->dtype(), "linalg.cholesky", [&]<class T>() {
    each_matrix(count, n, [&](int64_t b) {
      int info = 0;
      if (small) info = small_cholesky(n, matrix<T>(a, b), ld);
      else if (n > 0) LUCID_LAPACK(potrf, T, &uplo, &n, matrix<T>(a, b), &ld, &info, 1);
      info_of(outs[1])[b] = finish_cholesky(n, matrix<T>(a, b), info);
    });
  });
}

void triangular_solve_kernel(const ops::Primitive& prim, Outputs outs, Inputs ins) {
  const auto& p = prim_cast<ops::TriangularSolve>(prim);
  const TensorImpl *a = ins[0], *x = outs[0];
  const int n = rows(a), m = rows(x), k = cols(x), lda = std::max(1, n), ldb = std::max(1, m);
  const CBLAS_SIDE side = p.left ? CblasLeft : CblasRight;
  const CBLAS_UPLO uplo = p.upper ? CblasUpper : CblasLower;
  const bool complex = a->dtype() == Dtype::C64 || a->dtype() == Dtype::C128;
  const CBLAS_TRANSPOSE trans = !p.transpose ? CblasNoTrans : complex ? CblasConjTrans : CblasTrans;
  const CBLAS_DIAG diag = p.unit ? CblasUnit : CblasNonUnit;
  visit_float(a->dtype(), "linalg.solve_triangular", [&]<class T>() {
    each_matrix(batch_of(x, 2), std::max(m, k), [&](int64_t b) {
      if (m == 0 || k == 0) return;
      const T one(1);
      if constexpr (std::is_same_v<T, float>)
        cblas_strsm(CblasColMajor, side, uplo, trans, diag, m, k, one, matrix<T>(a, b), lda, matrix<T>(x, b), ldb);
      else if constexpr (std::is_same_v<T, double>)
        cblas_dtrsm(CblasColMajor, side, uplo, trans, diag, m, k, one, matrix<T>(a, b), lda, matrix<T>(x, b), ldb);
      else if constexpr (std::is_same_v<T, complex64>)
        cblas_ctrsm(CblasColMajor, side, uplo, trans, diag, m, k, &one, matrix<T>(a, b), lda, matrix<T>(x, b), ldb);
      else
        cblas_ztrsm(CblasColMajor, side, uplo, trans, diag, m, k, &one, matrix<T>(a, b), lda, matrix<T>(x, b), ldb);
    });
  });
}

// LAPACK's workspace query: the optimal lwork of `call(work, lwork)`.
template <class T, class Call>
int query_lwork(Call&& call) {
  T size = 0;
  const int query = -1;
  call(&size, &query);
  return std::max(1, int(std::real(size)));  // (a complex routine's size is a complex number's real part)
}

void qr_factor_kernel(const ops::Primitive&, Outputs outs, Inputs) {
  const TensorImpl *a = outs[0], *tau = outs[1];
  const int m = rows(a), n = cols(a), k = std::min(m, n), lda = std::max(1, m);
  visit_float(a->dtype(), "linalg.qr", [&]<class T>() {
    each_matrix(batch_of(a, 2), std::max(m, n), [&](int64_t b) {
      if (k == 0) return;
      T* t = reinterpret_cast<T*>(tau->host_ptr()) + b * k;
      int info = 0;
      const int lwork = query_lwork<T>([&](T* w, const int* lw) {
        LUCID_LAPACK(geqrf, T, &m, &n, matrix<T>(a, b), &lda, t, w, lw, &info);
      });
      std::vector<T> work(static_cast<size_t>(lwork));
      LUCID_LAPACK(geqrf, T, &m, &n, matrix<T>(a, b), &lda, t, work.data(), &lwork, &info);
    });
  });
}

// The first n columns of Q from k reflectors: orgqr (real) or ungqr (complex).
template <class T>
void orgqr(int m, int n, int k, T* a, int lda, const T* tau, T* work, int lwork) {
  int info = 0;
  if constexpr (kComplex<T>) LUCID_LAPACK_COMPLEX(ungqr, T, &m, &n, &k, a, &lda, tau, work, &lwork, &info);
  else LUCID_LAPACK_REAL(orgqr, T, &m, &n, &k, a, &lda, tau, work, &lwork, &info);
}

void householder_product_kernel(const ops::Primitive&, Outputs outs, Inputs ins) {
  const TensorImpl *a = outs[0], *tau = ins[0];
  const int m = rows(a), n = cols(a), k = cols(tau), lda = std::max(1, m);
  visit_float(a->dtype(), "linalg.householder_product", [&]<class T>() {
    each_matrix(batch_of(a, 2), m, [&](int64_t b) {
      if (n == 0) return;
      const T* t = reinterpret_cast<const T*>(tau->host_ptr()) + b * k;
      const int lwork = query_lwork<T>([&](T* w, const int* lw) {
        orgqr<T>(m, n, k, matrix<T>(a, b), lda, t, w, *lw);
      });
      std::vector<T> work(static_cast<size_t>(lwork));
      orgqr<T>(m, n, k, matrix<T>(a, b), lda, t, work.data(), lwork);
    });
  });
}

// The eigenvalues (real) and vectors of a symmetric (syevd) or Hermitian (heevd) matrix,
// with LAPACK's workspace query; returns info.
template <class T>
int syevd(char jobz, char uplo, int n, T* a, int ld, Real<T>* w) {
  int info = 0, liwork = 0;
  const int query = -1;
  T lwork_size = 0;
  Real<T> lrwork_size = 0;
  if constexpr (kComplex<T>)
    LUCID_LAPACK_COMPLEX(heevd, T, &jobz, &uplo, &n, a, &ld, w, &lwork_size, &query, &lrwork_size, &query, &liwork,
                         &query, &info, 1, 1);
  else
    LUCID_LAPACK_REAL(syevd, T, &jobz, &uplo, &n, a, &ld, w, &lwork_size, &query, &liwork, &query, &info, 1, 1);
  const int lwork = std::max(1, int(std::real(lwork_size))), lrwork = std::max(1, int(lrwork_size));
  liwork = std::max(1, liwork);
  std::vector<T> work(static_cast<size_t>(lwork));
  std::vector<int> iwork(static_cast<size_t>(liwork));
  if constexpr (kComplex<T>) {
    std::vector<Real<T>> rwork(static_cast<size_t>(lrwork));
    LUCID_LAPACK_COMPLEX(heevd, T, &jobz, &uplo, &n, a, &ld, w, work.data(), &lwork, rwork.data(), &lrwork,
                         iwork.data(), &liwork, &info, 1, 1);
  } else {
    LUCID_LAPACK_REAL(syevd, T, &jobz, &uplo, &n, a, &ld, w, work.data(), &lwork, iwork.data(), &liwork, &info, 1,
                      1);
  }
  return info;
}

void eigh_kernel(const ops::Primitive& prim, Outputs outs, Inputs) {
  const auto& p = prim_cast<ops::Eigh>(prim);
  const TensorImpl *a = outs[0], *w = outs[1];
  const int n = rows(a), ld = std::max(1, n);
  const char jobz = p.vectors ? 'V' : 'N', uplo = p.upper ? 'U' : 'L';
  visit_float(a->dtype(), "linalg.eigh", [&]<class T>() {
    each_matrix(batch_of(a, 2), n, [&](int64_t b) {
      Real<T>* values = reinterpret_cast<Real<T>*>(w->host_ptr()) + b * n;
      info_of(outs[2])[b] = n > 0 ? syevd<T>(jobz, uplo, n, matrix<T>(a, b), ld, values) : 0;
    });
  });
}

// Bunch-Kaufman LDL of the lower triangle: sytrf (A = L D L^T), or for a complex
// `hermitian` matrix hetrf (A = L D L^H; a real matrix's sytrf is both). lwork < 0
// asks for the workspace size in work[0].
template <class T>
int sytrf(bool hermitian, int n, T* a, int ld, int* ipiv, T* work, int lwork) {
  const char uplo = 'L';
  int info = 0;
  if constexpr (kComplex<T>) {
    if (hermitian) LUCID_LAPACK_COMPLEX(hetrf, T, &uplo, &n, a, &ld, ipiv, work, &lwork, &info, 1);
    else LUCID_LAPACK_COMPLEX(sytrf, T, &uplo, &n, a, &ld, ipiv, work, &lwork, &info, 1);
  } else {
    LUCID_LAPACK_REAL(sytrf, T, &uplo, &n, a, &ld, ipiv, work, &lwork, &info, 1);
  }
  return info;
}

void ldl_factor_kernel(const ops::Primitive& prim, Outputs outs, Inputs) {
  const bool hermitian = prim_cast<ops::LdlFactor>(prim).hermitian;
  const TensorImpl *a = outs[0], *piv = outs[1];
  const int n = rows(a), ld = std::max(1, n);
  visit_float(a->dtype(), "linalg.ldl_factor", [&]<class T>() {
    each_matrix(batch_of(a, 2), n, [&](int64_t b) {
      int info = 0;
      if (n > 0) {
        int* ipiv = reinterpret_cast<int*>(piv->host_ptr()) + b * n;
        const int lwork = query_lwork<T>([&](T* work, const int* lw) {
          sytrf<T>(hermitian, n, matrix<T>(a, b), ld, ipiv, work, *lw);
        });
        std::vector<T> work(static_cast<size_t>(lwork));
        info = sytrf<T>(hermitian, n, matrix<T>(a, b), ld, ipiv, work.data(), lwork);
      }
      info_of(outs[2])[b] = info;
    });
  });
}

// The pivots are the user's (linalg.ldl_solve takes any tensor), and sytrs reads rows
// through them unchecked: the test both devices share (ops/prims/decompose.h) first.
void check_ldl_pivots(const int* p, int n) {
  if (const int k = ops::first_bad_ldl_pivot(p, n); k >= 0) ops::fail_bad_ldl_pivot(k, p[k], n);
}

void ldl_solve_kernel(const ops::Primitive& prim, Outputs outs, Inputs ins) {
  const bool hermitian = prim_cast<ops::LdlSolve>(prim).hermitian;
  const TensorImpl *ldt = ins[0], *piv = ins[1], *x = outs[0];
  const int n = rows(ldt), k = cols(x), ld = std::max(1, n);
  if (n == 0 || k == 0) return;
  const char uplo = 'L';
  visit_float(ldt->dtype(), "linalg.ldl_solve", [&]<class T>() {
    each_matrix(batch_of(x, 2), n, [&](int64_t b) {
      const int* ipiv = reinterpret_cast<const int*>(piv->host_ptr()) + b * n;
      check_ldl_pivots(ipiv, n);
      T *lb = matrix<T>(ldt, b), *xb = matrix<T>(x, b);
      int info = 0;
      if constexpr (kComplex<T>) {
        if (hermitian) LUCID_LAPACK_COMPLEX(hetrs, T, &uplo, &n, &k, lb, &ld, ipiv, xb, &ld, &info, 1);
        else LUCID_LAPACK_COMPLEX(sytrs, T, &uplo, &n, &k, lb, &ld, ipiv, xb, &ld, &info, 1);
      } else {
        LUCID_LAPACK_REAL(sytrs, T, &uplo, &n, &k, lb, &ld, ipiv, xb, &ld, &info, 1);
      }
    });
  });
}

// geev of one matrix: a real one's eigenvalues to w as [real parts; imaginary parts]
// (LAPACK's packing, 2n entries), a complex one's to w as n complex numbers; the right
// eigenvectors to vr when given. Returns info.
template <class T>
int geev(int n, T* a, T* w, T* vr) {
  const char jobvl = 'N', jobvr = vr ? 'V' : 'N';
  const int ld = std::max(1, n), one = 1;
  T unused = 0;
  int info = 0;
  std::vector<Real<T>> rwork(kComplex<T> ? 2 * size_t(n) : 0);
  auto call = [&](T* work, const int* lwork) {
    if constexpr (kComplex<T>)
      LUCID_LAPACK_COMPLEX(geev, T, &jobvl, &jobvr, &n, a, &ld, w, &unused, &one, vr, &ld, work, lwork,
                           rwork.data(), &info, 1, 1);
    else
      LUCID_LAPACK_REAL(geev, T, &jobvl, &jobvr, &n, a, &ld, w, w + n, &unused, &one, vr, &ld, work, lwork, &info,
                        1, 1);
  };
  const int lwork = query_lwork<T>(call);
  std::vector<T> work(static_cast<size_t>(lwork));
  call(work.data(), &lwork);
  return info;
}

void eig_kernel(const ops::Primitive& prim, Outputs outs, Inputs) {
  const auto& p = prim_cast<ops::Eig>(prim);
  const TensorImpl *a = outs[0], *w = outs[1];
  const TensorImpl* v = p.vectors ? outs[3] : nullptr;
  const int n = rows(a);
  visit_float(a->dtype(), "linalg.eig", [&]<class T>() {
    const int64_t w_size = kComplex<T> ? n : 2 * int64_t(n);
    each_matrix(batch_of(a, 2), n, [&](int64_t b) {
      T* wb = reinterpret_cast<T*>(w->host_ptr()) + b * w_size;
      info_of(outs[2])[b] = n > 0 ? geev<T>(n, matrix<T>(a, b), wb, v ? matrix<T>(v, b) : nullptr) : 0;
    });
  });
}

// gesdd of one [m, n] matrix (jobz 'N', 'S' or 'A'); the complex routine's real
// workspace sized by LAPACK's documented bound. Returns info.
template <class T>
int gesdd(char jobz, int m, int n, T* a, Real<T>* s, T* u, int ldu, T* vt, int ldvt) {
  const int k = std::min(m, n), big = std::max(m, n), lda = std::max(1, m);
  int info = 0;
  std::vector<int> iwork(static_cast<size_t>(8 * k));
  const size_t mn = size_t(k), mx = size_t(big);
  const size_t lrwork =
      !kComplex<T> ? 0 : jobz == 'N' ? 7 * mn : std::max(5 * mn * mn + 5 * mn, 2 * mx * mn + 2 * mn * mn + mn);
  std::vector<Real<T>> rwork(std::max<size_t>(1, lrwork));
  auto call = [&](T* work, const int* lwork) {
    if constexpr (kComplex<T>)
      LUCID_LAPACK_COMPLEX(gesdd, T, &jobz, &m, &n, a, &lda, s, u, &ldu, vt, &ldvt, work, lwork, rwork.data(),
                           iwork.data(), &info, 1);
    else
      LUCID_LAPACK_REAL(gesdd, T, &jobz, &m, &n, a, &lda, s, u, &ldu, vt, &ldvt, work, lwork, iwork.data(), &info, 1);
  };
  const int lwork = query_lwork<T>(call);
  std::vector<T> work(static_cast<size_t>(lwork));
  call(work.data(), &lwork);
  return info;
}

void svd_kernel(const ops::Primitive& prim, Outputs outs, Inputs ins) {
  const auto& p = prim_cast<ops::Svd>(prim);
  const TensorImpl *a = ins[0], *s = outs[0];
  const TensorImpl* u = p.vectors ? outs[2] : nullptr;
  const TensorImpl* vh = p.vectors ? outs[3] : nullptr;
  const int m = rows(a), n = cols(a), k = std::min(m, n);
  const char jobz = !p.vectors ? 'N' : p.full ? 'A' : 'S';
  const int ldu = std::max(1, m), ldvt = std::max(1, p.full ? n : k);
  visit_float(a->dtype(), "linalg.svd", [&]<class T>() {
    each_matrix(batch_of(a, 2), std::max(m, n), [&](int64_t b) {
      Real<T>* values = reinterpret_cast<Real<T>*>(s->host_ptr()) + b * k;
      info_of(outs[1])[b] = k > 0 ? gesdd<T>(jobz, m, n, matrix<T>(a, b), values, u ? matrix<T>(u, b) : nullptr, ldu,
                                             vh ? matrix<T>(vh, b) : nullptr, ldvt)
                                  : 0;
    });
  });
}

#undef LUCID_LAPACK
#undef LUCID_LAPACK_REAL
#undef LUCID_LAPACK_COMPLEX

#else  // no LAPACK: each op says so

void no_lapack(const ops::Primitive& prim, Outputs, Inputs) {
  fail<RuntimeError>(prim.name(), ": lucid was built without LAPACK (OpenBLAS), which the CPU's decompositions "
                     "need; install libopenblas-dev and rebuild, or run it on the GPU");
}

#endif

}  // namespace

bool has_lapack() {
#ifdef LUCID_HAVE_OPENBLAS
  return true;
#else
  return false;
#endif
}

void register_decompose_kernels() {
  using ops::Prim;
#ifdef LUCID_HAVE_OPENBLAS
  ops::register_kernel(Prim::LuFactor, DeviceType::CPU, lu_factor_kernel);
  ops::register_kernel(Prim::LuSolve, DeviceType::CPU, lu_solve_kernel);
  ops::register_kernel(Prim::Cholesky, DeviceType::CPU, cholesky_kernel);
  ops::register_kernel(Prim::TriangularSolve, DeviceType::CPU, triangular_solve_kernel);
  ops::register_kernel(Prim::QrFactor, DeviceType::CPU, qr_factor_kernel);
  ops::register_kernel(Prim::HouseholderProduct, DeviceType::CPU, householder_product_kernel);
  ops::register_kernel(Prim::Eigh, DeviceType::CPU, eigh_kernel);
  ops::register_kernel(Prim::Eig, DeviceType::CPU, eig_kernel);
  ops::register_kernel(Prim::LdlFactor, DeviceType::CPU, ldl_factor_kernel);
  ops::register_kernel(Prim::LdlSolve, DeviceType::CPU, ldl_solve_kernel);
  ops::register_kernel(Prim::Svd, DeviceType::CPU, svd_kernel);
#else
  for (Prim p : {Prim::LuFactor, Prim::LuSolve, Prim::Cholesky, Prim::TriangularSolve, Prim::QrFactor,
                 Prim::HouseholderProduct, Prim::Eigh, Prim::Eig, Prim::Svd, Prim::LdlFactor, Prim::LdlSolve})
    ops::register_kernel(p, DeviceType::CPU, no_lapack);
#endif
}

}  // namespace lucid::cpu
