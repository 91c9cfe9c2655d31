#include "backend/cuda/solver.h"

#include <mutex>

#include "backend/cuda/device_guard.h"
#include "backend/cuda/flush_graphs.h"
#include "backend/cuda/library.h"
#include "backend/cuda/runtime.h"
#include "backend/cuda/stream.h"
#include "core/error.h"

namespace lucid::cuda {

namespace {

constexpr const char* kSolver = "libcusolver.so.12";
constexpr const char* kBlas = "libcublas.so.13";

template <typename F>
void bind(void* lib, const char* soname, F& fn, const char* name) {
  bind_symbol(lib, soname, fn, name);
}

}  // namespace

const SolverApi& cusolver() {
  static const SolverApi api = [] {
    void* lib = open_library({kSolver, "libcusolver.so.11", "libcusolver.so"},
                             "GPU matrix decompositions need cuSOLVER",
                             "Install the CUDA toolkit's cuSOLVER or add its folder to LD_LIBRARY_PATH.");
    SolverApi a{};
#define LUCID_BIND(field, name) bind(lib, kSolver, a.field, #name)
    LUCID_BIND(create, cusolverDnCreate);
    LUCID_BIND(set_stream, cusolverDnSetStream);
    LUCID_BIND(sgetrf_size, cusolverDnSgetrf_bufferSize);
    LUCID_BIND(dgetrf_size, cusolverDnDgetrf_bufferSize);
    LUCID_BIND(cgetrf_size, cusolverDnCgetrf_bufferSize);
    LUCID_BIND(zgetrf_size, cusolverDnZgetrf_bufferSize);
    LUCID_BIND(sgetrf, cusolverDnSgetrf);
    LUCID_BIND(dgetrf, cusolverDnDgetrf);
    LUCID_BIND(cgetrf, cusolverDnCgetrf);
    LUCID_BIND(zgetrf, cusolverDnZgetrf);
    LUCID_BIND(sgetrs, cusolverDnSgetrs);
    LUCID_BIND(dgetrs, cusolverDnDgetrs);
    LUCID_BIND(cgetrs, cusolverDnCgetrs);
    LUCID_BIND(zgetrs, cusolverDnZgetrs);
    LUCID_BIND(spotrf_size, cusolverDnSpotrf_bufferSize);
    LUCID_BIND(dpotrf_size, cusolverDnDpotrf_bufferSize);
    LUCID_BIND(cpotrf_size, cusolverDnCpotrf_bufferSize);
    LUCID_BIND(zpotrf_size, cusolverDnZpotrf_bufferSize);
    LUCID_BIND(spotrf, cusolverDnSpotrf);
    LUCID_BIND(dpotrf, cusolverDnDpotrf);
    LUCID_BIND(cpotrf, cusolverDnCpotrf);
    LUCID_BIND(zpotrf, cusolverDnZpotrf);
    LUCID_BIND(sgeqrf_size, cusolverDnSgeqrf_bufferSize);
    LUCID_BIND(dgeqrf_size, cusolverDnDgeqrf_bufferSize);
    LUCID_BIND(cgeqrf_size, cusolverDnCgeqrf_bufferSize);
    LUCID_BIND(zgeqrf_size, cusolverDnZgeqrf_bufferSize);
    LUCID_BIND(sgeqrf, cusolverDnSgeqrf);
    LUCID_BIND(dgeqrf, cusolverDnDgeqrf);
    LUCID_BIND(cgeqrf, cusolverDnCgeqrf);
    LUCID_BIND(zgeqrf, cusolverDnZgeqrf);
    LUCID_BIND(sorgqr_size, cusolverDnSorgqr_bufferSize);
    LUCID_BIND(dorgqr_size, cusolverDnDorgqr_bufferSize);
    LUCID_BIND(cungqr_size, cusolverDnCungqr_bufferSize);
    LUCID_BIND(zungqr_size, cusolverDnZungqr_bufferSize);
    LUCID_BIND(sorgqr, cusolverDnSorgqr);
    LUCID_BIND(dorgqr, cusolverDnDorgqr);
    LUCID_BIND(cungqr, cusolverDnCungqr);
    LUCID_BIND(zungqr, cusolverDnZungqr);
    LUCID_BIND(ssyevd_size, cusolverDnSsyevd_bufferSize);
    LUCID_BIND(dsyevd_size, cusolverDnDsyevd_bufferSize);
    LUCID_BIND(cheevd_size, cusolverDnCheevd_bufferSize);
    LUCID_BIND(zheevd_size, cusolverDnZheevd_bufferSize);
    LUCID_BIND(ssyevd, cusolverDnSsyevd);
    LUCID_BIND(dsyevd, cusolverDnDsyevd);
    LUCID_BIND(cheevd, cusolverDnCheevd);
    LUCID_BIND(zheevd, cusolverDnZheevd);
    LUCID_BIND(ssytrf_size, cusolverDnSsytrf_bufferSize);
    LUCID_BIND(dsytrf_size, cusolverDnDsytrf_bufferSize);
    LUCID_BIND(csytrf_size, cusolverDnCsytrf_bufferSize);
    LUCID_BIND(zsytrf_size, cusolverDnZsytrf_bufferSize);
    LUCID_BIND(ssytrf, cusolverDnSsytrf);
    LUCID_BIND(dsytrf, cusolverDnDsytrf);
    LUCID_BIND(csytrf, cusolverDnCsytrf);
    LUCID_BIND(zsytrf, cusolverDnZsytrf);
    LUCID_BIND(create_params, cusolverDnCreateParams);
    LUCID_BIND(xgeev_size, cusolverDnXgeev_bufferSize);
    LUCID_BIND(xgeev, cusolverDnXgeev);
    LUCID_BIND(sgesvdj_size, cusolverDnSgesvdj_bufferSize);
    LUCID_BIND(dgesvdj_size, cusolverDnDgesvdj_bufferSize);
    LUCID_BIND(cgesvdj_size, cusolverDnCgesvdj_bufferSize);
    LUCID_BIND(zgesvdj_size, cusolverDnZgesvdj_bufferSize);
    LUCID_BIND(sgesvdj, cusolverDnSgesvdj);
    LUCID_BIND(dgesvdj, cusolverDnDgesvdj);
    LUCID_BIND(cgesvdj, cusolverDnCgesvdj);
    LUCID_BIND(zgesvdj, cusolverDnZgesvdj);
    LUCID_BIND(cpotrf_batched, cusolverDnCpotrfBatched);
    LUCID_BIND(zpotrf_batched, cusolverDnZpotrfBatched);
    LUCID_BIND(create_syevj_info, cusolverDnCreateSyevjInfo);
    LUCID_BIND(ssyevj_batched_size, cusolverDnSsyevjBatched_bufferSize);
    LUCID_BIND(dsyevj_batched_size, cusolverDnDsyevjBatched_bufferSize);
    LUCID_BIND(cheevj_batched_size, cusolverDnCheevjBatched_bufferSize);
    LUCID_BIND(zheevj_batched_size, cusolverDnZheevjBatched_bufferSize);
    LUCID_BIND(ssyevj_batched, cusolverDnSsyevjBatched);
    LUCID_BIND(dsyevj_batched, cusolverDnDsyevjBatched);
    LUCID_BIND(cheevj_batched, cusolverDnCheevjBatched);
    LUCID_BIND(zheevj_batched, cusolverDnZheevjBatched);
    LUCID_BIND(create_gesvdj_info, cusolverDnCreateGesvdjInfo);
    LUCID_BIND(sgesvdj_batched_size, cusolverDnSgesvdjBatched_bufferSize);
    LUCID_BIND(dgesvdj_batched_size, cusolverDnDgesvdjBatched_bufferSize);
    LUCID_BIND(cgesvdj_batched_size, cusolverDnCgesvdjBatched_bufferSize);
    LUCID_BIND(zgesvdj_batched_size, cusolverDnZgesvdjBatched_bufferSize);
    LUCID_BIND(sgesvdj_batched, cusolverDnSgesvdjBatched);
    LUCID_BIND(dgesvdj_batched, cusolverDnDgesvdjBatched);
    LUCID_BIND(cgesvdj_batched, cusolverDnCgesvdjBatched);
    LUCID_BIND(zgesvdj_batched, cusolverDnZgesvdjBatched);
#undef LUCID_BIND
    return a;
  }();
  return api;
}

const BlasApi& cublas() {
  static const BlasApi api = [] {
    void* lib = open_library({kBlas, "libcublas.so.12", "libcublas.so"}, "GPU triangular solves need cuBLAS",
                             "Install the CUDA toolkit's cuBLAS or add its folder to LD_LIBRARY_PATH.");
    BlasApi a{};
    bind(lib, kBlas, a.create, "cublasCreate_v2");
    bind(lib, kBlas, a.set_stream, "cublasSetStream_v2");
    bind(lib, kBlas, a.strsm, "cublasStrsm_v2");
    bind(lib, kBlas, a.dtrsm, "cublasDtrsm_v2");
    bind(lib, kBlas, a.ctrsm, "cublasCtrsm_v2");
    bind(lib, kBlas, a.ztrsm, "cublasZtrsm_v2");
    bind(lib, kBlas, a.strsm_batched, "cublasStrsmBatched");
    bind(lib, kBlas, a.dtrsm_batched, "cublasDtrsmBatched");
    bind(lib, kBlas, a.ctrsm_batched, "cublasCtrsmBatched");
    bind(lib, kBlas, a.ztrsm_batched, "cublasZtrsmBatched");
    bind(lib, kBlas, a.sgetrf_batched, "cublasSgetrfBatched");
    bind(lib, kBlas, a.dgetrf_batched, "cublasDgetrfBatched");
    bind(lib, kBlas, a.cgetrf_batched, "cublasCgetrfBatched");
    bind(lib, kBlas, a.zgetrf_batched, "cublasZgetrfBatched");
    bind(lib, kBlas, a.sgetrs_batched, "cublasSgetrsBatched");
    bind(lib, kBlas, a.dgetrs_batched, "cublasDgetrsBatched");
    bind(lib, kBlas, a.cgetrs_batched, "cublasCgetrsBatched");
    bind(lib, kBlas, a.zgetrs_batched, "cublasZgetrsBatched");
    return a;
  }();
  return api;
}

void check_cusolver(cusolverStatus_t status, const char* call) {
  LUCID_CHECK(status == CUSOLVER_STATUS_SUCCESS, RuntimeError, "cuSOLVER error ", int(status), " in ", call);
}

cusolverDnHandle_t cusolver_handle(int device) {
  // cuSOLVER's eigen solvers queue host work and wait for it, and a failed capture left
  // the handle failing later calls (errors 6 and 7 on the H200): a list with a cuSOLVER
  // call is never captured (Note [Flush graphs]), and cuSOLVER never sees a capture.
  refuse_in_capture("a cuSOLVER call");
  static std::mutex mu;
  static cusolverDnHandle_t handles[kMaxDevices] = {};  // never destroyed, as the streams
  std::lock_guard<std::mutex> lock(mu);
  if (!handles[device]) {
    DeviceGuard guard(device);
    check_cusolver(cusolver().create(&handles[device]), "cusolverDnCreate");
  }
  check_cusolver(cusolver().set_stream(handles[device], stream(device)), "cusolverDnSetStream");
  return handles[device];
}

cublasHandle_t cublas_handle(int device) {
  static std::mutex mu;
  static cublasHandle_t handles[kMaxDevices] = {};
  std::lock_guard<std::mutex> lock(mu);
  if (!handles[device]) {
    DeviceGuard guard(device);
    const cublasStatus_t status = cublas().create(&handles[device]);
    LUCID_CHECK(status == CUBLAS_STATUS_SUCCESS, RuntimeError, "cuBLAS error ", int(status), " in cublasCreate");
  }
  const cublasStatus_t status = cublas().set_stream(handles[device], stream(device));
  LUCID_CHECK(status == CUBLAS_STATUS_SUCCESS, RuntimeError, "cuBLAS error ", int(status), " in cublasSetStream");
  return handles[device];
}

}  // namespace lucid::cuda
