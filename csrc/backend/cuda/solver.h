// cuSOLVER's dense routines and cuBLAS's triangular solve, which the GPU's matrix
// decompositions call (decompose.cpp). Opened with dlopen at first use, as cuBLASLt
// and cuDNN are (library.h): only these ops need the libraries.
#pragma once

#include <cublas_v2.h>
#include <cusolverDn.h>

namespace lucid::cuda {

// The entry points lucid binds: float (S), double (D), complex64 (C) and complex128 (Z)
// alike (the complex forms of orgqr and syevd are ungqr and heevd).
struct SolverApi {
  decltype(&cusolverDnCreate) create;
  decltype(&cusolverDnSetStream) set_stream;
  decltype(&cusolverDnSgetrf_bufferSize) sgetrf_size;
  decltype(&cusolverDnDgetrf_bufferSize) dgetrf_size;
  decltype(&cusolverDnCgetrf_bufferSize) cgetrf_size;
  decltype(&cusolverDnZgetrf_bufferSize) zgetrf_size;
  decltype(&cusolverDnSgetrf) sgetrf;
  decltype(&cusolverDnDgetrf) dgetrf;
  decltype(&cusolverDnCgetrf) cgetrf;
  decltype(&cusolverDnZgetrf) zgetrf;
  decltype(&cusolverDnSgetrs) sgetrs;
  decltype(&cusolverDnDgetrs) dgetrs;
  decltype(&cusolverDnCgetrs) cgetrs;
  decltype(&cusolverDnZgetrs) zgetrs;
  decltype(&cusolverDnSpotrf_bufferSize) spotrf_size;
  decltype(&cusolverDnDpotrf_bufferSize) dpotrf_size;
  decltype(&cusolverDnCpotrf_bufferSize) cpotrf_size;
  decltype(&cusolverDnZpotrf_bufferSize) zpotrf_size;
  decltype(&cusolverDnSpotrf) spotrf;
  decltype(&cusolverDnDpotrf) dpotrf;
  decltype(&cusolverDnCpotrf) cpotrf;
  decltype(&cusolverDnZpotrf) zpotrf;
  decltype(&cusolverDnSgeqrf_bufferSize) sgeqrf_size;
  decltype(&cusolverDnDgeqrf_bufferSize) dgeqrf_size;
  decltype(&cusolverDnCgeqrf_bufferSize) cgeqrf_size;
  decltype(&cusolverDnZgeqrf_bufferSize) zgeqrf_size;
  decltype(&cusolverDnSgeqrf) sgeqrf;
  decltype(&cusolverDnDgeqrf) dgeqrf;
  decltype(&cusolverDnCgeqrf) cgeqrf;
  decltype(&cusolverDnZgeqrf) zgeqrf;
  decltype(&cusolverDnSorgqr_bufferSize) sorgqr_size;
  decltype(&cusolverDnDorgqr_bufferSize) dorgqr_size;
  decltype(&cusolverDnCungqr_bufferSize) cungqr_size;
  decltype(&cusolverDnZungqr_bufferSize) zungqr_size;
  decltype(&cusolverDnSorgqr) sorgqr;
  decltype(&cusolverDnDorgqr) dorgqr;
  decltype(&cusolverDnCungqr) cungqr;
  decltype(&cusolverDnZungqr) zungqr;
  decltype(&cusolverDnSsyevd_bufferSize) ssyevd_size;
  decltype(&cusolverDnDsyevd_bufferSize) dsyevd_size;
  decltype(&cusolverDnCheevd_bufferSize) cheevd_size;
  decltype(&cusolverDnZheevd_bufferSize) zheevd_size;
  decltype(&cusolverDnSsyevd) ssyevd;
  decltype(&cusolverDnDsyevd) dsyevd;
  decltype(&cusolverDnCheevd) cheevd;
  decltype(&cusolverDnZheevd) zheevd;
  decltype(&cusolverDnSsytrf_bufferSize) ssytrf_size;
  decltype(&cusolverDnDsytrf_bufferSize) dsytrf_size;
  decltype(&cusolverDnCsytrf_bufferSize) csytrf_size;
  decltype(&cusolverDnZsytrf_bufferSize) zsytrf_size;
  decltype(&cusolverDnSsytrf) ssytrf;
  decltype(&cusolverDnDsytrf) dsytrf;
  decltype(&cusolverDnCsytrf) csytrf;
  decltype(&cusolverDnZsytrf) zsytrf;
  decltype(&cusolverDnCreateParams) create_params;
  decltype(&cusolverDnXgeev_bufferSize) xgeev_size;
  decltype(&cusolverDnXgeev) xgeev;
  decltype(&cusolverDnSgesvdj_bufferSize) sgesvdj_size;
  decltype(&cusolverDnDgesvdj_bufferSize) dgesvdj_size;
  decltype(&cusolverDnCgesvdj_bufferSize) cgesvdj_size;
  decltype(&cusolverDnZgesvdj_bufferSize) zgesvdj_size;
  decltype(&cusolverDnSgesvdj) sgesvdj;
  decltype(&cusolverDnDgesvdj) dgesvdj;
  decltype(&cusolverDnCgesvdj) cgesvdj;
  decltype(&cusolverDnZgesvdj) zgesvdj;
  // batches of small matrices in one call (real Cholesky is small_matrices.h's own)
  decltype(&cusolverDnCpotrfBatched) cpotrf_batched;
  decltype(&cusolverDnZpotrfBatched) zpotrf_batched;
  decltype(&cusolverDnCreateSyevjInfo) create_syevj_info;
  decltype(&cusolverDnSsyevjBatched_bufferSize) ssyevj_batched_size;
  decltype(&cusolverDnDsyevjBatched_bufferSize) dsyevj_batched_size;
  decltype(&cusolverDnCheevjBatched_bufferSize) cheevj_batched_size;
  decltype(&cusolverDnZheevjBatched_bufferSize) zheevj_batched_size;
  decltype(&cusolverDnSsyevjBatched) ssyevj_batched;
  decltype(&cusolverDnDsyevjBatched) dsyevj_batched;
  decltype(&cusolverDnCheevjBatched) cheevj_batched;
  decltype(&cusolverDnZheevjBatched) zheevj_batched;
  decltype(&cusolverDnCreateGesvdjInfo) create_gesvdj_info;
  decltype(&cusolverDnSgesvdjBatched_bufferSize) sgesvdj_batched_size;
  decltype(&cusolverDnDgesvdjBatched_bufferSize) dgesvdj_batched_size;
  decltype(&cusolverDnCgesvdjBatched_bufferSize) cgesvdj_batched_size;
  decltype(&cusolverDnZgesvdjBatched_bufferSize) zgesvdj_batched_size;
  decltype(&cusolverDnSgesvdjBatched) sgesvdj_batched;
  decltype(&cusolverDnDgesvdjBatched) dgesvdj_batched;
  decltype(&cusolverDnCgesvdjBatched) cgesvdj_batched;
  decltype(&cusolverDnZgesvdjBatched) zgesvdj_batched;
};
struct BlasApi {
  decltype(&cublasCreate_v2) create;
  decltype(&cublasSetStream_v2) set_stream;
  decltype(&cublasStrsm_v2) strsm;
  decltype(&cublasDtrsm_v2) dtrsm;
  decltype(&cublasCtrsm_v2) ctrsm;
  decltype(&cublasZtrsm_v2) ztrsm;
  decltype(&cublasStrsmBatched) strsm_batched;
  decltype(&cublasDtrsmBatched) dtrsm_batched;
  decltype(&cublasCtrsmBatched) ctrsm_batched;
  decltype(&cublasZtrsmBatched) ztrsm_batched;
  decltype(&cublasSgetrfBatched) sgetrf_batched;
  decltype(&cublasDgetrfBatched) dgetrf_batched;
  decltype(&cublasCgetrfBatched) cgetrf_batched;
  decltype(&cublasZgetrfBatched) zgetrf_batched;
  decltype(&cublasSgetrsBatched) sgetrs_batched;
  decltype(&cublasDgetrsBatched) dgetrs_batched;
  decltype(&cublasCgetrsBatched) cgetrs_batched;
  decltype(&cublasZgetrsBatched) zgetrs_batched;
};

const SolverApi& cusolver();
const BlasApi& cublas();
// The device's handles, made at first use and bound to its stream on every call.
cusolverDnHandle_t cusolver_handle(int device);
cublasHandle_t cublas_handle(int device);

// RuntimeError "cuSOLVER error <status> in <call>" unless status is success.
void check_cusolver(cusolverStatus_t status, const char* call);

}  // namespace lucid::cuda
