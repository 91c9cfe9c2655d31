// CUDA kernels of the scans: cumsum / cumprod along one dim (ScanDim, ops/prims/reduce.h)
// and nonzero's coordinates (Nonzero, ops/prims/index.h), which are a scan of flags.
//
// Note [Deterministic scans]
// Every scan runs in an order fixed by the shape alone, so a float result has the same
// bits on every run (and for every GPU model):
// - rows (inner == 1): a block walks its row in tiles; each thread scans a few
//   consecutive elements, a warp-shuffle scan joins the threads' totals, and the
//   tile's total is carried to the next tile. A few long rows are cut into chunks of
//   fixed length: the chunks' totals first, one thread per row scans them, then each
//   chunk is rescanned from its prefix (the CPU's scheme, backend/cpu/scan.cpp).
// - columns (inner > 1, or rows too short to fill a warp): one thread per (o, i)
//   walks n, coalesced over i.
// Running totals are the CPU's: double for a float32/64 output of its own, the dtype
// itself for a scan in place (int64 through uint64, which wraps, as the CPU's does).
#include <algorithm>
#include <cstring>

#include "backend/cuda/check.h"
#include "backend/cuda/device_guard.h"
#include "backend/cuda/register.h"
#include "backend/cuda/stream.h"
#include "core/tensor_impl.h"
#include "ops/prims/index.h"
#include "ops/prims/reduce.h"

