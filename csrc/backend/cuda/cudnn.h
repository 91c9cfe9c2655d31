// cuDNN 9, loaded when the first GPU convolution runs (dlopen), as cuBLASLt is
// (cublaslt.h): `import lucid` needs no cuDNN on machines without a GPU. Bound: the
// legacy convolution API (descriptors, the v7 algorithm heuristics and the three
// convolution calls) that conv.cpp uses, and the backend graph API (descriptors of
// operation graphs and plans) that attention.cpp uses through cudnn_graph.h.
#pragma once

#include <cudnn.h>

namespace lucid::cuda {

struct CudnnApi {
  decltype(&cudnnGetVersion) version;
  decltype(&cudnnGetErrorString) error_string;
  decltype(&cudnnCreate) create;
  decltype(&cudnnSetStream) set_stream;
  decltype(&cudnnCreateTensorDescriptor) tensor_create;
  decltype(&cudnnSetTensorNdDescriptor) tensor_set;
  decltype(&cudnnDestroyTensorDescriptor) tensor_destroy;
  decltype(&cudnnCreateFilterDescriptor) filter_create;
  decltype(&cudnnSetFilterNdDescriptor) filter_set;
  decltype(&cudnnDestroyFilterDescriptor) filter_destroy;
  decltype(&cudnnCreateConvolutionDescriptor) conv_create;
  decltype(&cudnnSetConvolutionNdDescriptor) conv_set;
  decltype(&cudnnSetConvolutionGroupCount) conv_set_groups;
  decltype(&cudnnSetConvolutionMathType) conv_set_math;
  decltype(&cudnnDestroyConvolutionDescriptor) conv_destroy;
  decltype(&cudnnGetConvolutionForwardAlgorithm_v7) forward_algos;
  decltype(&cudnnGetConvolutionForwardWorkspaceSize) forward_workspace;
  decltype(&cudnnConvolutionForward) forward;
  decltype(&cudnnGetConvolutionBackwardDataAlgorithm_v7) data_algos;
  decltype(&cudnnGetConvolutionBackwardDataWorkspaceSize) data_workspace;
  decltype(&cudnnConvolutionBackwardData) backward_data;
  decltype(&cudnnGetConvolutionBackwardFilterAlgorithm_v7) filter_algos;
  decltype(&cudnnGetConvolutionBackwardFilterWorkspaceSize) filter_workspace;
  decltype(&cudnnConvolutionBackwardFilter) backward_filter;
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
