// CUDA kernels of interpolate's separable resampling (ops/prims/spatial.h,
// ResampleTaps): out[b, o, c] = sum_k w[k, o] * src[b, index[k, o], c] along one dim
// of a contiguous [outer, size, inner] tensor, and its adjoint.
//
// Forward: one thread per output element, taps in order k = 0, 1, ... (the CPU's
// order, backend/cpu/resample.cpp). Adjoint: the CPU scatters out[index[k, o]] +=
// w[k, o] * g[o] for o, then k, increasing; here the taps are first grouped by the
// position they write (group_by_key.h), then one thread per element of the result
// gathers its taps in that same order: deterministic, no atomics. Grouping costs a
// sort of the K * O taps (a few kernels on a table of a few thousand entries), shared
// by all outer * inner lines.
//
// A tap index outside [0, size) goes to the device error slot (TapOutOfRange; the op
// raises IndexError at the next sync, as the CPU raises at once), and its element is
// left unwritten (forward) or its tap dropped (adjoint).
#include "backend/cuda/caching_allocator.h"
#include "backend/cuda/device_error.h"
#include "backend/cuda/elementwise_launch.cuh"
#include "backend/cuda/group_by_key.h"
#include "backend/cuda/pool_family.h"
#include "ops/prims/spatial.h"