namespace lucid::cuda {

namespace {

using ops::Inputs;
using ops::Outputs;

constexpr int kScanThreads = 256;  // the most threads of a row block
constexpr int kScanItems = 8;      // consecutive elements per thread and tile
// Rows at least twice this long are cut into chunks of it when there are fewer
// than kFewRows rows (about two per multiprocessor of an H200).
constexpr int64_t kScanChunk = 65536;
constexpr int64_t kFewRows = 256;
// Rows up to this long go through the column kernel (one thread per row).
constexpr int64_t kShortRow = 32;

// ---- the scanners -------------------------------------------------------------------

// complex128 as stored and as a running total of a scan in place (complex scans run
// in complex128, the ops layer's accumulate dtype, as the CPU's).
struct C128 {
  double re, im;
};

// How a dtype is read into its running total, combined and written back.
template <typename T, typename Acc, bool kProd>
struct Scanner {
  __device__ static Acc identity() { return Acc(kProd ? 1 : 0); }
  __device__ static Acc in(T v) { return Acc(v); }
  __device__ static T out(Acc a) { return T(a); }
  __device__ static Acc op(Acc a, Acc b) { return kProd ? a * b : a + b; }
};
template <bool kProd>
struct Scanner<C128, C128, kProd> {
  __device__ static C128 identity() { return {kProd ? 1.0 : 0.0, 0.0}; }
  __device__ static C128 in(C128 v) { return v; }
  __device__ static C128 out(C128 a) { return a; }
  __device__ static C128 op(C128 a, C128 b) {
    if constexpr (kProd) return {a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re};
    else return {a.re + b.re, a.im + b.im};
  }
};

// __shfl_up_sync of any 4-byte-multiple type, word by word.
template <typename T>
__device__ T shfl_up(T v, int delta) {
  static_assert(sizeof(T) % 4 == 0);
  int w[sizeof(T) / 4];
  memcpy(w, &v, sizeof(T));
#pragma unroll
  for (int k = 0; k < int(sizeof(T) / 4); ++k) w[k] = __shfl_up_sync(0xffffffffu, w[k], delta);
  memcpy(&v, w, sizeof(T));
  return v;
}

// The exclusive scan of one value per thread over the block in thread order
// (blockDim.x a multiple of 32, at most 1024); *total gets the block's total.
// `warps` is shared scratch of 32 values.
template <class S, typename Acc>
__device__ Acc block_exclusive_scan(Acc v, Acc* warps, Acc* total) {
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, nwarps = blockDim.x >> 5;
  Acc inc = v;
#pragma unroll
  for (int d = 1; d < 32; d *= 2) {
    const Acc u = shfl_up(inc, d);
    if (lane >= d) inc = S::op(u, inc);
  }
  Acc exc = shfl_up(inc, 1);
  if (lane == 0) exc = S::identity();
  if (lane == 31) warps[warp] = inc;
  __syncthreads();
  if (warp == 0) {
    Acc w = lane < nwarps ? warps[lane] : S::identity();
#pragma unroll
    for (int d = 1; d < 32; d *= 2) {
      const Acc u = shfl_up(w, d);
      if (lane >= d) w = S::op(u, w);
    }
    if (lane < nwarps) warps[lane] = w;  // inclusive over the warps
  }
  __syncthreads();
  if (warp > 0) exc = S::op(warps[warp - 1], exc);
  *total = warps[nwarps - 1];
  __syncthreads();  // warps is reused by the next call
  return exc;
}

// A tile position with one pad per 32 items (8-byte items: fewer bank conflicts when
// each thread reads its kScanItems consecutive ones).
__device__ inline int padded(int k) { return k + (k >> 5); }

// The dynamic shared memory of a row block of `threads`: its tile, sized to the block
// so that blocks of short rows (32 threads) do not hold a full tile each.
template <typename Acc>
size_t tile_bytes(int threads) {
  const int items = threads * kScanItems;
  return size_t(items + items / 32) * sizeof(Acc);
}

// ---- ScanDim: rows ------------------------------------------------------------------

// Block b scans chunk b % chunks of row b / chunks, from prefix[b] (or the identity)
// when y is set; totals[b] gets the chunk's total when totals is set.
template <typename T, typename Acc, bool kProd>
__global__ void __launch_bounds__(kScanThreads) scan_rows_kernel(const T* x, T* y, int64_t rows, int64_t n,
                                                                 int64_t chunk, int64_t chunks, const Acc* prefix,
                                                                 Acc* totals) {
  using S = Scanner<T, Acc, kProd>;
  extern __shared__ __align__(16) unsigned char scan_smem[];
  Acc* tile = reinterpret_cast<Acc*>(scan_smem);  // tile_bytes<Acc>(blockDim.x)
  __shared__ Acc warps[32];
  const int tid = threadIdx.x, threads = blockDim.x, tile_len = threads * kScanItems;
  for (int64_t b = blockIdx.x; b < rows * chunks; b += gridDim.x) {
    const int64_t o = b / chunks, j0 = (b % chunks) * chunk, j1 = j0 + chunk < n ? j0 + chunk : n;
    Acc carry = prefix ? prefix[b] : S::identity();
    for (int64_t t0 = j0; t0 < j1; t0 += tile_len) {
      const int len = int(j1 - t0 < tile_len ? j1 - t0 : tile_len);
      const int64_t base = o * n + t0;
      for (int k = tid; k < tile_len; k += threads) tile[padded(k)] = k < len ? S::in(x[base + k]) : S::identity();
      __syncthreads();
      Acc local[kScanItems];
      Acc run = S::identity();
#pragma unroll
      for (int i = 0; i < kScanItems; ++i) local[i] = run = S::op(run, tile[padded(tid * kScanItems + i)]);
      Acc tile_total;
      const Acc before = S::op(carry, block_exclusive_scan<S>(run, warps, &tile_total));
      if (y) {
#pragma unroll
        for (int i = 0; i < kScanItems; ++i) tile[padded(tid * kScanItems + i)] = S::op(before, local[i]);
        __syncthreads();
        for (int k = tid; k < len; k += threads) y[base + k] = S::out(tile[padded(k)]);
      }
      carry = S::op(carry, tile_total);
      __syncthreads();
    }
    if (totals && tid == 0) totals[b] = carry;
  }
}

// Chunk totals -> the prefix each chunk starts from (exclusive, in chunk order), one
// thread per row.
template <typename T, typename Acc, bool kProd>
__global__ void scan_chunk_totals_kernel(Acc* totals, int64_t rows, int64_t chunks) {
  using S = Scanner<T, Acc, kProd>;
  for (int64_t o = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; o < rows; o += int64_t(gridDim.x) * blockDim.x) {
    Acc acc = S::identity();
    for (int64_t c = 0; c < chunks; ++c) {
      const Acc t = totals[o * chunks + c];
      totals[o * chunks + c] = acc;
      acc = S::op(acc, t);
    }
  }
}

// ---- ScanDim: columns -----------------------------------------------------------------

template <typename T, typename Acc, bool kProd>
__global__ void scan_cols_kernel(const T* x, T* y, int64_t outer, int64_t n, int64_t inner) {
  using S = Scanner<T, Acc, kProd>;
  for (int64_t c = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; c < outer * inner;
       c += int64_t(gridDim.x) * blockDim.x) {
    const int64_t base = (c / inner) * n * inner + c % inner;
    Acc acc = S::identity();
    for (int64_t j = 0; j < n; ++j) {
      acc = S::op(acc, S::in(x[base + j * inner]));
      y[base + j * inner] = S::out(acc);
    }
  }
}

unsigned grid_for(int64_t blocks) { return unsigned(std::min<int64_t>(blocks, int64_t(1) << 20)); }

// The threads of a row block: enough for a row of `len` at kScanItems each, a
// multiple of 32, at most kScanThreads.
int row_threads(int64_t len) {
  int threads = 32;
  while (threads < kScanThreads && int64_t(threads) * kScanItems < len) threads *= 2;
  return threads;
}

template <typename T, typename Acc, bool kProd>
void scan_rows(const T* x, T* y, int64_t rows, int64_t n, int device, cudaStream_t stream) {
  if (rows < kFewRows && n >= 2 * kScanChunk) {  // few long rows: chunks (Note [Deterministic scans])
    const int64_t chunks = (n + kScanChunk - 1) / kScanChunk, blocks = rows * chunks;
    TensorPtr scratch = TensorImpl::empty({blocks * int64_t(sizeof(Acc))}, Dtype::U8, Device::gpu(device));
    Acc* totals = reinterpret_cast<Acc*>(scratch->data_ptr());
    const size_t smem = tile_bytes<Acc>(kScanThreads);
    scan_rows_kernel<T, Acc, kProd><<<grid_for(blocks), kScanThreads, smem, stream>>>(x, nullptr, rows, n, kScanChunk,
                                                                                      chunks, nullptr, totals);
    LUCID_CUDA_CHECK(cudaGetLastError());
    scan_chunk_totals_kernel<T, Acc, kProd><<<unsigned((rows + 255) / 256), 256, 0, stream>>>(totals, rows, chunks);
    LUCID_CUDA_CHECK(cudaGetLastError());
    scan_rows_kernel<T, Acc, kProd><<<grid_for(blocks), kScanThreads, smem, stream>>>(x, y, rows, n, kScanChunk,
                                                                                      chunks, totals, nullptr);
  } else {
    const int threads = row_threads(n);
    scan_rows_kernel<T, Acc, kProd><<<grid_for(rows), threads, tile_bytes<Acc>(threads), stream>>>(
        x, y, rows, n, n, 1, nullptr, nullptr);
  }
  LUCID_CUDA_CHECK(cudaGetLastError());
}

template <typename T, typename Acc, bool kProd>
void scan(const ops::ScanDim& p, const void* xin, void* yout, int device) {
  const T* x = static_cast<const T*>(xin);
  T* y = static_cast<T*>(yout);
  DeviceGuard guard(device);
  cudaStream_t s = stream(device);
  if (p.inner == 1 && p.n > kShortRow) return scan_rows<T, Acc, kProd>(x, y, p.outer, p.n, device, s);
  const int64_t cols = p.outer * p.inner;
  scan_cols_kernel<T, Acc, kProd><<<grid_for((cols + 255) / 256), 256, 0, s>>>(x, y, p.outer, p.n, p.inner);
  LUCID_CUDA_CHECK(cudaGetLastError());
}

template <typename T, typename Acc>
void scan_either(const ops::ScanDim& p, const void* x, void* y, int device) {
  if (p.is_prod) scan<T, Acc, true>(p, x, y, device);
  else scan<T, Acc, false>(p, x, y, device);
}

void scan_dim_kernel(const ops::Primitive& prim, Outputs outs, Inputs ins) {
  const auto& p = ops::prim_cast<ops::ScanDim>(prim);
  TensorImpl& out = *outs[0];
  const void* x = ins[0]->data_ptr();
  void* y = out.data_ptr();
  const int dev = out.device().index;
  if (p.outer * p.n * p.inner == 0) return;
  if (&out != ins[0]) {  // float32/64 into an output of its own, running totals in double
    if (out.dtype() == Dtype::F32) return scan_either<float, double>(p, x, y, dev);
    return scan_either<double, double>(p, x, y, dev);
  }
  switch (out.dtype()) {  // in place, in the accumulate dtype
    case Dtype::I64: return scan_either<int64_t, uint64_t>(p, x, y, dev);
    case Dtype::F64: return scan_either<double, double>(p, x, y, dev);
    case Dtype::C128: return scan_either<C128, C128>(p, x, y, dev);
    default: fail<RuntimeError>("internal: scan_inplace on ", dtype_name(out.dtype()));
  }
}

// ---- Nonzero --------------------------------------------------------------------------

// Each block takes a tile of kNzTile flags (kNzItems consecutive ones per thread):
// 1. count the trues of every tile; 2. scan the counts (inclusive: the ScanDim row
// scan on int64); 3. each tile writes the coordinates of its trues from its offset,
// a thread's from the block's exclusive scan of the threads' counts. The result is in
// row-major order by construction, with no atomics.
constexpr int kNzThreads = 256;
constexpr int kNzItems = 16;
constexpr int64_t kNzTile = int64_t(kNzThreads) * kNzItems;

struct NzShape {
  int ndim;
  int64_t size[kMaxDims];
};

using CountScan = Scanner<uint64_t, uint64_t, false>;

__device__ inline uint64_t thread_count(const uint8_t* flags, int64_t numel, int64_t first) {
  uint64_t count = 0;
#pragma unroll
  for (int i = 0; i < kNzItems; ++i) count += first + i < numel && flags[first + i] != 0;
  return count;
}

__global__ void __launch_bounds__(kNzThreads) nonzero_count_kernel(const uint8_t* flags, int64_t numel,
                                                                   int64_t tiles, int64_t* counts) {
  __shared__ uint64_t warps[32];
  for (int64_t b = blockIdx.x; b < tiles; b += gridDim.x) {
    uint64_t total;
    block_exclusive_scan<CountScan>(thread_count(flags, numel, b * kNzTile + threadIdx.x * kNzItems), warps, &total);
    if (threadIdx.x == 0) counts[b] = int64_t(total);
  }
}

__global__ void __launch_bounds__(kNzThreads) nonzero_write_kernel(const uint8_t* flags, int64_t numel,
                                                                   int64_t tiles, const int64_t* ends, NzShape shape,
                                                                   int64_t* out) {
  __shared__ uint64_t warps[32];
  for (int64_t b = blockIdx.x; b < tiles; b += gridDim.x) {
    const int64_t first = b * kNzTile + threadIdx.x * kNzItems;
    uint64_t total;
    int64_t row = (b ? ends[b - 1] : 0) +
                  int64_t(block_exclusive_scan<CountScan>(thread_count(flags, numel, first), warps, &total));
    for (int i = 0; i < kNzItems; ++i) {
      const int64_t e = first + i;
      if (e >= numel || !flags[e]) continue;
      int64_t rest = e;
      for (int d = shape.ndim - 1; d >= 0; --d) {
        out[row * shape.ndim + d] = rest % shape.size[d];
        rest /= shape.size[d];
      }
      ++row;
    }
  }
}

void nonzero_kernel(const ops::Primitive&, Outputs outs, Inputs ins) {
  TensorImpl& out = *outs[0];
  const TensorImpl& flags = *ins[0];
  if (out.numel() == 0) return;  // no trues, or a 0-d input (no coordinates)
  const int dev = out.device().index;
  DeviceGuard guard(dev);
  cudaStream_t s = stream(dev);
  const int64_t numel = flags.numel(), tiles = (numel + kNzTile - 1) / kNzTile;
  NzShape shape{int(flags.ndim()), {}};
  for (int d = 0; d < shape.ndim; ++d) shape.size[d] = flags.shape()[d];
  const auto* f = reinterpret_cast<const uint8_t*>(flags.data_ptr());
  TensorPtr ends = TensorImpl::empty({tiles}, Dtype::I64, Device::gpu(dev));
  int64_t* e = reinterpret_cast<int64_t*>(ends->data_ptr());
  nonzero_count_kernel<<<grid_for(tiles), kNzThreads, 0, s>>>(f, numel, tiles, e);
  LUCID_CUDA_CHECK(cudaGetLastError());
  scan_rows<int64_t, uint64_t, false>(e, e, 1, tiles, dev, s);
  nonzero_write_kernel<<<grid_for(tiles), kNzThreads, 0, s>>>(f, numel, tiles, e, shape,
                                                              reinterpret_cast<int64_t*>(out.data_ptr()));
  LUCID_CUDA_CHECK(cudaGetLastError());
}

}  // namespace

void register_scan_kernels() {
  using ops::Prim;
  ops::register_kernel(Prim::ScanDim, DeviceType::GPU, scan_dim_kernel);
  ops::register_kernel(Prim::Nonzero, DeviceType::GPU, nonzero_kernel);
}

}  // namespace lucid::cuda
