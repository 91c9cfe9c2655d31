// CUDA kernels of the pooling primitives (ops/prims/spatial.h): MaxPool (values and
// flat spatial indices) and AvgPool (the average and its adjoint), over every rank as
// 3-d windows listed per dim. All tensors are contiguous [planes, *in] / [planes, *out].
//
// Each kernel gives one thread to one element it writes and loops over what that
// element reads, in the CPU kernel's order (backend/cpu/pool_kernels.cpp), so the
// results are deterministic and match the CPU's:
//   - max:         an output walks its window (rows, then columns); the first tap
//                  starts the max, a later one takes over when greater or NaN;
//   - avg:         an output sums each window row, scales the row sum by 1 / divisor,
//                  and adds the rows up;
//   - avg adjoint: an input gathers g[o] / divisor(o) over the outputs o whose windows
//                  hold it, in increasing o (the CPU scatters them in that order), so
//                  no atomics. Per dim these outputs are a range [first, last), listed
//                  per input position on the host: Note [Adjoint windows].
// The windows reach the device as a table uploaded through kernel parameters
// (param_table.h, Note [Tables through kernel parameters]).
#include <algorithm>
#include <limits>

#include "backend/cuda/elementwise_launch.cuh"
#include "backend/cuda/param_table.h"
#include "backend/cuda/pool_family.h"
#include "ops/prims/spatial.h"

namespace lucid::cuda {

namespace {

using ops::Inputs;
using ops::Outputs;

// One dim of a pool as the kernels see it. Per element along the dim the kernel
// walks: max: window start and tap count (first[o] + j * step); avg: the clipped
// window [first[o], last[o]); avg adjoint (per input i): the outputs [first[i],
// last[i]). size[o]: the dim's factor of the average's divisor.
struct DimDev {
  int64_t in, out, step;
  const int64_t* first;
  const int64_t* last;
  const double* size;
};

struct PoolDev {
  DimDev dim[3];
  double divisor;  // > 0: divisor_override
};

// (plane, a, b, c): the element with row-major index e over [planes, n0, n1, n2].
struct Pos {
  int64_t plane, a, b, c;
};

struct Unravel {
  int64_t n012, n12, n2;
  FastDiv d012, d12, d2;  // set when the whole index space is < 2^31
  Unravel(int64_t n0, int64_t n1, int64_t n2_) : n012(n0 * n1 * n2_), n12(n1 * n2_), n2(n2_) {
    if (n012 < (int64_t(1) << 31)) {
      d012 = FastDiv(uint32_t(n012));
      d12 = FastDiv(uint32_t(n12));
      d2 = FastDiv(uint32_t(n2));
    }
  }
  template <bool kSmall>
  __device__ __forceinline__ Pos at(int64_t e) const {
    if constexpr (kSmall) {  // e < 2^31: multiplies instead of divisions
      const uint32_t u = uint32_t(e), plane = d012.div(u), r = u - plane * d012.divisor;
      const uint32_t a = d12.div(r), r2 = r - a * d12.divisor, b = d2.div(r2);
      return {plane, a, b, r2 - b * d2.divisor};
    } else {
      const int64_t plane = e / n012, r = e - plane * n012, a = r / n12, r2 = r - a * n12, b = r2 / n2;
      return {plane, a, b, r2 - b * n2};
    }
  }
};

template <typename T>
__device__ __forceinline__ T lowest() {
  if constexpr (std::numeric_limits<T>::has_infinity) return -std::numeric_limits<T>::infinity();
  else return std::numeric_limits<T>::lowest();
}

template <typename T, bool kSmall>
__global__ void __launch_bounds__(kEwThreads) max_pool_kernel(const T* __restrict__ x, T* __restrict__ out,
                                                                int64_t* __restrict__ idx, PoolDev p, Unravel u,
                                                                int64_t n) {
  const DimDev &A = p.dim[0], &B = p.dim[1], &C = p.dim[2];
  const int64_t in_n = A.in * B.in * C.in;
  for (int64_t e = int64_t(blockIdx.x) * kEwThreads + threadIdx.x; e < n; e += int64_t(gridDim.x) * kEwThreads) {
    const Pos o = u.at<kSmall>(e);
    const T* xp = x + o.plane * in_n;
    T best = lowest<T>();
    int64_t at = -1;
    for (int64_t ja = 0, na = A.last[o.a]; ja < na; ++ja) {
      const int64_t ia = A.first[o.a] + ja * A.step;
      if (ia < 0 || ia >= A.in) continue;
      for (int64_t jb = 0, nb = B.last[o.b]; jb < nb; ++jb) {
        const int64_t ib = B.first[o.b] + jb * B.step;
        if (ib < 0 || ib >= B.in) continue;
        const int64_t row = (ia * B.in + ib) * C.in;
        for (int64_t jc = 0, nc = C.last[o.c]; jc < nc; ++jc) {
          const int64_t ic = C.first[o.c] + jc * C.step;
          if (ic < 0 || ic >= C.in) continue;
          const T v = xp[row + ic];
          if (at < 0 || v > best || v != v) {  // (PyTorch: a NaN always takes over)
            best = v;
            at = row + ic;
          }
        }
      }
    }
    out[e] = best;
    idx[e] = at;
  }
}

// The weight of output (a, b, c): 1 / divisor, as the CPU computes it.
__device__ __forceinline__ double avg_weight(const PoolDev& p, int64_t a, int64_t b, int64_t c) {
  return 1.0 / (p.divisor > 0 ? p.divisor : p.dim[0].size[a] * p.dim[1].size[b] * p.dim[2].size[c]);
}

template <typename T, bool kSmall>
__global__ void __launch_bounds__(kEwThreads) avg_pool_kernel(const T* __restrict__ x, T* __restrict__ out,
                                                                PoolDev p, Unravel u, int64_t n) {
  const DimDev &A = p.dim[0], &B = p.dim[1], &C = p.dim[2];
  const int64_t in_n = A.in * B.in * C.in;
  for (int64_t e = int64_t(blockIdx.x) * kEwThreads + threadIdx.x; e < n; e += int64_t(gridDim.x) * kEwThreads) {
    const Pos o = u.at<kSmall>(e);
    const T* xp = x + o.plane * in_n;
    const double w = avg_weight(p, o.a, o.b, o.c);
    const int64_t c0 = C.first[o.c], c1 = C.last[o.c];
    T acc = 0;
    for (int64_t ia = A.first[o.a]; ia < A.last[o.a]; ++ia)
      for (int64_t ib = B.first[o.b]; ib < B.last[o.b]; ++ib) {
        const T* row = xp + (ia * B.in + ib) * C.in;
        T s = 0;
        for (int64_t ic = c0; ic < c1; ++ic) s += row[ic];
        acc += T(s * w);
      }
    out[e] = acc;
  }
}

// gx over [planes, *in] from g over [planes, *out].
template <typename T, bool kSmall>
__global__ void __launch_bounds__(kEwThreads) avg_pool_adjoint_kernel(const T* __restrict__ g, T* __restrict__ gx,
                                                                        PoolDev p, Unravel u, int64_t n) {
  const DimDev &A = p.dim[0], &B = p.dim[1], &C = p.dim[2];
  const int64_t out_n = A.out * B.out * C.out;
  for (int64_t e = int64_t(blockIdx.x) * kEwThreads + threadIdx.x; e < n; e += int64_t(gridDim.x) * kEwThreads) {
    const Pos i = u.at<kSmall>(e);
    const T* gp = g + i.plane * out_n;
    const int64_t c0 = C.first[i.c], c1 = C.last[i.c];
    T acc = 0;
    for (int64_t oa = A.first[i.a]; oa < A.last[i.a]; ++oa)
      for (int64_t ob = B.first[i.b]; ob < B.last[i.b]; ++ob) {
        const T* row = gp + (oa * B.out + ob) * C.out;
        for (int64_t oc = c0; oc < c1; ++oc) acc += T(row[oc] * avg_weight(p, oa, ob, oc));
      }
    gx[e] = acc;
  }
}

// ---- the windows' tables ------------------------------------------------------------

// A pool's per-dim lists as a table for the device; pointers set after the upload.
struct PoolTable {
  ParamTable table;
  int64_t first[3], last[3], size[3];
  PoolDev dev{};

