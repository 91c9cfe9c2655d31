// CUDA kernel of Conj (ops/prims/linalg.h) and conj.h's conjugate: out = conj(x) for contiguous
// complex64 or complex128, possibly in place. Each thread flips the sign of imaginary parts, grid-stride.
#include <algorithm>

#include "backend/cuda/check.h"
#include "backend/cuda/conj.h"
#include "backend/cuda/device_guard.h"
#include "backend/cuda/register.h"
#include "backend/cuda/stream.h"
#include "core/tensor_impl.h"
#include "ops/prims/linalg.h"

namespace lucid::cuda {

namespace {

// A complex element of parts R.
template <typename R>
struct Cplx {
  R re, im;
};

template <typename R>
__global__ void conj_kernel(const Cplx<R>* x, Cplx<R>* y, int64_t n) {
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x)
    y[i] = {x[i].re, -x[i].im};
}

void conj_prim(const ops::Primitive&, ops::Outputs outs, ops::Inputs ins) {
  conjugate(outs[0]->dtype(), ins[0]->data_ptr(), outs[0]->data_ptr(), outs[0]->numel(), outs[0]->device().index);
}

}  // namespace

void conjugate(Dtype dtype, const void* x, void* y, int64_t n, int device) {
  if (n == 0) return;
  DeviceGuard guard(device);
  const unsigned blocks = unsigned(std::min<int64_t>((n + 255) / 256, int64_t(1) << 20));
  if (dtype == Dtype::C128)
    conj_kernel<double><<<blocks, 256, 0, stream(device)>>>(static_cast<const Cplx<double>*>(x),
                                                            static_cast<Cplx<double>*>(y), n);
  else
    conj_kernel<float><<<blocks, 256, 0, stream(device)>>>(static_cast<const Cplx<float>*>(x),
                                                           static_cast<Cplx<float>*>(y), n);
  LUCID_CUDA_CHECK(cudaGetLastError());
}

void register_conj_kernels() { ops::register_kernel(ops::Prim::Conj, DeviceType::GPU, conj_prim); }

}  // namespace lucid::cuda
