// cuSOLVER's dense routines and cuBLAS's triangular solve, which the GPU's matrix
// decompositions call (decompose.cpp). Opened with dlopen at first use, as cuBLASLt
// and cuDNN are (library.h): only these ops need the libraries.
#pragma once

#include <cublas_v2.h>
#include <cusolverDn.h>

namespace lucid::cuda {

// The entry points lucid binds, float (S) and double (D) alike.
struct SolverApi {
  decltype(&cusolverDnCreate) create;
  decltype(&cusolverDnSetStream) set_stream;
  decltype(&cusolverDnSgetrf_bufferSize) sgetrf_size;
  decltype(&cusolverDnDgetrf_bufferSize) dgetrf_size;
  decltype(&cusolverDnSgetrf) sgetrf;
  decltype(&cusolverDnDgetrf) dgetrf;
  decltype(&cusolverDnSgetrs) sgetrs;
  decltype(&cusolverDnDgetrs) dgetrs;
  decltype(&cusolverDnSpotrf_bufferSize) spotrf_size;
  decltype(&cusolverDnDpotrf_bufferSize) dpotrf_size;
  decltype(&cusolverDnSpotrf) spotrf;
  decltype(&cusolverDnDpotrf) dpotrf;
  decltype(&cusolverDnSgeqrf_bufferSize) sgeqrf_size;
  decltype(&cusolverDnDgeqrf_bufferSize) dgeqrf_size;
  decltype(&cusolverDnSgeqrf) sgeqrf;
  decltype(&cusolverDnDgeqrf) dgeqrf;
  decltype(&cusolverDnSorgqr_bufferSize) sorgqr_size;
  decltype(&cusolverDnDorgqr_bufferSize) dorgqr_size;
  decltype(&cusolverDnSorgqr) sorgqr;
  decltype(&cusolverDnDorgqr) dorgqr;
  decltype(&cusolverDnSsyevd_bufferSize) ssyevd_size;
  decltype(&cusolverDnDsyevd_bufferSize) dsyevd_size;
  decltype(&cusolverDnSsyevd) ssyevd;
  decltype(&cusolverDnDsyevd) dsyevd;
  decltype(&cusolverDnSsytrf_bufferSize) ssytrf_size;
  decltype(&cusolverDnDsytrf_bufferSize) dsytrf_size;
  decltype(&cusolverDnSsytrf) ssytrf;
  decltype(&cusolverDnDsytrf) dsytrf;
  decltype(&cusolverDnCreateParams) create_params;
  decltype(&cusolverDnXgeev_bufferSize) xgeev_size;
  decltype(&cusolverDnXgeev) xgeev;
  decltype(&cusolverDnSgesvdj_bufferSize) sgesvdj_size;
  decltype(&cusolverDnDgesvdj_bufferSize) dgesvdj_size;
  decltype(&cusolverDnSgesvdj) sgesvdj;
  decltype(&cusolverDnDgesvdj) dgesvdj;
  // batches of small matrices in one call
  decltype(&cusolverDnCreateSyevjInfo) create_syevj_info;
  decltype(&cusolverDnSsyevjBatched_bufferSize) ssyevj_batched_size;
  decltype(&cusolverDnDsyevjBatched_bufferSize) dsyevj_batched_size;
  decltype(&cusolverDnSsyevjBatched) ssyevj_batched;
  decltype(&cusolverDnDsyevjBatched) dsyevj_batched;
  decltype(&cusolverDnCreateGesvdjInfo) create_gesvdj_info;
  decltype(&cusolverDnSgesvdjBatched_bufferSize) sgesvdj_batched_size;
  decltype(&cusolverDnDgesvdjBatched_bufferSize) dgesvdj_batched_size;
  decltype(&cusolverDnSgesvdjBatched) sgesvdj_batched;
  decltype(&cusolverDnDgesvdjBatched) dgesvdj_batched;
};
struct BlasApi {
  decltype(&cublasCreate_v2) create;
  decltype(&cublasSetStream_v2) set_stream;
  decltype(&cublasStrsm_v2) strsm;
  decltype(&cublasDtrsm_v2) dtrsm;
  decltype(&cublasStrsmBatched) strsm_batched;
  decltype(&cublasDtrsmBatched) dtrsm_batched;
  decltype(&cublasSgetrfBatched) sgetrf_batched;
  decltype(&cublasDgetrfBatched) dgetrf_batched;
  decltype(&cublasSgetrsBatched) sgetrs_batched;
  decltype(&cublasDgetrsBatched) dgetrs_batched;
};

const SolverApi& cusolver();
const BlasApi& cublas();
// The device's handles, made at first use and bound to its stream on every call.
cusolverDnHandle_t cusolver_handle(int device);
cublasHandle_t cublas_handle(int device);

// RuntimeError "cuSOLVER error <status> in <call>" unless status is success.
void check_cusolver(cusolverStatus_t status, const char* call);

}  // namespace lucid::cuda