  void add_dim(int d, const ops::PoolWindows& w, const std::vector<int64_t>& first_v,
               const std::vector<int64_t>& last_v) {
    dev.dim[d].in = w.in;
    dev.dim[d].out = w.out;
    dev.dim[d].step = w.step;
    first[d] = table.add(first_v);
    last[d] = table.add(last_v);
    size[d] = table.add(w.size);
  }
  // Uploads the table; the result must outlive the launch.
  GpuStorage upload(int device) {
    GpuStorage s = upload_table(table, device);
    for (int d = 0; d < 3; ++d) {
      dev.dim[d].first = table_entry<int64_t>(s, first[d]);
      dev.dim[d].last = table_entry<int64_t>(s, last[d]);
      dev.dim[d].size = table_entry<double>(s, size[d]);
    }
    return s;
  }
};

// The window of output o clipped to the input: [lo, hi) (average pools step by 1).
void clipped_windows(const ops::PoolWindows& w, std::vector<int64_t>& lo, std::vector<int64_t>& hi) {
  lo.resize(size_t(w.out));
  hi.resize(size_t(w.out));
  for (size_t o = 0; o < size_t(w.out); ++o) {
    lo[o] = std::clamp<int64_t>(w.start[o], 0, w.in);
    hi[o] = std::clamp<int64_t>(w.start[o] + w.len[o], lo[o], w.in);
  }
}

// Note [Adjoint windows]
// The average pool's adjoint reads, for input i, the outputs o with lo[o] <= i < hi[o].
// Sliding and adaptive windows both have starts and ends that never decrease with o,
// so these outputs are a range [first[i], last[i]), found for every i by two pointers.
// Windows out of that order (no op makes them) are refused rather than gathered wrong.
void adjoint_ranges(const char* name, const ops::PoolWindows& w, std::vector<int64_t>& first,
                    std::vector<int64_t>& last) {
  std::vector<int64_t> lo, hi;
  clipped_windows(w, lo, hi);
  for (size_t o = 1; o < lo.size(); ++o)
    LUCID_CHECK(lo[o] >= lo[o - 1] && hi[o] >= hi[o - 1], NotImplementedError, name,
                ": windows whose starts or ends decrease are not supported on the GPU");
  first.resize(size_t(w.in));
  last.resize(size_t(w.in));
  size_t o1 = 0, o2 = 0;
  for (int64_t i = 0; i < w.in; ++i) {
    while (o1 < hi.size() && hi[o1] <= i) ++o1;
    while (o2 < lo.size() && lo[o2] <= i) ++o2;
    first[size_t(i)] = int64_t(o1);
    last[size_t(i)] = int64_t(std::max(o1, o2));
  }
}

template <typename Kernel>
void launch_over(Kernel k, int64_t n, int device) {
  if (n == 0) return;
  DeviceGuard guard(device);
  k(ew_grid(n), stream(device));
  LUCID_CUDA_CHECK(cudaGetLastError());
}

void max_pool_prim(const ops::Primitive& prim, Outputs outs, Inputs ins) {
  const ops::PoolDims& dims = ops::prim_cast<ops::MaxPool>(prim).dims;
  const TensorImpl& x = *ins[0];
  TensorImpl &out = *outs[0], &idx = *outs[1];
  const int device = out.device().index;
  PoolTable t;
  for (int d = 0; d < 3; ++d) t.add_dim(d, dims[d], dims[d].start, dims[d].len);
  const GpuStorage table = t.upload(device);
  const Unravel u(dims[0].out, dims[1].out, dims[2].out);
  const int64_t n = out.numel();
  auto run = [&]<typename T>() {
    const T* xp = reinterpret_cast<const T*>(x.data_ptr());
    T* op = reinterpret_cast<T*>(out.data_ptr());
    int64_t* ip = reinterpret_cast<int64_t*>(idx.data_ptr());
    launch_over([&](unsigned grid, cudaStream_t s) {
      if (n < (int64_t(1) << 31)) max_pool_kernel<T, true><<<grid, kEwThreads, 0, s>>>(xp, op, ip, t.dev, u, n);
      else max_pool_kernel<T, false><<<grid, kEwThreads, 0, s>>>(xp, op, ip, t.dev, u, n);
    }, n, device);
  };
  switch (x.dtype()) {
    case Dtype::F32: return run.operator()<float>();
    case Dtype::F64: return run.operator()<double>();
    case Dtype::I64: return run.operator()<int64_t>();
    default: fail<RuntimeError>("internal: max_pool on the GPU given dtype ", dtype_name(x.dtype()));
  }
}

void avg_pool_prim(const ops::Primitive& prim, Outputs outs, Inputs ins) {
  const auto& p = ops::prim_cast<ops::AvgPool>(prim);
  const TensorImpl& x = *ins[0];
  TensorImpl& out = *outs[0];
  const int device = out.device().index;
  PoolTable t;
  t.dev.divisor = p.divisor;
  std::vector<int64_t> first, last;
  for (int d = 0; d < 3; ++d) {
    if (p.adjoint) adjoint_ranges(p.name(), p.dims[d], first, last);
    else clipped_windows(p.dims[d], first, last);
    t.add_dim(d, p.dims[d], first, last);
  }
  const GpuStorage table = t.upload(device);
  // One thread per element written: the pool's outputs, or the adjoint's inputs.
  const Unravel u = p.adjoint ? Unravel(p.dims[0].in, p.dims[1].in, p.dims[2].in)
                              : Unravel(p.dims[0].out, p.dims[1].out, p.dims[2].out);
  const int64_t n = out.numel();
  auto run = [&]<typename T>() {
    const T* xp = reinterpret_cast<const T*>(x.data_ptr());
    T* op = reinterpret_cast<T*>(out.data_ptr());
    launch_over([&](unsigned grid, cudaStream_t s) {
      const bool small = n < (int64_t(1) << 31);
      if (p.adjoint && small) avg_pool_adjoint_kernel<T, true><<<grid, kEwThreads, 0, s>>>(xp, op, t.dev, u, n);
      else if (p.adjoint) avg_pool_adjoint_kernel<T, false><<<grid, kEwThreads, 0, s>>>(xp, op, t.dev, u, n);
      else if (small) avg_pool_kernel<T, true><<<grid, kEwThreads, 0, s>>>(xp, op, t.dev, u, n);
      else avg_pool_kernel<T, false><<<grid, kEwThreads, 0, s>>>(xp, op, t.dev, u, n);
    }, n, device);
  };
  if (out.dtype() == Dtype::F64) run.operator()<double>();
  else run.operator()<float>();
}

}  // namespace

void register_pool_kernels() {
  ops::register_kernel(ops::Prim::MaxPool, DeviceType::GPU, max_pool_prim);
  ops::register_kernel(ops::Prim::AvgPool, DeviceType::GPU, avg_pool_prim);
  register_resample_kernels();
  register_grid_sample_kernels();
}

}  // namespace lucid::cuda
