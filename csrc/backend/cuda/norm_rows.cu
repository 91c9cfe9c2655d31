// CUDA kernels of layer_norm / rms_norm over rows of n contiguous elements (NormRows,
// NormRowsBackward in ops/prims/seq.h), float32 or float64. The CPU kernel
// (backend/cpu/seq_kernels.cpp) is the specification: the mean and 1/std kept per
// row in T, the row centred on the rounded mean before squaring.
//
// The forward is norm_rows_forward.cuh's template with plain loads and stores (the
// fused kernels of fusion_rows.cpp are the same template with generated ones), its
// layout in Note [Forward rows in registers]. The backward gives one group of threads
// one row (a warp up to kNormWarpRowsUpTo elements, the block beyond), sums in double in a deterministic group
// sum (Note [Deterministic group sums]) and makes two passes; the row is read from
// memory once (Note [Rows in registers]). d weight and d bias are sums over the rows, a
// column reduction on the engine of reduce.cuh (deterministic, no atomics).
//
// Note [Rows in registers]
// The passes used to read the row again from L1/L2. With 8 rows of 1024 floats a block
// and 8 blocks an SM, the rows the resident blocks read (256 KB an SM, and two arrays
// in the backward) outgrow L1 and, over the GPU, the 50 MB L2, so the later passes went
// back to memory: the backward of layer_norm over [16384, 1024] float32 took 138 us on
// an H100 where one read of g and x and one write of dx take about 65 us.
// - The backward keeps each thread's share of the row (element lane + k * threads for
//   k < kCached) in registers, loaded once, coalesced as before; a row longer than
//   threads * kCached reads its remainder at each pass. 57 us on an H200.
// - The forward did the same at first and got slower (91 us against torch's 55, H200):
//   ptxas gave it 176 registers for 32 cached floats (as many without the affine
//   loads), so one block an SM and too few rows in flight. It then staged the row in
//   shared memory, until Note [Forward rows in registers].
//
// Note [Forward rows in registers]
// Staged, a warp made a row of 1024 (8 rows a block of 256, 7 blocks an SM): 71-78 us
// over [16384, 1024] float32 on an H100 against torch eager's 59, and the fused
// residual add, norm and cast took 66-69 us, at 38% of the memory's bandwidth. A lane
// worked through 32 elements in series, and 16384 rows were 2.2 waves of resident
// blocks, which loaded, summed and stored in step.
// - So the forward spreads a row over more threads, each keeping 8 elements (16 for
//   rows of 2049 to 4096) in registers, made once: a warp a row up to 256 elements (8
//   rows a block), 128 threads a row up to 1024, 256 up to 4096 (a block a row), the
//   staged row beyond (norm_forward_layout). 64 registers for 1024 floats.
// - H100, 2026-12-06, one run: [16384, 1024] 56.6 us against torch eager's 58.8
//   (0.96), forward + backward 202 against 223 (0.91); the fused forward of the big
//   encoder step 98 us a call, was 139.
// - A different number of threads a row sums in another order, so the bits differ from
//   the staged layout's; fused and unfused kernels take the same layout, so they agree.
#include <algorithm>
#include <cmath>
#include <cstdint>

#include "backend/cuda/norm.h"
#include "backend/cuda/norm_group_sum.cuh"
#include "backend/cuda/norm_rows_backward.cuh"
#include "backend/cuda/norm_rows_forward.cuh"
#include "backend/cuda/reduce.cuh"
#include "backend/cuda/tensor_data.h"
#include "ops/prims/seq.h"

