#include "backend/cuda/cudnn.h"

#include <mutex>

#include "backend/cuda/device_guard.h"
#include "backend/cuda/library.h"
#include "backend/cuda/register.h"
#include "backend/cuda/stream.h"
#include "core/error.h"

namespace lucid::cuda {

namespace {

constexpr const char* kSoname = "libcudnn.so.9";

template <typename F>
void bind(void* lib, F& fn, const char* name) {
  bind_symbol(lib, kSoname, fn, name);
}

}  // namespace

const CudnnApi& cudnn() {
  static const CudnnApi api = [] {
    void* lib = open_library({kSoname}, "GPU convolutions need cuDNN 9",
                             "Install cuDNN 9 for CUDA 13 or add its folder to LD_LIBRARY_PATH.");
    CudnnApi a{};
    bind(lib, a.version, "cudnnGetVersion");
    LUCID_CHECK(a.version() >= 90000, RuntimeError, "GPU convolutions need cuDNN 9 or newer; libcudnn.so.9 reports ",
                a.version());
    bind(lib, a.error_string, "cudnnGetErrorString");
    bind(lib, a.create, "cudnnCreate");
    bind(lib, a.set_stream, "cudnnSetStream");
    bind(lib, a.last_error, "cudnnGetLastErrorString");
    bind(lib, a.backend_create, "cudnnBackendCreateDescriptor");
    bind(lib, a.backend_destroy, "cudnnBackendDestroyDescriptor");
    bind(lib, a.backend_set, "cudnnBackendSetAttribute");
    bind(lib, a.backend_get, "cudnnBackendGetAttribute");
    bind(lib, a.backend_finalize, "cudnnBackendFinalize");
    bind(lib, a.backend_execute, "cudnnBackendExecute");
    return a;
  }();
  return api;
}

int cudnn_version() {
  try {
    return int(cudnn().version());
  } catch (const RuntimeError&) {  // not installed: no GPU convolutions, lucid works on
    return 0;
  }
}

cudnnHandle_t cudnn_handle(int device) {
  static std::mutex mu;
  static cudnnHandle_t handles[kMaxDevices] = {};  // never destroyed, as the streams
  std::lock_guard<std::mutex> lock(mu);
  if (!handles[device]) {
    DeviceGuard guard(device);
    cudnnHandle_t h = nullptr;
    check_cudnn(cudnn().create(&h), "cudnnCreate");
    // lucid's one stream per device never changes, so the handle is bound once.
    check_cudnn(cudnn().set_stream(h, stream(device)), "cudnnSetStream");
    handles[device] = h;
  }
  return handles[device];
}

void check_cudnn(cudnnStatus_t status, const char* call) {
  LUCID_CHECK(status == CUDNN_STATUS_SUCCESS, RuntimeError, "cuDNN error ", int(status), " (",
              cudnn().error_string(status), ") in ", call);
}

}  // namespace lucid::cuda
