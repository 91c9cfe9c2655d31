// cuDNN 9, loaded when the first GPU convolution runs (dlopen), as cuBLASLt is
// (cublaslt.h): `import lucid` needs no cuDNN on machines without a GPU. Bound: the
// handle and error calls and the backend graph API (descriptors of operation graphs
// and plans) that conv.cpp and attention.cpp use through cudnn_graph.h.
#pragma once

#include <cudnn.h>

namespace lucid::cuda {

struct CudnnApi {
  decltype(&cudnnGetVersion) version;
  decltype(&cudnnGetErrorString) error_string;
  decltype(&cudnnCreate) create;
  decltype(&cudnnSetStream) set_stream;
  decltype(&cudnnGetLastErrorString) last_error;
  decltype(&cudnnBackendCreateDescriptor) backend_create;
  decltype(&cudnnBackendDestroyDescriptor) backend_destroy;
  decltype(&cudnnBackendSetAttribute) backend_set;
  decltype(&cudnnBackendGetAttribute) backend_get;
  decltype(&cudnnBackendFinalize) backend_finalize;
  decltype(&cudnnBackendExecute) backend_execute;
};

// The library's entry points; RuntimeError naming libcudnn.so.9 when it cannot be
// loaded (or is older than cuDNN 9).
const CudnnApi& cudnn();
// The handle of `device` (one per device, made on first use), bound to stream(device).
cudnnHandle_t cudnn_handle(int device);
// Throws RuntimeError naming the call when status is not CUDNN_STATUS_SUCCESS.
void check_cudnn(cudnnStatus_t status, const char* call);

}  // namespace lucid::cuda
