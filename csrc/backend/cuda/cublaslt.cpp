#include "backend/cuda/cublaslt.h"

#include <mutex>

#include "backend/cuda/device_guard.h"
#include "backend/cuda/library.h"
#include "backend/cuda/stream.h"
#include "core/error.h"

namespace lucid::cuda {

namespace {

constexpr const char* kSoname = "libcublasLt.so.13";

template <typename F>
void bind(void* lib, F& fn, const char* name) {
  bind_symbol(lib, kSoname, fn, name);
}

}  // namespace

const CublasLtApi& cublaslt() {
  static const CublasLtApi api = [] {
    void* lib = open_library({kSoname, "libcublasLt.so"}, "GPU matrix products need cuBLASLt",
                             "Install the CUDA toolkit's cuBLAS or add its folder to LD_LIBRARY_PATH.");
    CublasLtApi a{};
    bind(lib, a.create, "cublasLtCreate");
    bind(lib, a.desc_create, "cublasLtMatmulDescCreate");
    bind(lib, a.desc_set, "cublasLtMatmulDescSetAttribute");
    bind(lib, a.layout_create, "cublasLtMatrixLayoutCreate");
    bind(lib, a.layout_set, "cublasLtMatrixLayoutSetAttribute");
    bind(lib, a.pref_create, "cublasLtMatmulPreferenceCreate");
    bind(lib, a.pref_destroy, "cublasLtMatmulPreferenceDestroy");
    bind(lib, a.pref_set, "cublasLtMatmulPreferenceSetAttribute");
    bind(lib, a.heuristic, "cublasLtMatmulAlgoGetHeuristic");
    bind(lib, a.algo_check, "cublasLtMatmulAlgoCheck");
    bind(lib, a.matmul, "cublasLtMatmul");
    return a;
  }();
  return api;
}

cublasLtHandle_t cublaslt_handle(int device) {
  static std::mutex mu;
  static cublasLtHandle_t handles[kMaxDevices] = {};  // never destroyed, as the streams
  std::lock_guard<std::mutex> lock(mu);
  if (!handles[device]) {
    DeviceGuard guard(device);
    check_cublas(cublaslt().create(&handles[device]), "cublasLtCreate");
  }
  return handles[device];
}

void check_cublas(cublasStatus_t status, const char* call) {
  LUCID_CHECK(status == CUBLAS_STATUS_SUCCESS, RuntimeError, "cuBLASLt error ", int(status), " in ", call);
}

}  // namespace lucid::cuda
