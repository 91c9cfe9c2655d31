// The forward of layer_norm / rms_norm over rows (NormRows, ops/prims/seq.h) as a
// template over where a row's elements come from and where its results go, so that one
// text serves two compilers (Note [Fused norm rows], ops/fusion_rows.cpp):
//  - nvcc builds the unfused kernel from it with plain loads and stores (norm_rows.cu);
//  - NVRTC builds a fused kernel from it (fused_rows.cpp), whose loads run the
//    elementwise chain that computes the norm's input and whose stores run the chain
//    that takes its result. The build embeds this file's text, and the group sums', in
//    a generated header (backend/cuda/CMakeLists.txt): without their #include lines, so
//    this file includes nothing NVRTC lacks and uses no <cstdint> types.
// The arithmetic is the same text in both, compiled without contraction in both
// (--fmad=false), so fused results are the unfused ones bit for bit.
//
// How a row is spread over threads is the layout (Note [Forward rows in registers],
// norm_rows.cu; chosen by norm_forward_layout, norm.h): a group of kThreads threads a
// row, each keeping its share, elements lane + k * kThreads, in registers for rows of
// up to 4096 elements; longer rows are staged in shared memory (kNormStaged) or, too
// long for that, read again at each pass (kNormReread). The group sums in double and
// meets in a deterministic group sum (Note [Deterministic group sums]). Three passes
// over a row: mean, variance, result.
//
// Note [Reads before writes]
// The compiler may not move a load above a store that could write the same address,
// and through generic pointers any store could. Made element by element (load, chain,
// store), a fused prologue that stores x (autograd holds it) would make each element's
// loads wait for the element before it to be stored. So the Io splits each side into a
// read and a write (load_x / make_x, load_y / store_y; load_dx / store_dx in the
// backward), and the forward issues a thread's reads (all its kept elements', or
// kNormBatch elements' at a time) before the first of the writes that follow them.
// (Measured alone, in the staged layout, it changed nothing: 69 us against 66 for the
// fused forward of fused_norm.py, H100; the layout was what held it back.)
#pragma once

#include "backend/cuda/norm_group_sum.cuh"

