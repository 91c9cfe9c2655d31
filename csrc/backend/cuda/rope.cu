// The CUDA kernel of lucid.fast.rope (ops/prims/rope.h): one thread an output feature.
#include <type_traits>

#include "backend/cuda/check.h"
#include "backend/cuda/device_guard.h"
#include "backend/cuda/elementwise_launch.cuh"
#include "backend/cuda/register.h"
#include "backend/cuda/stream.h"
#include "ops/prims/rope.h"

namespace lucid::cuda {

namespace {

using ops::Inputs;
using ops::Outputs;

template <typename T>
__global__ void rope_kernel(ops::RopeParams p, const T* x, T* y, int64_t n, int64_t seq, int64_t features) {
  using C = std::conditional_t<std::is_same_v<T, double>, double, float>;
  for (int64_t e = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; e < n; e += int64_t(gridDim.x) * blockDim.x) {
    const int64_t r = e / features, j = e % features;
    const T* in = x + r * features;
    y[e] = T(ops::rope_feature<C>(p, r % seq, j, [in](int64_t i) { return C(in[i]); }));
  }
}

void rope_prim(const ops::Primitive& prim, Outputs outs, Inputs ins) {
  const ops::RopeParams& p = ops::prim_cast<ops::Rope>(prim).p;
  const TensorImpl& x = *ins[0];
  TensorImpl& y = *outs[0];
  const int64_t n = x.numel(), features = x.shape().back(), seq = x.shape()[x.ndim() - 2];
  if (n == 0) return;
  const int device = y.device().index;
  DeviceGuard guard(device);
  cudaStream_t s = stream(device);
  auto run = [&]<typename T>() {
    rope_kernel<T><<<ew_grid(n), kEwThreads, 0, s>>>(p, reinterpret_cast<const T*>(x.data_ptr()),
                                                    reinterpret_cast<T*>(y.data_ptr()), n, seq, features);
  };
  switch (x.dtype()) {
    case Dtype::F16: run.operator()<Half>(); break;
    case Dtype::BF16: run.operator()<BFloat16>(); break;
    case Dtype::F32: run.operator()<float>(); break;
    case Dtype::F64: run.operator()<double>(); break;
    default: fail<RuntimeError>("internal: fast.rope of ", dtype_name(x.dtype()));
  }
  LUCID_CUDA_CHECK(cudaGetLastError());
}

}  // namespace

void register_rope_kernels() { ops::register_kernel(ops::Prim::Rope, DeviceType::GPU, rope_prim); }

}  // namespace lucid::cuda
