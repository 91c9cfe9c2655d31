// LAPACK's sytrs and hetrs (lower) for the GPU: one block per right-hand side column of
// one matrix, walking the pivots in order (each step's update is parallel over the rows
// below it, the 2 x 2 blocks' solves are one thread's), so the arithmetic is LAPACK's,
// in its order but for the backward pass's dot products, which are block sums. One
// kernel serves real, complex symmetric (L D L^T) and Hermitian (L D L^H) factors: they
// differ only in where L's entries are conjugated and in D's diagonal being real.
//
// Why not cuSOLVER: its Xsytrs poisoned a context twice in testing when run on the
// stream without waiting; this kernel reads only what it is given. The pivots come from
// the user (linalg.ldl_solve takes any tensor), so the forward walk checks each (1 to n,
// or a pair of equal negatives for a 2 x 2 block) before any step: a bad one is reported
// (device_error.h) and that matrix's columns are left as they were.
#include <algorithm>

#include "backend/cuda/check.h"
#include "backend/cuda/device_error.h"
#include "backend/cuda/device_guard.h"
#include "backend/cuda/ldl.h"
#include "backend/cuda/ldl.cuh"
#include "backend/cuda/stream.h"
#include "ops/prims/decompose.h"

namespace lucid::cuda {

namespace {

using ldl_detail::conj_if;
using ldl_detail::kComplex;

constexpr int kThreads = 256;

template <class T>
__device__ T shfl_xor(T v, int offset) {
  if constexpr (kComplex<T>)
    return T(__shfl_xor_sync(0xffffffffu, v.real(), offset), __shfl_xor_sync(0xffffffffu, v.imag(), offset));
  else
    return __shfl_xor_sync(0xffffffffu, v, offset);
}

// The sum over the block of each thread's `v` (every thread gets it).
template <class T>
__device__ T block_sum(T v, T* scratch) {
  for (int offset = 16; offset > 0; offset >>= 1) v += shfl_xor(v, offset);
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  __syncthreads();  // (scratch may still be read from the previous sum)
  if (lane == 0) scratch[warp] = v;
  __syncthreads();
  T total(0);
  for (int w = 0; w < int(blockDim.x / 32); ++w) total += scratch[w];
  return total;
}

template <class T>
__device__ void swap_rows(T* x, int a, int b) {
  if (threadIdx.x == 0 && a != b) {
    const T t = x[a];
    x[a] = x[b];
    x[b] = t;
  }
  __syncthreads();
}

// Whether pivots p[0..n) are sytrf's lower form; reports the first bad one.
__device__ bool pivots_valid(const int* p, int n, DeviceErrorSlot* error) {
  const int k = ops::first_bad_ldl_pivot(p, n);
  if (k >= 0 && threadIdx.x == 0) report_device_error(error, DeviceErrorCode::PivotOutOfRange, k, p[k], n);
  return k < 0;
}

// kHermitian: hetrs (D's diagonal real, L's entries conjugated where L^H is applied).
template <class T, bool kHermitian>
__global__ void ldl_solve_lower_kernel(const T* ld, const int* pivots, T* x, int n, int k, int64_t count,
                                   DeviceErrorSlot* error) {
  // (raw bytes: a __shared__ array may not have a constructor, and complex has one)
  __shared__ alignas(T) unsigned char scratch_bytes[kThreads / 32 * sizeof(T)];
  T* scratch = reinterpret_cast<T*>(scratch_bytes);
  const int64_t size = int64_t(n) * n;
  for (int64_t b = blockIdx.y; b < count; b += gridDim.y) {
    const T* a = ld + b * size;
    const int* p = pivots + b * n;
    T* col = x + b * int64_t(n) * k + int64_t(blockIdx.x) * n;
    if (!pivots_valid(p, n, error)) continue;  // (uniform: every thread read the same pivots)
    auto at = [&](int i, int j) { return a[i + int64_t(j) * n]; };
    // L D y = b
    for (int j = 0; j < n;) {
      if (p[j] > 0) {
        swap_rows(col, j, p[j] - 1);
        const T yj = col[j];
        for (int i = j + 1 + threadIdx.x; i < n; i += blockDim.x) col[i] -= at(i, j) * yj;
        __syncthreads();
        if (threadIdx.x == 0) {
          if constexpr (kHermitian) col[j] *= T(1 / at(j, j).real());
          else col[j] *= T(1) / at(j, j);
        }
        __syncthreads();
        j += 1;
      } else {
        swap_rows(col, j + 1, -p[j] - 1);
        const T y0 = col[j], y1 = col[j + 1];
        for (int i = j + 2 + threadIdx.x; i < n; i += blockDim.x) {
          col[i] -= at(i, j) * y0;
          col[i] -= at(i, j + 1) * y1;
        }
        __syncthreads();  // (every thread has read y0 and y1)
        if (threadIdx.x == 0) {
          const T akm1k = at(j + 1, j), akm1 = at(j, j) / conj_if<kHermitian>(akm1k), ak = at(j + 1, j + 1) / akm1k;
          const T denom = akm1 * ak - T(1), bkm1 = y0 / conj_if<kHermitian>(akm1k), bk = y1 / akm1k;
          col[j] = (ak * bkm1 - bk) / denom;
          col[j + 1] = (akm1 * bk - bkm1) / denom;
        }
        __syncthreads();
        j += 2;
      }
    }
    // L^T x = y (L^H for a Hermitian factor)
    for (int j = n - 1; j >= 0;) {
      const bool pair = p[j] < 0;
      T dot(0), dot_prev(0);
      for (int i = j + 1 + threadIdx.x; i < n; i += blockDim.x) {
        dot += col[i] * conj_if<kHermitian>(at(i, j));
        if (pair) dot_prev += col[i] * conj_if<kHermitian>(at(i, j - 1));
      }
      dot = block_sum(dot, scratch);
      if (pair) dot_prev = block_sum(dot_prev, scratch);
      if (threadIdx.x == 0) {
        col[j] -= dot;
        if (pair) col[j - 1] -= dot_prev;
      }
      __syncthreads();
      swap_rows(col, j, (pair ? -p[j] : p[j]) - 1);
      j -= pair ? 2 : 1;
    }
  }
}

}  // namespace

void ldl_solve(Dtype dtype, bool hermitian, const void* ld, const int* pivots, void* x, int n, int k, int64_t count,
               int device) {
  if (count == 0 || n == 0 || k == 0) return;
  DeviceGuard guard(device);
  DeviceErrorSlot* error = device_error_slot(device);
  const dim3 grid(unsigned(k), unsigned(std::min<int64_t>(count, 65535)));
  ldl_detail::visit_float_or_complex(dtype, "linalg.ldl_solve", [&]<class T>() {
    auto run = [&]<bool kHermitian>() {
      ldl_solve_lower_kernel<T, kHermitian><<<grid, kThreads, 0, stream(device)>>>(
          static_cast<const T*>(ld), pivots, static_cast<T*>(x), n, k, count, error);
    };
    if constexpr (kComplex<T>) hermitian ? run.template operator()<true>() : run.template operator()<false>();
    else run.template operator()<false>();  // (a real Hermitian factor is a symmetric one)
  });
  LUCID_CUDA_CHECK(cudaGetLastError());
}

}  // namespace lucid::cuda