namespace lucid::cuda {

// (Also seen by the host code that launches the kernels, backend/cuda/norm.h.)
constexpr int kNormRowBlock = 256;
constexpr long long kNormWarpRowsUpTo = 1024;  // (the backward's layout)
constexpr int kNormBatch = 8;                  // elements a thread reads before it writes any
// A forward layout's elements a thread keeps in registers, or where the row is instead.
constexpr int kNormStaged = 0, kNormReread = -1;

#if defined(__CUDACC__)

// read(i) for a thread's elements i = first + k * kThreads < n, k < kCount, then
// write(k, i, what read(i) gave) for each: every read before the first write (Note
// [Reads before writes]); k is a constant once unrolled, so registers indexed by it
// stay registers.
template <int kThreads, int kCount, typename Read, typename Write>
__device__ __forceinline__ void read_all_then_write(long long first, long long n, Read read, Write write) {
  decltype(read(first)) got[kCount];
#pragma unroll
  for (int k = 0; k < kCount; ++k) {
    const long long i = first + (long long)k * kThreads;
    if (i < n) got[k] = read(i);
  }
#pragma unroll
  for (int k = 0; k < kCount; ++k) {
    const long long i = first + (long long)k * kThreads;
    if (i < n) write(k, i, got[k]);
  }
}

// The same over all of a thread's elements first, first + kThreads, ... < n, kNormBatch
// at a time; write(i, got).
template <int kThreads, typename Read, typename Write>
__device__ __forceinline__ void read_then_write(long long first, long long n, Read read, Write write) {
  using Got = decltype(read(first));
  for (long long base = first; base < n; base += (long long)kNormBatch * kThreads)
    read_all_then_write<kThreads, kNormBatch>(base, n, read, [&](int, long long i, const Got& got) { write(i, got); });
}

// The unfused kernels' Io (norm_rows.cu, softmax_rows.cu): x and y as they are in
// memory, elements of storage type S computed in T.
template <typename S, typename T>
struct PlainRows {
  struct Nothing {};
  using XIn = T;
  using YIn = Nothing;
  const S* x;
  S* y;
  long long n;
  __device__ __forceinline__ T load_x(long long r, long long i) const { return T(x[r * n + i]); }
  __device__ __forceinline__ T make_x(long long, long long, T v) const { return v; }
  __device__ __forceinline__ YIn load_y(long long, long long) const { return {}; }
  __device__ __forceinline__ void store_y(long long r, long long i, T v, YIn) const { y[r * n + i] = S(v); }
};

// What the three passes need besides the row's elements; w and b may be null, and mean
// is null for rms_norm (whose mean is not subtracted).
template <typename T>
struct NormRowsArgs {
  const T *w, *b;
  T *mean, *rstd;
  long long rows, n;
  double eps;
  bool rms;
};

// f(i, x_i) for this thread's elements of a row, in order: from `kept` when the
// layout keeps them in registers (kKept > 0), else from x(i).
template <int kThreads, int kKept, typename T, typename X, typename F>
__device__ __forceinline__ void each_element(const T (&kept)[kKept > 0 ? kKept : 1], const X& x, int lane,
                                             long long n, F f) {
  if constexpr (kKept > 0) {
#pragma unroll
    for (int k = 0; k < kKept; ++k) {
      const long long i = lane + (long long)k * kThreads;
      if (i < n) f(i, kept[k]);
    }
  } else {
    for (long long i = lane; i < n; i += kThreads) f(i, x(i));
  }
}

// x's elements of row r, made once (Note [Reads before writes]): into this thread's
// registers when the layout keeps them there (kKept > 0; all reads first), into the
// row's staging in shared memory (kNormStaged; a thread reads back only what it wrote,
// so no barrier), or nowhere (kNormReread: RowElement makes them again at each pass).
template <int kThreads, int kKept, typename T, class Io>
__device__ __forceinline__ void make_row(const Io& io, long long r, int lane, long long n,
                                         T (&kept)[kKept > 0 ? kKept : 1], T* staged) {
  if constexpr (kKept > 0) {
    read_all_then_write<kThreads, kKept>(
        lane, n, [&](long long i) { return io.load_x(r, i); },
        [&](int k, long long i, const typename Io::XIn& in) { kept[k] = io.make_x(r, i, in); });
  } else if constexpr (kKept == kNormStaged) {
    read_then_write<kThreads>(
        lane, n, [&](long long i) { return io.load_x(r, i); },
        [&](long long i, const typename Io::XIn& in) { staged[i] = io.make_x(r, i, in); });
  }
}

// x's element i of row r (this thread's own) where make_row left it, for layouts that
// do not keep it in registers.
template <typename T, int kKept, class Io>
struct RowElement {
  const Io& io;
  long long r;
  const T* staged;
  __device__ __forceinline__ T operator()(long long i) const {
    if constexpr (kKept == kNormStaged) return staged[i];
    else return io.make_x(r, i, io.load_x(r, i));
  }
};

// result(i, x_i, y_in) for this thread's elements of row r, y_in being what Io's
// load_y read for the element; every read of a batch before its writes.
template <int kThreads, int kKept, typename T, class Io, typename Result>
__device__ __forceinline__ void write_row(const Io& io, long long r, int lane, long long n,
                                          const T (&kept)[kKept > 0 ? kKept : 1], const RowElement<T, kKept, Io>& x,
                                          Result result) {
  if constexpr (kKept > 0) {
    read_all_then_write<kThreads, kKept>(
        lane, n, [&](long long i) { return io.load_y(r, i); },
        [&](int k, long long i, const typename Io::YIn& in) { result(i, kept[k], in); });
  } else {
    read_then_write<kThreads>(
        lane, n, [&](long long i) { return io.load_y(r, i); },
        [&](long long i, const typename Io::YIn& in) { result(i, x(i), in); });
  }
}

// Rows of a.n elements, kThreads threads a row, in blocks of
// norm_forward_block(kThreads); each thread keeps kKept elements of its share in
// registers (kKept * kThreads >= n), or the row is staged (kNormStaged: n elements of
// T in the dynamic shared memory) or read again at each pass (kNormReread). Io, for
// element i of row r:
//  - `XIn load_x(r, i) const` reads what x's element is made of, and
//    `T make_x(r, i, const XIn&) const` makes it (and may write);
//  - `YIn load_y(r, i) const` reads what storing the result needs besides it, and
//    `void store_y(r, i, T y, const YIn&) const` stores it.
template <typename T, int kThreads, int kKept, class Io>
__device__ __forceinline__ void norm_rows_forward(const Io& io, const NormRowsArgs<T>& a) {
  constexpr int kRowsPerBlock = kThreads == 32 ? kNormRowBlock / 32 : 1;  // (norm_forward_block, norm.h)
  __shared__ double scratch[kThreads / 32];
  extern __shared__ __align__(16) unsigned char norm_staging[];
  const int lane = int(threadIdx.x) % kThreads;
  const long long n = a.n;
  T* const staged = reinterpret_cast<T*>(norm_staging) + (long long)(threadIdx.x / kThreads) * n;
  for (long long r = (long long)blockIdx.x * kRowsPerBlock + threadIdx.x / kThreads; r < a.rows;
       r += (long long)gridDim.x * kRowsPerBlock) {
    T kept[kKept > 0 ? kKept : 1];
    make_row<kThreads, kKept>(io, r, lane, n, kept, staged);
    const RowElement<T, kKept, Io> x{io, r, staged};
    T mt = 0;
    if (!a.rms) {
      double s[1] = {0.0};
      each_element<kThreads, kKept>(kept, x, lane, n, [&](long long, T xi) { s[0] += double(xi); });
      group_sum<kThreads>(s, scratch);
      mt = T(s[0] / double(n));
    }
    double ss[1] = {0.0};
    each_element<kThreads, kKept>(kept, x, lane, n, [&](long long, T xi) {
      const T d = xi - mt;
      ss[0] += double(d * d);
    });
    group_sum<kThreads>(ss, scratch);
    const T rs = T(1.0 / sqrt(ss[0] / double(n) + a.eps));
    if (lane == 0) {
      if (a.mean) a.mean[r] = mt;
      a.rstd[r] = rs;
    }
    write_row<kThreads, kKept>(io, r, lane, n, kept, x, [&](long long i, T xi, const typename Io::YIn& in) {
      T v = (xi - mt) * rs;
      if (a.w) v = v * a.w[i];
      if (a.b) v = v + a.b[i];
      io.store_y(r, i, v, in);
    });
  }
}

#endif  // __CUDACC__

}  // namespace lucid::cuda
