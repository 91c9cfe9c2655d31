// GPU kernels of the matrix decompositions (ops/prims/decompose.h): cuSOLVER's dense
// routines (and cuBLAS's trsm), one call per matrix of the batch on the device's
// stream, the workspace sized once for the batch; a batch of small matrices (at most
// kBatchedSize) goes to the batched routines instead, one call for the whole batch
// (cuBLAS's getrf/getrs/trsm, cuSOLVER's Jacobi syevj, small_matrices.h's Cholesky and
// Householder QR, which also takes a single small matrix): a call costs some
// microseconds of host time, which 4096 separate 8 x 8 factorizations would spend
// thousands of times. info goes straight from cuSOLVER to the op's int32 tensor (the
// op reads it when it raises, as torch's linalg does).
#include <algorithm>
#include <type_traits>
#include <vector>

#include "backend/cuda/caching_allocator.h"
#include "backend/cuda/check.h"
#include "backend/cuda/conj.h"
#include "backend/cuda/device_guard.h"
#include "backend/cuda/flush_graphs.h"
#include "backend/cuda/ldl.h"
#include "backend/cuda/register.h"
#include "backend/cuda/small_matrices.h"
#include "backend/cuda/solver.h"
#include "backend/cuda/stream.h"
#include "backend/cuda/strided_copy.h"
#include "core/error.h"
#include "ops/prims/decompose.h"

