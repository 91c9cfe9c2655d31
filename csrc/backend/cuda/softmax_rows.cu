// The unfused softmax / log_softmax over rows (SoftmaxDim with inner == 1):
// softmax_rows_forward.cuh's template with plain loads and stores, in
// softmax_forward_layout's layout (Note [Softmax rows]). Built with --fmad=false like
// the fused kernels that share its text (CMakeLists.txt), so a softmax fused with its
// neighbours gives these bits (Note [Fused norm rows]).
#include <algorithm>
#include <cstdint>

#include "backend/cuda/check.h"
#include "backend/cuda/device_guard.h"
#include "backend/cuda/norm.h"
#include "backend/cuda/softmax_rows_forward.cuh"
#include "backend/cuda/stream.h"
#include "backend/cuda/tensor_data.h"
#include "core/half.h"

namespace lucid::cuda {

namespace {

template <typename S, typename T, int kThreads, int kKept>
__global__ void __launch_bounds__(norm_forward_block(kThreads))
    softmax_rows_dev(PlainRows<S, T> io, long long rows, bool log) {
  softmax_rows_forward<T, kThreads, kKept>(io, rows, io.n, log);
}

template <typename S, typename T, int kThreads, int kKept>
void launch(const PlainRows<S, T>& io, int64_t rows, bool log, cudaStream_t s) {
  size_t staging = 0;
  if constexpr (kKept == kNormStaged) {
    // as much shared memory as the SM has, not L1: the passes read the staged rows
    static const cudaError_t set = cudaFuncSetAttribute(softmax_rows_dev<S, T, kThreads, kKept>,
                                                        cudaFuncAttributePreferredSharedMemoryCarveout,
                                                        int(cudaSharedmemCarveoutMaxShared));
    LUCID_CUDA_CHECK(set);
    staging = size_t(io.n) * sizeof(T);  // (the staged row)
  }
  softmax_rows_dev<S, T, kThreads, kKept>
      <<<norm_forward_grid(rows, {kThreads, kKept}), norm_forward_block(kThreads), staging, s>>>(io, rows, log);
}

template <typename S, typename T>
void softmax_rows_of(const TensorImpl& x, TensorImpl& y, int64_t rows, int64_t n, bool log, cudaStream_t s) {
  const PlainRows<S, T> io{cdata<S>(&x), mdata<S>(&y), n};
  const NormForwardLayout layout = softmax_forward_layout(n, sizeof(T));
  if (layout.threads == 32) launch<S, T, 32, 8>(io, rows, log, s);
  else if (layout.threads == 128) launch<S, T, 128, 8>(io, rows, log, s);
  else if (layout.kept == 4) launch<S, T, kNormRowBlock, 4>(io, rows, log, s);
  else if (layout.kept == 8) launch<S, T, kNormRowBlock, 8>(io, rows, log, s);
  else if (layout.kept == kNormStaged) launch<S, T, kNormRowBlock, kNormStaged>(io, rows, log, s);
  else launch<S, T, kNormRowBlock, kNormReread>(io, rows, log, s);
}

}  // namespace

void softmax_rows(const TensorImpl& x, TensorImpl& y, int64_t rows, int64_t n, bool log) {
  if (rows == 0 || n == 0) return;
  const int device = y.device().index;
  DeviceGuard guard(device);
  const cudaStream_t s = stream(device);
  switch (x.dtype()) {
    case Dtype::F64: softmax_rows_of<double, double>(x, y, rows, n, log, s); break;
    case Dtype::F32: softmax_rows_of<float, float>(x, y, rows, n, log, s); break;
    case Dtype::F16: softmax_rows_of<Half, float>(x, y, rows, n, log, s); break;
    case Dtype::BF16: softmax_rows_of<BFloat16, float>(x, y, rows, n, log, s); break;
    default: LUCID_CHECK(false, RuntimeError, "internal: softmax of ", dtype_name(x.dtype()), " rows on the GPU");
  }
  LUCID_CUDA_CHECK(cudaGetLastError());
}

}  // namespace lucid::cuda
