#include "backend/cuda/cublaslt.h"

#include <dlfcn.h>

#include <mutex>
#include <string>

#include "backend/cuda/device_guard.h"
#include "backend/cuda/stream.h"
#include "core/error.h"

namespace lucid::cuda {

namespace {

// The toolkit's library folder at build time, tried after the loader's own search.
#ifndef LUCID_CUDA_LIBRARY_DIR
#define LUCID_CUDA_LIBRARY_DIR ""
#endif

void* open_library() {
  const std::string names[] = {"libcublasLt.so.13", "libcublasLt.so",
                               std::string(LUCID_CUDA_LIBRARY_DIR) + "/libcublasLt.so.13"};
  std::string why = "not found";
  for (const std::string& name : names) {
    if (void* h = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL)) return h;
    if (const char* e = dlerror()) why = e;
  }
  fail<RuntimeError>("GPU matrix products need cuBLASLt (libcublasLt.so.13), which could not be loaded: ", why,
                     ". Install the CUDA toolkit's cuBLAS or add its folder to LD_LIBRARY_PATH.");
}

template <typename F>
void bind(void* lib, F& fn, const char* name) {
  fn = reinterpret_cast<F>(dlsym(lib, name));
  LUCID_CHECK(fn, RuntimeError, "cuBLASLt has no ", name);
}

}  // namespace

const CublasLtApi& cublaslt() {
  static const CublasLtApi api = [] {
    void* lib = open_library();  // kept open for the process
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
