// cuDNN 9, loaded when the first GPU convolution runs (dlopen), as cuBLASLt is
// (cublaslt.h): `import lucid` needs no cuDNN on machines without a GPU. Only the
// legacy convolution API is bound (descriptors, the v7 algorithm heuristics and the
// three convolution calls), which is all conv.cpp uses.
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
};

// The library's entry points; RuntimeError naming libcudnn.so.9 when it cannot be
// loaded (or is older than cuDNN 9).
const CudnnApi& cudnn();
// The handle of `device` (one per device, made on first use), bound to stream(device).
cudnnHandle_t cudnn_handle(int device);
// Throws RuntimeError naming the call when status is not CUDNN_STATUS_SUCCESS.
void check_cudnn(cudnnStatus_t status, const char* call);

}  // namespace lucid::cuda
