// CUDA kernels of the data-moving shape primitives (ops/prims/shape.h).
#include "backend/cuda/elementwise_launch.cuh"
#include "backend/cuda/register.h"
#include "backend/cuda/strided_copy.h"
#include "backend/cuda/strided_copy_kernel.cuh"
#include "ops/prims/shape.h"

namespace lucid::cuda {

namespace {

using ops::Inputs;
using ops::Outputs;

// flip is a strided copy from src read backwards along the flipped dims: its first
// element is the last along each, and those strides are negated.
void flip_prim(const ops::Primitive& prim, Outputs outs, Inputs ins) {
  const TensorImpl& src = *ins[0];
  TensorImpl& out = *outs[0];
  if (out.numel() == 0) return;
  Stride st = src.stride();
  const std::byte* first = src.data_ptr();
  for (int64_t d : ops::prim_cast<ops::Flip>(prim).dims) {
    first += (src.shape()[d] - 1) * st[d];
    st[d] = -st[d];
  }
  strided_copy(out.data_ptr(), out.stride(), first, st, out.shape(), out.itemsize(), out.device().index);
}

// Zeroes element (i, j) of each trailing [rows, cols] matrix where j - i lies beyond the
// diagonal (above it for tril, below it for triu).
template <typename E>
__global__ void tri_kernel(E* out, int64_t n, int64_t rows, int64_t cols, int64_t diagonal, bool lower) {
  for (int64_t e = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; e < n; e += int64_t(gridDim.x) * blockDim.x) {
    const int64_t j = e % cols, i = (e / cols) % rows;
    if (lower ? j - i > diagonal : j - i < diagonal) out[e] = E{};
  }
}

void tri_prim(const ops::Primitive& prim, Outputs outs, Inputs) {
  const auto& p = ops::prim_cast<ops::Tri>(prim);
  TensorImpl& out = *outs[0];
  const int64_t n = out.numel();
  if (n == 0) return;
  const int64_t rows = out.shape()[out.ndim() - 2], cols = out.shape()[out.ndim() - 1];
  const int device = out.device().index;
  DeviceGuard guard(device);
  cudaStream_t s = stream(device);
  void* o = out.data_ptr();
  switch (out.itemsize()) {  // zero bits are zero in every dtype
    case 1: tri_kernel<<<ew_grid(n), kEwThreads, 0, s>>>(static_cast<uint8_t*>(o), n, rows, cols, p.diagonal, p.lower); break;
    case 2: tri_kernel<<<ew_grid(n), kEwThreads, 0, s>>>(static_cast<uint16_t*>(o), n, rows, cols, p.diagonal, p.lower); break;
    case 4: tri_kernel<<<ew_grid(n), kEwThreads, 0, s>>>(static_cast<uint32_t*>(o), n, rows, cols, p.diagonal, p.lower); break;
    case 8: tri_kernel<<<ew_grid(n), kEwThreads, 0, s>>>(static_cast<uint64_t*>(o), n, rows, cols, p.diagonal, p.lower); break;
    case 16: tri_kernel<<<ew_grid(n), kEwThreads, 0, s>>>(static_cast<Bytes16*>(o), n, rows, cols, p.diagonal, p.lower); break;
    default: fail<RuntimeError>("internal: tril/triu of ", out.itemsize(), "-byte items");
  }
  LUCID_CUDA_CHECK(cudaGetLastError());
}

}  // namespace

void register_shape_kernels() {
  using ops::Prim;
  ops::register_kernel(Prim::Flip, DeviceType::GPU, flip_prim);
  ops::register_kernel(Prim::Tri, DeviceType::GPU, tri_prim);
}

}  // namespace lucid::cuda
