// CPU kernels of the matrix-product primitives (ops/prims/linalg.h): adapters to
// backend/cpu/blas.h, and the backend's thread and BLAS settings (ops::CpuSettings).
#include <complex>

#include "backend/cpu/blas.h"
#include "backend/cpu/register.h"
#include "ops/linalg.h"
#include "ops/prims/linalg.h"

namespace lucid::cpu {

namespace {

using ops::Inputs;
using ops::Outputs;

void gemm_kernel(const ops::Primitive& prim, Outputs outs, Inputs ins) {
  const auto& p = ops::prim_cast<ops::Gemm>(prim);
  gemm(*outs[0], *ins[0], *ins[1], p.alpha, p.beta);
}

template <typename C>
void conj_of(const TensorImpl& in, TensorImpl& out) {
  const auto* x = reinterpret_cast<const C*>(in.host_ptr());
  auto* y = reinterpret_cast<C*>(out.host_ptr());
  for (int64_t i = 0, n = out.numel(); i < n; ++i) y[i] = std::conj(x[i]);
}

void conj_kernel(const ops::Primitive&, Outputs outs, Inputs ins) {
  if (outs[0]->dtype() == Dtype::C128) conj_of<complex128>(*ins[0], *outs[0]);
  else conj_of<complex64>(*ins[0], *outs[0]);
}

}  // namespace

void register_linalg_kernels() {
  using ops::Prim;
  ops::register_kernel(Prim::Gemm, DeviceType::CPU, gemm_kernel);
  ops::register_kernel(Prim::Conj, DeviceType::CPU, conj_kernel);
  ops::register_cpu_settings({get_num_threads, set_num_threads, has_blas, blas_info, has_lapack});
}

}  // namespace lucid::cpu