namespace lucid::cuda {

namespace {

using ops::Inputs;
using ops::Outputs;

template <typename T, int kThreads, int kKept>
__global__ void __launch_bounds__(norm_forward_block(kThreads)) norm_rows_forward_dev(PlainRows<T, T> io,
                                                                                      NormRowsArgs<T> a) {
  norm_rows_forward<T, kThreads, kKept>(io, a);
}

// The unfused backward: dx as it is in memory.
template <typename T>
struct PlainDx {
  struct DxIn {};
  T* dx;
  long long n;
  __device__ __forceinline__ DxIn load_dx(long long, long long) const { return {}; }
  __device__ __forceinline__ void store_dx(long long r, long long i, T v, DxIn) const { dx[r * n + i] = v; }
};

template <typename T, int kThreads, int kCached>
__global__ void __launch_bounds__(kNormRowBlock) norm_rows_backward_dev(PlainDx<T> io, NormRowsBackwardArgs<T> a) {
  norm_rows_backward<T, kThreads, kCached>(io, a);
}

struct SumPair {
  double dw, db;
};

// d weight[i] = sum_r g[r, i] xhat[r, i], d bias[i] = sum_r g[r, i]: the columns of
// [rows, n] (the engine's load gets element e of row j).
template <typename T>
struct AffineGradReducer {
  using Acc = SumPair;
  const T *g, *x, *mean, *rstd;
  T *dw, *db;
  __device__ Acc init() const { return {0.0, 0.0}; }
  __device__ Acc load(int64_t e, int64_t j) const {
    const T m = mean ? mean[j] : T(0);
    return {double(g[e] * (x[e] - m) * rstd[j]), double(g[e])};
  }
  __device__ Acc combine(Acc a, Acc b) const { return {a.dw + b.dw, a.db + b.db}; }
  __device__ void store(int64_t i, Acc a) const {
    if (dw) dw[i] = T(a.dw);
    if (db) db[i] = T(a.db);
  }
};

// Launch<T, threads per row>::run over the rows on the stream of `device`.
template <template <typename, int> class Launch, typename T, typename Args>
void launch_rows(const Args& args, int64_t rows, int64_t n, int device) {
  if (rows == 0 || n == 0) return;
  DeviceGuard guard(device);
  cudaStream_t s = stream(device);
  const unsigned grid = norm_rows_grid(rows, n);
  if (norm_row_threads(n) == 32) Launch<T, 32>::run(args, grid, s, n);
  else Launch<T, kNormRowBlock>::run(args, grid, s, n);
  LUCID_CUDA_CHECK(cudaGetLastError());
}

template <typename T>
struct ForwardArgs {
  PlainRows<T, T> io;
  NormRowsArgs<T> a;
};

// The forward of layout <kThreads, kKept> (norm_forward_layout).
template <typename T, int kThreads, int kKept>
void launch_forward(const ForwardArgs<T>& f, int64_t rows, cudaStream_t s) {
  const int64_t n = f.a.n;
  size_t staging = 0;
  if constexpr (kKept == kNormStaged) {
    // as much shared memory as the SM has, not L1: the passes read the staged rows
    static const cudaError_t set = cudaFuncSetAttribute(norm_rows_forward_dev<T, kThreads, kKept>,
                                                        cudaFuncAttributePreferredSharedMemoryCarveout,
                                                        int(cudaSharedmemCarveoutMaxShared));
    LUCID_CUDA_CHECK(set);
    staging = size_t(n) * sizeof(T);  // (the staged row)
  }
  norm_rows_forward_dev<T, kThreads, kKept>
      <<<norm_forward_grid(rows, {kThreads, kKept}), norm_forward_block(kThreads), staging, s>>>(f.io, f.a);
}

template <typename T>
struct BackwardArgs {
  PlainDx<T> io;
  NormRowsBackwardArgs<T> a;
};

template <typename T, int kThreads>
struct BackwardLaunch {
  static void run(const BackwardArgs<T>& b, unsigned grid, cudaStream_t s, int64_t n) {
    if (norm_backward_cached(n, sizeof(T)) == 8)
      norm_rows_backward_dev<T, kThreads, 8><<<grid, kNormRowBlock, 0, s>>>(b.io, b.a);
    else if constexpr (sizeof(T) == 4)  // (double never keeps 32: no such kernel is built)
      norm_rows_backward_dev<T, kThreads, 32><<<grid, kNormRowBlock, 0, s>>>(b.io, b.a);
  }
};

}  // namespace

void norm_rows_kernel(const ops::Primitive& prim, Outputs outs, Inputs ins) {
  const auto& p = ops::prim_cast<ops::NormRows>(prim);
  const auto t = p.tensors(outs, ins);
  const int64_t rows = p.rows(ins);
  if (rows == 0 || p.n == 0) return;
  const int device = t.y->device().index;
  DeviceGuard guard(device);
  cudaStream_t s = stream(device);
  visit_float32_or_64(t.x->dtype(), [&](auto z) {
    using T = decltype(z);
    const ForwardArgs<T> f{{cdata<T>(t.x), mdata<T>(t.y), p.n},
                           {cdata<T>(t.weight), cdata<T>(t.bias), mdata<T>(t.mean), mdata<T>(t.rstd), rows, p.n, p.eps,
                            p.rms}};
    const NormForwardLayout layout = norm_forward_layout(p.n, sizeof(T));
    if (layout.threads == 32) launch_forward<T, 32, 8>(f, rows, s);
    else if (layout.threads == 128) launch_forward<T, 128, 8>(f, rows, s);
    else if (layout.kept == 8) launch_forward<T, kNormRowBlock, 8>(f, rows, s);
    else if (layout.kept == 16) launch_forward<T, kNormRowBlock, 16>(f, rows, s);
    else if (layout.kept == kNormStaged) launch_forward<T, kNormRowBlock, kNormStaged>(f, rows, s);
    else launch_forward<T, kNormRowBlock, kNormReread>(f, rows, s);
  });
  LUCID_CUDA_CHECK(cudaGetLastError());
}

void norm_rows_affine_grads(const TensorImpl* dy, const TensorImpl* x, const TensorImpl* mean, const TensorImpl* rstd,
                            TensorImpl* dweight, TensorImpl* dbias, int64_t rows, int64_t n, int device) {
  if (!dweight && !dbias) return;
  visit_float32_or_64(x->dtype(), [&](auto z) {
    using T = decltype(z);
    const AffineGradReducer<T> r{cdata<T>(dy), cdata<T>(x), cdata<T>(mean), cdata<T>(rstd), mdata<T>(dweight),
                                 mdata<T>(dbias)};
    reduce_block(r, 1, rows, n, device);
  });
}

void norm_rows_backward_kernel(const ops::Primitive& prim, Outputs outs, Inputs ins) {
  const auto& p = ops::prim_cast<ops::NormRowsBackward>(prim);
  const auto t = p.tensors(outs, ins);
  const int64_t rows = p.rows(ins);
  const int device = t.dx->device().index;
  visit_float32_or_64(t.x->dtype(), [&](auto z) {
    using T = decltype(z);
    const BackwardArgs<T> b{{mdata<T>(t.dx), p.n},
                            {cdata<T>(t.dy), cdata<T>(t.x), cdata<T>(t.weight), cdata<T>(t.mean), cdata<T>(t.rstd),
                             rows, p.n, p.rms}};
    launch_rows<BackwardLaunch, T>(b, rows, p.n, device);
  });
  norm_rows_affine_grads(t.dy, t.x, t.mean, t.rstd, t.dweight, t.dbias, rows, p.n, device);
}

}  // namespace lucid::cuda