namespace lucid::cuda {

namespace {

using ops::Inputs;
using ops::Outputs;
using ops::prim_cast;

int rows(const TensorImpl* t) { return int(t->shape()[t->ndim() - 2]); }
int cols(const TensorImpl* t) { return int(t->shape()[t->ndim() - 1]); }
int64_t batch_of(const TensorImpl* t, int dims) {
  int64_t n = 1;
  for (int64_t i = 0; i < t->ndim() - dims; ++i) n *= t->shape()[i];
  return n;
}
// Matrix (or vector, `dims` 1) b of a dense batch.
template <class T>
T* item(const TensorImpl* t, int64_t b, int dims = 2) {
  const int64_t size = dims == 2 ? int64_t(rows(t)) * cols(t) : t->shape().back();
  return reinterpret_cast<T*>(t->data_ptr()) + b * size;
}
int* info_at(const TensorImpl* info, int64_t b) { return reinterpret_cast<int*>(info->data_ptr()) + b; }

void zero(const TensorImpl* t) {
  if (t->nbytes()) LUCID_CUDA_CHECK(cudaMemsetAsync(t->data_ptr(), 0, t->nbytes(), stream(t->device().index)));
}

// A float workspace of `count` elements (at least one) on the device.
template <class T>
GpuStorage workspace(int64_t count, int device) {
  return CachingAllocator::instance().allocate(size_t(std::max<int64_t>(1, count)) * sizeof(T), device);
}

// The libraries' element types: float, double, cuComplex (complex64) and
// cuDoubleComplex (complex128); Real<T> is the type of a Hermitian matrix's eigenvalues
// and of singular values.
template <class T>
constexpr bool kComplex = std::is_same_v<T, cuComplex> || std::is_same_v<T, cuDoubleComplex>;
template <class T>
using Real = std::conditional_t<std::is_same_v<T, cuComplex>, float,
                                std::conditional_t<std::is_same_v<T, cuDoubleComplex>, double, T>>;
template <class T>
T one_of() {
  if constexpr (kComplex<T>) return T{1, 0};
  else return T(1);
}

// f.template operator()<T>() with T the library's type of dtype d.
template <class F>
void visit_float(Dtype d, const char* op, F&& f) {
  switch (d) {
    case Dtype::F32: return f.template operator()<float>();
    case Dtype::F64: return f.template operator()<double>();
    case Dtype::C64: return f.template operator()<cuComplex>();
    case Dtype::C128: return f.template operator()<cuDoubleComplex>();
    default: fail<NotImplementedError>(op, ": not implemented for '", dtype_name(d), "' on the GPU");
  }
}

// Matrices up to this order in a batch of several go to the batched routines (Jacobi's
// syevj takes up to 32) and small_matrices.h's kernels.
constexpr int kBatchedSize = kSmallOrder;

void check_cublas_call(cublasStatus_t status, const char* call) {
  LUCID_CHECK(status == CUBLAS_STATUS_SUCCESS, RuntimeError, "cuBLAS error ", int(status), " in ", call);
}

// The device array of the batch's matrix pointers that cuBLAS's batched calls take,
// filled by a kernel (an upload from pageable host memory cost more than the batched
// call it fed).
template <class T>
GpuStorage pointer_array(const TensorImpl* t, int64_t count, int device) {
  GpuStorage d = CachingAllocator::instance().allocate(size_t(count) * sizeof(T*), device);
  fill_pointer_array(reinterpret_cast<void**>(d.ptr()), item<T>(t, 0), int64_t(rows(t)) * cols(t) * int64_t(sizeof(T)),
                     count, device);
  return d;
}
template <class T>
T** pointers(const GpuStorage& s) {
  return reinterpret_cast<T**>(s.ptr());
}

// The S, D, C or Z routine of a library's table, by T (LUCID_PICK(api, getrf) picks
// api.sgetrf ... api.zgetrf; LUCID_PICK_RC names the complex form apart: orgqr's ungqr).
template <class T, class S, class D, class C, class Z>
auto pick(S s, D d, C c, Z z) {
  if constexpr (std::is_same_v<T, float>) return s;
  else if constexpr (std::is_same_v<T, double>) return d;
  else if constexpr (std::is_same_v<T, cuComplex>) return c;
  else return z;
}
#define LUCID_PICK(api, name) pick<T>(api.s##name, api.d##name, api.c##name, api.z##name)
#define LUCID_PICK_RC(api, real, cplx) pick<T>(api.s##real, api.d##real, api.c##cplx, api.z##cplx)

void lu_factor_kernel(const ops::Primitive&, Outputs outs, Inputs) {
  const TensorImpl *a = outs[0], *piv = outs[1], *info = outs[2];
  const int m = rows(a), n = cols(a), lda = std::max(1, m), device = a->device().index;
  DeviceGuard guard(device);
  zero(info);
  if (m == 0 || n == 0) return;
  const int64_t count = batch_of(a, 2);
  visit_float(a->dtype(), "linalg.lu_factor", [&]<class T>() {
    if (count > 1 && m == n && n <= kBatchedSize) {
      GpuStorage ptrs = pointer_array<T>(a, count, device);
      check_cublas_call(LUCID_PICK(cublas(), getrf_batched)(cublas_handle(device), n, pointers<T>(ptrs), lda,
                                                            item<int>(piv, 0, 1), info_at(info, 0), int(count)),
                        "getrfBatched");
      return;
    }
    const SolverApi& s = cusolver();
    cusolverDnHandle_t h = cusolver_handle(device);
    int lwork = 0;
    check_cusolver(LUCID_PICK(s, getrf_size)(h, m, n, item<T>(a, 0), lda, &lwork), "getrf_bufferSize");
    GpuStorage work = workspace<T>(lwork, device);
    for (int64_t b = 0; b < count; ++b)
      check_cusolver(LUCID_PICK(s, getrf)(h, m, n, item<T>(a, b), lda, reinterpret_cast<T*>(work.ptr()),
                                          item<int>(piv, b, 1), info_at(info, b)),
                     "getrf");
  });
}

void lu_solve_kernel(const ops::Primitive& prim, Outputs outs, Inputs ins) {
  const auto& p = prim_cast<ops::LuSolve>(prim);
  const TensorImpl *lu = ins[0], *piv = ins[1], *x = outs[0];
  const int n = rows(lu), k = cols(x), ld = std::max(1, n), device = x->device().index;
  if (n == 0 || k == 0) return;
  DeviceGuard guard(device);
  const int64_t count = batch_of(x, 2);
  visit_float(lu->dtype(), "linalg.lu_solve", [&]<class T>() {
    const cublasOperation_t trans = !p.adjoint ? CUBLAS_OP_N : kComplex<T> ? CUBLAS_OP_C : CUBLAS_OP_T;
    if (count > 1 && n <= kBatchedSize) {
      GpuStorage a_ptrs = pointer_array<T>(lu, count, device), b_ptrs = pointer_array<T>(x, count, device);
      int arg_info = 0;  // (a host int: cuBLAS checks only its arguments here)
      check_cublas_call(
          LUCID_PICK(cublas(), getrs_batched)(cublas_handle(device), trans, n, k, pointers<T>(a_ptrs), ld,
                                              item<int>(piv, 0, 1), pointers<T>(b_ptrs), ld, &arg_info, int(count)),
          "getrsBatched");
      return;
    }
    const SolverApi& s = cusolver();
    cusolverDnHandle_t h = cusolver_handle(device);
    GpuStorage status = CachingAllocator::instance().allocate(sizeof(int), device);
    for (int64_t b = 0; b < count; ++b)
      check_cusolver(LUCID_PICK(s, getrs)(h, trans, n, k, item<T>(lu, b), ld, item<int>(piv, b, 1), item<T>(x, b), ld,
                                          reinterpret_cast<int*>(status.ptr())),
                     "getrs");
  });
}

void cholesky_kernel(const ops::Primitive&, Outputs outs, Inputs) {
  const TensorImpl *a = outs[0], *info = outs[1];
  const int n = rows(a), ld = std::max(1, n), device = a->device().index;
  DeviceGuard guard(device);
  zero(info);
  if (n == 0) return;
  const int64_t count = batch_of(a, 2);
  visit_float(a->dtype(), "linalg.cholesky", [&]<class T>() {
    const SolverApi& s = cusolver();
    cusolverDnHandle_t h = cusolver_handle(device);
    const cublasFillMode_t lower = CUBLAS_FILL_MODE_LOWER;
    if (count > 1 && n <= kBatchedSize) {
      if constexpr (kComplex<T>) {  // (small_matrices.h's potf2 is real: cuSOLVER's batched call)
        GpuStorage ptrs = pointer_array<T>(a, count, device);
        auto potrf_batched = pick<T>(nullptr, nullptr, s.cpotrf_batched, s.zpotrf_batched);  // (C and Z only)
        check_cusolver(potrf_batched(h, lower, n, pointers<T>(ptrs), ld, info_at(info, 0), int(count)), "potrfBatched");
        finish_cholesky(a->dtype(), a->data_ptr(), info_at(info, 0), n, count, device);
      } else {
        batched_potf2(a->dtype(), a->data_ptr(), info_at(info, 0), n, count, device);
      }
      return;
    }
    int lwork = 0;
    check_cusolver(LUCID_PICK(s, potrf_size)(h, lower, n, item<T>(a, 0), ld, &lwork), "potrf_bufferSize");
    GpuStorage work = workspace<T>(lwork, device);
    for (int64_t b = 0; b < count; ++b)
      check_cusolver(LUCID_PICK(s, potrf)(h, lower, n, item<T>(a, b), ld, reinterpret_cast<T*>(work.ptr()), lwork,
                                          info_at(info, b)),
                     "potrf");
    finish_cholesky(a->dtype(), a->data_ptr(), info_at(info, 0), n, count, device);
  });
}

void triangular_solve_kernel(const ops::Primitive& prim, Outputs outs, Inputs ins) {
  const auto& p = prim_cast<ops::TriangularSolve>(prim);
  const TensorImpl *a = ins[0], *x = outs[0];
  const int n = rows(a), m = rows(x), k = cols(x), lda = std::max(1, n), ldb = std::max(1, m);
  const int device = x->device().index;
  if (m == 0 || k == 0) return;
  DeviceGuard guard(device);
  visit_float(a->dtype(), "linalg.solve_triangular", [&]<class T>() {
    const BlasApi& api = cublas();
    cublasHandle_t h = cublas_handle(device);
    const T one = one_of<T>();
    const cublasSideMode_t side = p.left ? CUBLAS_SIDE_LEFT : CUBLAS_SIDE_RIGHT;
    const cublasFillMode_t uplo = p.upper ? CUBLAS_FILL_MODE_UPPER : CUBLAS_FILL_MODE_LOWER;
    const cublasOperation_t trans = !p.transpose ? CUBLAS_OP_N : kComplex<T> ? CUBLAS_OP_C : CUBLAS_OP_T;
    const cublasDiagType_t diag = p.unit ? CUBLAS_DIAG_UNIT : CUBLAS_DIAG_NON_UNIT;
    const int64_t count = batch_of(x, 2);
    if (count > 1 && std::max(m, k) <= kBatchedSize) {
      GpuStorage a_ptrs = pointer_array<T>(a, count, device), b_ptrs = pointer_array<T>(x, count, device);
      check_cublas_call(LUCID_PICK(api, trsm_batched)(h, side, uplo, trans, diag, m, k, &one, pointers<T>(a_ptrs), lda,
                                                      pointers<T>(b_ptrs), ldb, int(count)),
                        "trsmBatched");
      return;
    }
    for (int64_t b = 0; b < count; ++b)
      check_cublas_call(
          LUCID_PICK(api, trsm)(h, side, uplo, trans, diag, m, k, &one, item<T>(a, b), lda, item<T>(x, b), ldb),
          "trsm");
  });
}

void qr_factor_kernel(const ops::Primitive&, Outputs outs, Inputs) {
  const TensorImpl *a = outs[0], *tau = outs[1];
  const int m = rows(a), n = cols(a), lda = std::max(1, m), device = a->device().index;
  if (std::min(m, n) == 0) return;
  DeviceGuard guard(device);
  const int64_t count = batch_of(a, 2);
  const bool real = a->dtype() == Dtype::F32 || a->dtype() == Dtype::F64;  // (the own kernels' dtypes)
  if (real && m <= kBatchedSize && n <= kBatchedSize) {  // one launch, where cuSOLVER takes two calls a matrix
    batched_geqr2(a->dtype(), a->data_ptr(), tau->data_ptr(), m, n, count, device);
    return;
  }
  visit_float(a->dtype(), "linalg.qr", [&]<class T>() {
    const SolverApi& s = cusolver();
    cusolverDnHandle_t h = cusolver_handle(device);
    int lwork = 0;
    check_cusolver(LUCID_PICK(s, geqrf_size)(h, m, n, item<T>(a, 0), lda, &lwork), "geqrf_bufferSize");
    GpuStorage work = workspace<T>(lwork, device);
    GpuStorage status = CachingAllocator::instance().allocate(sizeof(int), device);
    for (int64_t b = 0; b < count; ++b)
      check_cusolver(
          LUCID_PICK(s, geqrf)(h, m, n, item<T>(a, b), lda, item<T>(tau, b, 1), reinterpret_cast<T*>(work.ptr()), lwork,
                               reinterpret_cast<int*>(status.ptr())),
          "geqrf");
  });
}

void householder_product_kernel(const ops::Primitive&, Outputs outs, Inputs ins) {
  const TensorImpl *a = outs[0], *tau = ins[0];
  const int m = rows(a), n = cols(a), k = int(tau->shape().back()), lda = std::max(1, m);
  const int device = a->device().index;
  if (n == 0) return;
  DeviceGuard guard(device);
  const int64_t count = batch_of(a, 2);
  const bool real = a->dtype() == Dtype::F32 || a->dtype() == Dtype::F64;  // (the own kernels' dtypes)
  if (real && m <= kBatchedSize) {
    batched_org2r(a->dtype(), a->data_ptr(), tau->data_ptr(), m, n, k, count, device);
    return;
  }
  visit_float(a->dtype(), "linalg.householder_product", [&]<class T>() {
    const SolverApi& s = cusolver();
    cusolverDnHandle_t h = cusolver_handle(device);
    int lwork = 0;
    check_cusolver(LUCID_PICK_RC(s, orgqr_size, ungqr_size)(h, m, n, k, item<T>(a, 0), lda, item<T>(tau, 0, 1), &lwork),
                   "orgqr_bufferSize");
    GpuStorage work = workspace<T>(lwork, device);
    GpuStorage status = CachingAllocator::instance().allocate(sizeof(int), device);
    for (int64_t b = 0; b < count; ++b)
      check_cusolver(
          LUCID_PICK_RC(s, orgqr, ungqr)(h, m, n, k, item<T>(a, b), lda, item<T>(tau, b, 1),
                                         reinterpret_cast<T*>(work.ptr()), lwork, reinterpret_cast<int*>(status.ptr())),
          "orgqr");
  });
}

void eigh_kernel(const ops::Primitive& prim, Outputs outs, Inputs) {
  const auto& p = prim_cast<ops::Eigh>(prim);
  const TensorImpl *a = outs[0], *w = outs[1], *info = outs[2];
  const int n = rows(a), ld = std::max(1, n), device = a->device().index;
  DeviceGuard guard(device);
  zero(info);
  if (n == 0) return;
  visit_float(a->dtype(), "linalg.eigh", [&]<class T>() {
    const SolverApi& s = cusolver();
    cusolverDnHandle_t h = cusolver_handle(device);
    const cusolverEigMode_t jobz = p.vectors ? CUSOLVER_EIG_MODE_VECTOR : CUSOLVER_EIG_MODE_NOVECTOR;
    const cublasFillMode_t uplo = p.upper ? CUBLAS_FILL_MODE_UPPER : CUBLAS_FILL_MODE_LOWER;
    const int64_t count = batch_of(a, 2);
    if (count > 1 && n <= kBatchedSize) {  // Jacobi, to the precision's accuracy, eigenvalues sorted
      static syevjInfo_t params = [&] {
        syevjInfo_t made = nullptr;
        check_cusolver(s.create_syevj_info(&made), "cusolverDnCreateSyevjInfo");
        return made;
      }();
      int lwork = 0;
      check_cusolver(LUCID_PICK_RC(s, syevj_batched_size, heevj_batched_size)(
                         h, jobz, uplo, n, item<T>(a, 0), ld, item<Real<T>>(w, 0, 1), &lwork, params, int(count)),
                     "syevjBatched_bufferSize");
      GpuStorage work = workspace<T>(lwork, device);
      check_cusolver(LUCID_PICK_RC(s, syevj_batched, heevj_batched)(
                         h, jobz, uplo, n, item<T>(a, 0), ld, item<Real<T>>(w, 0, 1), reinterpret_cast<T*>(work.ptr()),
                         lwork, info_at(info, 0), params, int(count)),
                     "syevjBatched");
      return;
    }
    int lwork = 0;
    check_cusolver(
        LUCID_PICK_RC(s, syevd_size, heevd_size)(h, jobz, uplo, n, item<T>(a, 0), ld, item<Real<T>>(w, 0, 1), &lwork),
        "syevd_bufferSize");
    GpuStorage work = workspace<T>(lwork, device);
    for (int64_t b = 0; b < count; ++b)
      check_cusolver(LUCID_PICK_RC(s, syevd, heevd)(h, jobz, uplo, n, item<T>(a, b), ld, item<Real<T>>(w, b, 1),
                                                    reinterpret_cast<T*>(work.ptr()), lwork, info_at(info, b)),
                     "syevd");
  });
}

// The SVD by one-sided Jacobi (cuSOLVER's gesvdj, torch's default driver on CUDA; gesvd
// took 1.96x torch's time on a 1024 x 1024 matrix): per matrix, or a batch of small ones
// in one gesvdjBatched call. Jacobi gives V, not Vh: it goes to scratch and is copied
// out transposed (and conjugated, for a complex A), as is U when the batched call (full matrices only) makes more
// columns than asked for.
template <class T>
void svd_jacobi(const ops::Svd& p, const TensorImpl* a, const TensorImpl* s_out, const TensorImpl* info,
                const TensorImpl* u, const TensorImpl* vh, int64_t count) {
  const int m = rows(a), n = cols(a), k = std::min(m, n), device = a->device().index;
  const bool batched = count > 1 && std::max(m, n) <= kBatchedSize;
  const SolverApi& s = cusolver();
  cusolverDnHandle_t h = cusolver_handle(device);
  static gesvdjInfo_t params = [&] {
    gesvdjInfo_t made = nullptr;
    check_cusolver(s.create_gesvdj_info(&made), "cusolverDnCreateGesvdjInfo");
    return made;
  }();
  const cusolverEigMode_t jobz = p.vectors ? CUSOLVER_EIG_MODE_VECTOR : CUSOLVER_EIG_MODE_NOVECTOR;
  // (the batched call makes full U and V; the other, economy ones unless full_matrices)
  const int econ = batched || p.full ? 0 : 1;
  const int ucols = econ ? k : m, vcols = econ ? k : n;
  const bool u_direct = p.vectors && !batched;  // U straight into u
  GpuStorage scratch_u = u_direct ? GpuStorage{} : workspace<T>((batched ? count : 1) * m * ucols, device);
  GpuStorage scratch_v = workspace<T>((batched ? count : 1) * n * vcols, device);
  T* U = u_direct ? item<T>(u, 0) : reinterpret_cast<T*>(scratch_u.ptr());
  T* V = reinterpret_cast<T*>(scratch_v.ptr());
  const int64_t z = sizeof(T);
  // (strides of a dense batch of column-major matrices of `order` rows: to copy V^T, U out)
  auto batch_strides = [&](const TensorImpl* out, int64_t row, int64_t col, int64_t size) {
    Stride st(size_t(out->ndim()));
    const int64_t r = out->ndim();
    st[r - 2] = row, st[r - 1] = col;
    int64_t step = size;
    for (int64_t i = r - 3; i >= 0; --i) st[i] = step, step *= out->shape()[i];
    return st;
  };
  if (batched) {
    int lwork = 0;
    check_cusolver(LUCID_PICK(s, gesvdj_batched_size)(h, jobz, m, n, item<T>(a, 0), m, item<Real<T>>(s_out, 0, 1), U, m,
                                                      V, n, &lwork, params, int(count)),
                   "gesvdjBatched_bufferSize");
    GpuStorage work = workspace<T>(lwork, device);
    check_cusolver(
        LUCID_PICK(s, gesvdj_batched)(h, jobz, m, n, item<T>(a, 0), m, item<Real<T>>(s_out, 0, 1), U, m, V, n,
                                      reinterpret_cast<T*>(work.ptr()), lwork, info_at(info, 0), params, int(count)),
        "gesvdjBatched");
    if (!p.vectors) return;
    strided_copy(u->data_ptr(), u->stride(), scratch_u.ptr(), batch_strides(u, z, m * z, m * m * z), u->shape(), z,
                 device);
    strided_copy(vh->data_ptr(), vh->stride(), scratch_v.ptr(), batch_strides(vh, n * z, z, n * n * z), vh->shape(),
                 z, device);
    if constexpr (kComplex<T>)  // Vh = V^H
      conjugate(vh->dtype(), vh->data_ptr(), vh->data_ptr(), vh->numel(), device);
    return;
  }
  int lwork = 0;
  check_cusolver(LUCID_PICK(s, gesvdj_size)(h, jobz, econ, m, n, item<T>(a, 0), m, item<Real<T>>(s_out, 0, 1), U, m, V,
                                            n, &lwork, params),
                 "gesvdj_bufferSize");
  GpuStorage work = workspace<T>(lwork, device);
  for (int64_t b = 0; b < count; ++b) {
    T* ub = u_direct ? item<T>(u, b) : U;
    check_cusolver(LUCID_PICK(s, gesvdj)(h, jobz, econ, m, n, item<T>(a, b), m, item<Real<T>>(s_out, b, 1), ub, m, V, n,
                                         reinterpret_cast<T*>(work.ptr()), lwork, info_at(info, b), params),
                   "gesvdj");
    if (p.vectors)  // vh(i, j) = V(j, i)
      strided_copy(reinterpret_cast<std::byte*>(item<T>(vh, b)), {z, rows(vh) * z}, scratch_v.ptr(), {n * z, z},
                   {rows(vh), n}, z, device);
  }
  if constexpr (kComplex<T>)  // Vh = V^H: the copies transposed, now conjugate
    if (p.vectors) conjugate(vh->dtype(), vh->data_ptr(), vh->data_ptr(), vh->numel(), device);
}

// The 64-bit API's calls may run host work enqueued on the stream, on their host
// workspace, which must outlive it: a geev batch that has host work is waited for
// (a rare op, and not a small one).
void wait_for_host_work(int device) {
  refuse_in_capture("a wait for cuSOLVER's host work");
  LUCID_CUDA_CHECK(cudaStreamSynchronize(stream(device)));
}

// ldl_factor.cu's own sytf2 / hetf2, a block per matrix, for Hermitian matrices (cuSOLVER
// has no hetrf) and for batches; cuSOLVER's sytrf, one matrix at a time, for one or two
// large symmetric ones, with LAPACK's info found after it.
void ldl_factor_kernel(const ops::Primitive& prim, Outputs outs, Inputs) {
  const TensorImpl *a = outs[0], *piv = outs[1], *info = outs[2];
  const int n = rows(a), ld = std::max(1, n), device = a->device().index;
  const bool hermitian = is_complex(a->dtype()) && prim_cast<ops::LdlFactor>(prim).hermitian;
  DeviceGuard guard(device);
  zero(info);
  if (n == 0) return;
  const int64_t count = batch_of(a, 2);
  if (hermitian || ldl_factor_by_blocks(n, count)) {
    GpuStorage work = workspace<char>(ldl_factor_workspace(n, count) * int64_t(a->itemsize()), device);
    ldl_factor(a->dtype(), hermitian, a->data_ptr(), item<int>(piv, 0, 1), info_at(info, 0), work.ptr(), n, count,
               device);
    return;
  }
  visit_float(a->dtype(), "linalg.ldl_factor", [&]<class T>() {
    const SolverApi& s = cusolver();
    cusolverDnHandle_t h = cusolver_handle(device);
    int lwork = 0;
    check_cusolver(LUCID_PICK(s, sytrf_size)(h, n, item<T>(a, 0), ld, &lwork), "sytrf_bufferSize");
    GpuStorage work = workspace<T>(lwork, device);
    for (int64_t b = 0; b < count; ++b)
      check_cusolver(LUCID_PICK(s, sytrf)(h, CUBLAS_FILL_MODE_LOWER, n, item<T>(a, b), ld, item<int>(piv, b, 1),
                                          reinterpret_cast<T*>(work.ptr()), lwork, info_at(info, b)),
                     "sytrf");
  });
  ldl_factor_info(a->dtype(), a->data_ptr(), item<int>(piv, 0, 1), info_at(info, 0), n, count, device);
}

// ldl_solve.cu's own sytrs / hetrs (cuSOLVER's Xsytrs poisoned a context in testing).
void ldl_solve_kernel(const ops::Primitive& prim, Outputs outs, Inputs ins) {
  const TensorImpl *ldt = ins[0], *piv = ins[1], *x = outs[0];
  ldl_solve(ldt->dtype(), prim_cast<ops::LdlSolve>(prim).hermitian, ldt->data_ptr(), item<int>(piv, 0, 1),
            x->data_ptr(), rows(ldt), cols(x), batch_of(x, 2), x->device().index);
}

// One matrix at a time through the 64-bit API's geev (LAPACK's algorithm, with its
// output layout for a real matrix: W's 2n entries the real parts, then the imaginary;
// a complex matrix's W is its n complex eigenvalues).
void eig_kernel(const ops::Primitive& prim, Outputs outs, Inputs) {
  const auto& p = prim_cast<ops::Eig>(prim);
  const TensorImpl *a = outs[0], *w = outs[1], *info = outs[2];
  const TensorImpl* v = p.vectors ? outs[3] : nullptr;
  const int64_t n = rows(a), ld = std::max<int64_t>(1, n);
  const int device = a->device().index;
  DeviceGuard guard(device);
  zero(info);
  if (n == 0) return;
  visit_float(a->dtype(), "linalg.eig", [&]<class T>() {
    const SolverApi& s = cusolver();
    cusolverDnHandle_t h = cusolver_handle(device);
    static cusolverDnParams_t params = [&] {
      cusolverDnParams_t made = nullptr;
      check_cusolver(s.create_params(&made), "cusolverDnCreateParams");
      return made;
    }();
    const cudaDataType type = std::is_same_v<T, float>       ? CUDA_R_32F
                              : std::is_same_v<T, double>    ? CUDA_R_64F
                              : std::is_same_v<T, cuComplex> ? CUDA_C_32F
                                                             : CUDA_C_64F;
    const int64_t w_size = kComplex<T> ? n : 2 * n;  // (a real A's eigenvalues: [re; im])
    const cusolverEigMode_t jobvr = p.vectors ? CUSOLVER_EIG_MODE_VECTOR : CUSOLVER_EIG_MODE_NOVECTOR;
    size_t device_bytes = 0, host_bytes = 0;
    check_cusolver(s.xgeev_size(h, params, CUSOLVER_EIG_MODE_NOVECTOR, jobvr, n, type, item<T>(a, 0), ld, type,
                                reinterpret_cast<T*>(w->data_ptr()), type, nullptr, 1, type,
                                v ? item<T>(v, 0) : nullptr, ld, type, &device_bytes, &host_bytes),
                   "Xgeev_bufferSize");
    GpuStorage work = CachingAllocator::instance().allocate(std::max<size_t>(device_bytes, 1), device);
    std::vector<unsigned char> host(std::max<size_t>(host_bytes, 1));
    for (int64_t b = 0, count = batch_of(a, 2); b < count; ++b)
      check_cusolver(
          s.xgeev(h, params, CUSOLVER_EIG_MODE_NOVECTOR, jobvr, n, type, item<T>(a, b), ld, type,
                  reinterpret_cast<T*>(w->data_ptr()) + b * w_size, type, nullptr, 1, type, v ? item<T>(v, b) : nullptr,
                  ld, type, work.ptr(), device_bytes, host.data(), host_bytes, info_at(info, b)),
          "Xgeev");
    if (host_bytes) wait_for_host_work(device);
  });
}

void svd_kernel(const ops::Primitive& prim, Outputs outs, Inputs ins) {
  const auto& p = prim_cast<ops::Svd>(prim);
  const TensorImpl *a = ins[0], *s_out = outs[0], *info = outs[1];
  const TensorImpl* u = p.vectors ? outs[2] : nullptr;
  const TensorImpl* vh = p.vectors ? outs[3] : nullptr;
  const int device = a->device().index;
  DeviceGuard guard(device);
  zero(info);
  if (std::min(rows(a), cols(a)) == 0) return;
  visit_float(a->dtype(), "linalg.svd", [&]<class T>() { svd_jacobi<T>(p, a, s_out, info, u, vh, batch_of(a, 2)); });
}

#undef LUCID_PICK
#undef LUCID_PICK_RC

}  // namespace

void register_decompose_kernels() {
  using ops::Prim;
  ops::register_kernel(Prim::LuFactor, DeviceType::GPU, lu_factor_kernel);
  ops::register_kernel(Prim::LuSolve, DeviceType::GPU, lu_solve_kernel);
  ops::register_kernel(Prim::Cholesky, DeviceType::GPU, cholesky_kernel);
  ops::register_kernel(Prim::TriangularSolve, DeviceType::GPU, triangular_solve_kernel);
  ops::register_kernel(Prim::QrFactor, DeviceType::GPU, qr_factor_kernel);
  ops::register_kernel(Prim::HouseholderProduct, DeviceType::GPU, householder_product_kernel);
  ops::register_kernel(Prim::Eigh, DeviceType::GPU, eigh_kernel);
  ops::register_kernel(Prim::Eig, DeviceType::GPU, eig_kernel);
  ops::register_kernel(Prim::LdlFactor, DeviceType::GPU, ldl_factor_kernel);
  ops::register_kernel(Prim::LdlSolve, DeviceType::GPU, ldl_solve_kernel);
  ops::register_kernel(Prim::Svd, DeviceType::GPU, svd_kernel);
}

}  // namespace lucid::cuda
