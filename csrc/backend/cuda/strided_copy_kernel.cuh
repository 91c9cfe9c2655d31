// The element-wise strided copy kernel: shared between the .cu file that launches
// it and host code (the planner in strided_copy.cpp and tests) that reuses the
// index arithmetic. Deliberately light: no lucid core header, no iostream.
#pragma once

#include <cstddef>
#include <cstdint>

#include <cuda_runtime_api.h>

#if defined(__CUDACC__)
#define LUCID_CUDA_HD __host__ __device__ __forceinline__
#else
#define LUCID_CUDA_HD inline
#endif

namespace lucid::cuda {

// A 16-byte element (complex128) for kernels that only move elements; alignas makes a
// move one 128-bit access.
struct alignas(16) Bytes16 {
  uint64_t lo;
  uint64_t hi;
};

inline constexpr int kMaxCopyDims = 12;

// A copy after dimension collapsing (strided_copy.cpp): `ndim` dims, outermost
// first, byte strides. Passed to the kernel by value (296 bytes, well within the
// kernel parameter limit), so no device allocation or host-to-device copy is needed.
struct StridedCopyParams {
  int ndim = 0;  // 1..kMaxCopyDims
  int64_t sizes[kMaxCopyDims] = {};
  int64_t dst_strides[kMaxCopyDims] = {};
  int64_t src_strides[kMaxCopyDims] = {};
};

// Byte offsets in dst and src of the element with row-major linear index i
// (0 <= i < product of sizes). 64-bit throughout: tensors may exceed 2^31 elements
// and byte offsets 2^31 bytes. The outermost index needs no division: what is left
// of i after peeling the inner dims is already below sizes[0].
LUCID_CUDA_HD void strided_offsets(int64_t i, const StridedCopyParams& p, int64_t* dst_off,
                                   int64_t* src_off) {
  int64_t rem = i;
  int64_t d_off = 0;
  int64_t s_off = 0;
  for (int d = p.ndim - 1; d > 0; --d) {
    const int64_t size = p.sizes[d];
    const int64_t q = rem / size;
    const int64_t idx = rem - q * size;
    d_off += idx * p.dst_strides[d];
    s_off += idx * p.src_strides[d];
    rem = q;
  }
  *dst_off = d_off + rem * p.dst_strides[0];
  *src_off = s_off + rem * p.src_strides[0];
}

inline constexpr int kCopyThreads = 256;

// Blocks for a grid-stride loop over numel elements. Capped at ~a million blocks:
// beyond that each thread takes several elements, which costs nothing and keeps
// the block count inside limits.
inline unsigned copy_grid(int64_t numel) {
  int64_t blocks = (numel + kCopyThreads - 1) / kCopyThreads;
  return static_cast<unsigned>(blocks < (int64_t(1) << 20) ? blocks : (int64_t(1) << 20));
}

#if defined(__CUDACC__)
// Calls fn(dst_offset, src_offset) once per element, each thread striding the grid:
// the loop every strided kernel shares.
template <typename Fn>
__device__ __forceinline__ void for_each_strided(int64_t numel, const StridedCopyParams& p, Fn fn) {
  const int64_t step = int64_t(blockDim.x) * int64_t(gridDim.x);
  for (int64_t i = int64_t(blockIdx.x) * int64_t(blockDim.x) + int64_t(threadIdx.x); i < numel;
       i += step) {
    int64_t d_off;
    int64_t s_off;
    strided_offsets(i, p, &d_off, &s_off);
    fn(d_off, s_off);
  }
}
#endif

// Queues dst[i] = src[i] for numel elements of elem_size bytes (1, 2, 4, 8 or 16;
// both pointers and all strides must be multiples of it) on `stream` and returns
// cudaGetLastError() after the launch (cudaErrorInvalidValue for a bad elem_size).
// The caller makes the stream's device current.
cudaError_t launch_strided_copy(void* dst, const void* src, int64_t numel, size_t elem_size,
                                const StridedCopyParams& params, cudaStream_t stream);

// Queues dst[i] = the elem_size-byte pattern `bits` (1, 2, 4 or 8 bytes) for numel
// elements, dst walked by params.dst_strides; returns cudaGetLastError().
cudaError_t launch_strided_fill(void* dst, uint64_t bits, int64_t numel, size_t elem_size,
                                const StridedCopyParams& params, cudaStream_t stream);

}  // namespace lucid::cuda
