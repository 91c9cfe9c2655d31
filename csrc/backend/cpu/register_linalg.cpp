// CPU kernels of the matrix-product primitives (ops/prims/linalg.h): adapters to
// backend/cpu/blas.h, and the backend's thread and BLAS settings (ops::CpuSettings).
#include <algorithm>
#include <complex>

#include "backend/cpu/blas.h"
#include "backend/cpu/register.h"
#include "core/parallel.h"
#include "ops/linalg.h"
#include "ops/prims/linalg.h"

namespace lucid::cpu {

namespace {

using ops::Inputs;
using ops::Outputs;

// Every row of the contiguous [m, n] out set to the contiguous [n] bias.
template <typename T>
void spread_rows(TensorImpl& out, const TensorImpl& bias) {
  const int64_t n = bias.numel(), m = out.numel() / n;
  const auto* b = reinterpret_cast<const T*>(bias.host_ptr());
  auto* o = reinterpret_cast<T*>(out.host_ptr());
  for (int64_t i = 0; i < m; ++i) std::copy(b, b + n, o + i * n);
}

// sums[i] = the sum over k of a[i, k], in double, k in order (the same bits on any
// thread count): threads take blocks of i, each walking a row of k at a time with i
// innermost, so that a column-major a (a linear layer's g^T) reads its memory in order.
template <typename T>
void row_sums(TensorImpl& sums, const TensorImpl& a) {
  const int64_t m = a.shape()[0], k = a.shape()[1], item = int64_t(sizeof(T));
  const int64_t si = a.stride()[0] / item, sk = a.stride()[1] / item;
  const auto* x = reinterpret_cast<const T*>(a.host_ptr());
  auto* out = reinterpret_cast<T*>(sums.host_ptr());
  constexpr int64_t kBlock = 256;  // sums a thread keeps (2 KiB of doubles, in L1)
  parallel_for((m + kBlock - 1) / kBlock, std::max<int64_t>(1, kParallelGrain / (kBlock * k)),
               [&](int64_t b0, int64_t b1) {
    double acc[kBlock];
    for (int64_t b = b0; b < b1; ++b) {
      const int64_t i0 = b * kBlock, len = std::min(kBlock, m - i0);
      std::fill(acc, acc + len, 0.0);
      for (int64_t j = 0; j < k; ++j) {
        const T* row = x + i0 * si + j * sk;
        if (si == 1) {
          for (int64_t i = 0; i < len; ++i) acc[i] += double(row[i]);
        } else {
          for (int64_t i = 0; i < len; ++i) acc[i] += double(row[i * si]);
        }
      }
      for (int64_t i = 0; i < len; ++i) out[i0 + i] = T(acc[i]);
    }
  });
}

void gemm_kernel(const ops::Primitive& prim, Outputs outs, Inputs ins) {
  const auto& p = ops::prim_cast<ops::Gemm>(prim);
  if (p.bias) visit_floating(outs[0]->dtype(), [&](auto t) { spread_rows<decltype(t)>(*outs[0], *ins[2]); });
  gemm(*outs[0], *ins[0], *ins[1], p.alpha, p.bias ? Scalar(int64_t(1)) : p.beta);
  if (p.row_sums) visit_floating(outs[0]->dtype(), [&](auto t) { row_sums<decltype(t)>(*outs[1], *ins[0]); });
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
