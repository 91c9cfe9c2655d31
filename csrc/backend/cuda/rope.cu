// The CUDA kernel of lucid.fast.rope (ops/prims/rope.h): one thread a pair of features.
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

// One thread a slot of a row: slot s < dims / 2 turns pair s, the others copy feature
// dims + (s - dims / 2). Index is int32_t when the elements fit, int64_t otherwise.
template <typename T, typename Index>
__global__ void rope_kernel(ops::RopeParams p, const T* x, T* y, Index n, Index seq, Index features, Index slots) {
  const Index half = Index(p.dims / 2);
  for (Index e = Index(blockIdx.x) * blockDim.x + threadIdx.x; e < n; e += Index(gridDim.x) * blockDim.x) {
    const Index r = e / slots, s = e % slots;
    const T* in = x + int64_t(r) * features;
    T* out = y + int64_t(r) * features;
    if (s < half) ops::rope_pair(p, in, out, r % seq, s);
    else out[p.dims + (s - half)] = in[p.dims + (s - half)];
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
  const int64_t slots = p.dims / 2 + (features - p.dims), rows = n / features, work = rows * slots;
  auto run = [&]<typename T>() {
    auto* in = reinterpret_cast<const T*>(x.data_ptr());
    auto* out = reinterpret_cast<T*>(y.data_ptr());
    if (n < (int64_t(1) << 31))  // (n >= work, features, seq)
      rope_kernel<T, int32_t><<<ew_grid(work), kEwThreads, 0, s>>>(p, in, out, int32_t(work), int32_t(seq),
                                                                  int32_t(features), int32_t(slots));
    else
      rope_kernel<T, int64_t><<<ew_grid(work), kEwThreads, 0, s>>>(p, in, out, work, seq, features, slots);
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
