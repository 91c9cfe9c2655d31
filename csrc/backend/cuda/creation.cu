// CUDA kernels of the creation primitives (ops/prims/creation.h): arange, linspace /
// logspace and eye made on the device, with the CPU's value rules
// (backend/common/creation_values.h), so both devices give the same bits.
#include "backend/common/creation_values.h"
#include "backend/cuda/elementwise_launch.cuh"
#include "backend/cuda/register.h"
#include "ops/prims/creation.h"

namespace lucid::cuda {

namespace {

using ops::Inputs;
using ops::Outputs;

template <typename T, typename F>
__global__ void __launch_bounds__(kEwThreads) generate_kernel(T* out, int64_t n, F f) {
  const int64_t step = int64_t(gridDim.x) * kEwThreads;
  for (int64_t i = int64_t(blockIdx.x) * kEwThreads + threadIdx.x; i < n; i += step)
    out[i] = backend::store_as<T>(f(i));
}

struct ArangeInt {
  int64_t start, step;
  __device__ int64_t operator()(int64_t i) const { return start + i * step; }
};
struct ArangeFloat {
  double start, step;
  __device__ double operator()(int64_t i) const { return start + double(i) * step; }
};
template <typename T>
struct Linspace {
  backend::LinspaceValues<T> values;
  __device__ double operator()(int64_t i) const { return values(i); }
};
// Eye over the flattened [n, m] output: 1 where the row equals the column.
struct EyeValue {
  int64_t m;
  __device__ int64_t operator()(int64_t i) const { return i / m == i % m ? 1 : 0; }
};

// Fills the contiguous output with f(i), stored in its dtype.
template <typename Maker>
void generate(TensorImpl& out, Maker make) {
  const int64_t n = out.numel();
  if (n == 0) return;
  const int device = out.device().index;
  DeviceGuard guard(device);
  visit_dtype(out.dtype(), [&]<typename T>() {
    using D = device_t<T>;
    auto f = make.template operator()<T>();
    generate_kernel<D><<<ew_grid(n), kEwThreads, 0, stream(device)>>>(reinterpret_cast<D*>(out.data_ptr()), n, f);
  });
  LUCID_CUDA_CHECK(cudaGetLastError());
}

void arange_kernel(const ops::Primitive& prim, Outputs outs, Inputs) {
  const auto& p = ops::prim_cast<ops::Arange>(prim);
  const int64_t* i0 = std::get_if<int64_t>(&p.start);
  const int64_t* di = std::get_if<int64_t>(&p.step);
  if (i0 && di) return generate(*outs[0], [&]<typename T>() { return ArangeInt{*i0, *di}; });
  const double s = std::get<double>(p.start), d = std::get<double>(p.step);
  generate(*outs[0], [&]<typename T>() { return ArangeFloat{s, d}; });
}

void linspace_kernel(const ops::Primitive& prim, Outputs outs, Inputs) {
  const auto& p = ops::prim_cast<ops::Linspace>(prim);
  const int64_t n = outs[0]->numel();
  generate(*outs[0], [&]<typename T>() {
    return Linspace<T>{backend::LinspaceValues<T>(p.start, p.end, n, p.log_base.has_value(), p.log_base.value_or(0))};
  });
}

void eye_kernel(const ops::Primitive&, Outputs outs, Inputs) {
  const int64_t m = outs[0]->shape()[1];
  generate(*outs[0], [&]<typename T>() { return EyeValue{m}; });
}

}  // namespace

void register_creation_kernels() {
  using ops::Prim;
  ops::register_kernel(Prim::Arange, DeviceType::GPU, arange_kernel);
  ops::register_kernel(Prim::Linspace, DeviceType::GPU, linspace_kernel);
  ops::register_kernel(Prim::Eye, DeviceType::GPU, eye_kernel);
}

}  // namespace lucid::cuda