namespace lucid::cuda {

namespace {

using ops::Inputs;
using ops::Outputs;

// [outer, size, inner] of the resampled dim, and the taps' [K, O].
struct TapsShape {
  int64_t size, inner, k, o;
  FastDiv div_inner, div_size;  // set when the launch's index space is < 2^31
};

// (line b, position p along the dim, column c) of element e over [outer, n, inner].
template <bool kSmall>
__device__ __forceinline__ void unravel(int64_t e, int64_t n, const FastDiv& dn, int64_t inner, const FastDiv& di,
                                        int64_t& b, int64_t& p, int64_t& c) {
  if constexpr (kSmall) {
    const uint32_t u = uint32_t(e), r = di.div(u), q = dn.div(r);
    c = u - r * di.divisor;
    p = r - q * dn.divisor;
    b = q;
  } else {
    const int64_t r = e / inner;
    c = e - r * inner;
    b = r / n;
    p = r - b * n;
  }
}

template <typename T, bool kSmall>
__global__ void __launch_bounds__(kEwThreads) taps_forward_kernel(const T* __restrict__ src,
                                                                    const int64_t* __restrict__ index,
                                                                    const T* __restrict__ weight, T* __restrict__ out,
                                                                    TapsShape s, int64_t n, DeviceErrorSlot* error) {
  for (int64_t e = int64_t(blockIdx.x) * kEwThreads + threadIdx.x; e < n; e += int64_t(gridDim.x) * kEwThreads) {
    int64_t b, o, c;
    unravel<kSmall>(e, s.o, s.div_size, s.inner, s.div_inner, b, o, c);
    const T* line = src + b * s.size * s.inner + c;
    T acc = 0;
    bool ok = true;
    for (int64_t t = 0; t < s.k; ++t) {
      const int64_t i = index[t * s.o + o];
      if (i < 0 || i >= s.size) {
        report_device_error(error, DeviceErrorCode::TapOutOfRange, 0, i, s.size);
        ok = false;
        break;
      }
      const T v = weight[t * s.o + o] * line[i * s.inner];
      acc = t == 0 ? v : acc + v;
    }
    if (ok) out[e] = acc;
  }
}

// keys[v] for tap v = o * K + t (the CPU's scatter order): the position it writes, or
// `size` (dropped) when out of range. With keys null, only checks.
__global__ void tap_keys_kernel(const int64_t* __restrict__ index, TapsShape s, uint64_t* keys, int which,
                                DeviceErrorSlot* error) {
  const int64_t n = s.k * s.o;
  for (int64_t v = int64_t(blockIdx.x) * kEwThreads + threadIdx.x; v < n; v += int64_t(gridDim.x) * kEwThreads) {
    const int64_t o = v / s.k, t = v - o * s.k, i = index[t * s.o + o];
    const bool ok = i >= 0 && i < s.size;
    if (!ok) report_device_error(error, DeviceErrorCode::TapOutOfRange, which, i, s.size);
    if (keys) keys[v] = ok ? uint64_t(i) : uint64_t(s.size);
  }
}

// gx[b, i, c] = sum over the taps v writing i (increasing v) of w[v] * g[b, o(v), c].
template <typename T, bool kSmall>
__global__ void __launch_bounds__(kEwThreads) taps_adjoint_kernel(const T* __restrict__ g,
                                                                    const T* __restrict__ weight,
                                                                    const uint32_t* __restrict__ entry,
                                                                    const int64_t* __restrict__ offset,
                                                                    T* __restrict__ gx, TapsShape s, int64_t n) {
  for (int64_t e = int64_t(blockIdx.x) * kEwThreads + threadIdx.x; e < n; e += int64_t(gridDim.x) * kEwThreads) {
    int64_t b, i, c;
    unravel<kSmall>(e, s.size, s.div_size, s.inner, s.div_inner, b, i, c);
    const T* line = g + b * s.o * s.inner + c;
    T acc = 0;
    for (int64_t j = offset[i], end = offset[i + 1]; j < end; ++j) {
      const int64_t v = entry[j], o = v / s.k, t = v - o * s.k;
      acc += weight[t * s.o + o] * line[o * s.inner];
    }
    gx[e] = acc;
  }
}

void resample_taps_prim(const ops::Primitive& prim, Outputs outs, Inputs ins) {
  const auto& p = ops::prim_cast<ops::ResampleTaps>(prim);
  const TensorImpl &src = *ins[0], &index = *ins[1], &weight = *ins[2];
  TensorImpl& out = *outs[0];
  const TensorImpl& big = p.adjoint ? out : src;  // the side of size `size` along dim
  TapsShape s{big.shape()[p.dim], 1, index.shape()[0], index.shape()[1], {}, {}};
  for (int64_t d = p.dim + 1; d < src.ndim(); ++d) s.inner *= src.shape()[d];
  const int64_t n = out.numel(), taps = s.k * s.o;
  const bool small = n < (int64_t(1) << 31);
  if (small && n > 0) {
    s.div_inner = FastDiv(uint32_t(s.inner));
    s.div_size = FastDiv(uint32_t(p.adjoint ? s.size : s.o));
  }
  const int device = out.device().index;
  DeviceErrorSlot* error = device_error_slot(device);
  const int64_t* ip = reinterpret_cast<const int64_t*>(index.data_ptr());
  DeviceGuard guard(device);
  cudaStream_t st = stream(device);
  const bool empty = n == 0 || src.numel() == 0;
  if (!p.adjoint && !empty) {
    auto run = [&]<typename T>() {
      const T* x = reinterpret_cast<const T*>(src.data_ptr());
      const T* w = reinterpret_cast<const T*>(weight.data_ptr());
      T* o = reinterpret_cast<T*>(out.data_ptr());
      if (small) taps_forward_kernel<T, true><<<ew_grid(n), kEwThreads, 0, st>>>(x, ip, w, o, s, n, error);
      else taps_forward_kernel<T, false><<<ew_grid(n), kEwThreads, 0, st>>>(x, ip, w, o, s, n, error);
    };
    if (src.dtype() == Dtype::F64) run.operator()<double>();
    else run.operator()<float>();
    LUCID_CUDA_CHECK(cudaGetLastError());
    return;
  }
  if (taps == 0) return;
  // The adjoint, or an empty forward whose indices the CPU checks all the same.
  GpuStorage keys;
  if (!empty) keys = CachingAllocator::instance().allocate(size_t(taps) * sizeof(uint64_t), device);
  auto* kp = reinterpret_cast<uint64_t*>(keys.ptr());
  tap_keys_kernel<<<ew_grid(taps), kEwThreads, 0, st>>>(ip, s, kp, p.adjoint ? 1 : 0, error);
  LUCID_CUDA_CHECK(cudaGetLastError());
  if (empty) return;
  const KeyGroups groups = group_by_key(kp, taps, s.size, device);
  auto run = [&]<typename T>() {
    const T* g = reinterpret_cast<const T*>(src.data_ptr());
    const T* w = reinterpret_cast<const T*>(weight.data_ptr());
    T* gx = reinterpret_cast<T*>(out.data_ptr());
    if (small)
      taps_adjoint_kernel<T, true><<<ew_grid(n), kEwThreads, 0, st>>>(g, w, groups.entries(), groups.offsets(), gx,
                                                                       s, n);
    else
      taps_adjoint_kernel<T, false><<<ew_grid(n), kEwThreads, 0, st>>>(g, w, groups.entries(), groups.offsets(),
                                                                        gx, s, n);
  };
  if (src.dtype() == Dtype::F64) run.operator()<double>();
  else run.operator()<float>();
  LUCID_CUDA_CHECK(cudaGetLastError());
}

}  // namespace

void register_resample_kernels() {
  ops::register_kernel(ops::Prim::ResampleTaps, DeviceType::GPU, resample_taps_prim);
}

}  // namespace lucid::cuda
