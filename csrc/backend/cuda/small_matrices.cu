// Kernels for batches of small matrices (small_matrices.h), and Cholesky's finishing pass.
//
// Householder QR runs one warp per matrix, the matrix in shared memory, lane t owning
// row t: a column's norm and a reflector's dot products are warp sums, its updates one
// row per lane. This is LAPACK's unblocked algorithm (geqrf itself calls it below 32
// columns), so factors and signs are LAPACK's and cuSOLVER's, values to rounding; a
// batch of 4,096 8 x 8 matrices is one launch instead of 8,192 cuSOLVER calls.
#include <algorithm>

#include "backend/cuda/check.h"
#include "backend/cuda/device_guard.h"
#include "backend/cuda/small_matrices.h"
#include "backend/cuda/stream.h"
#include "core/error.h"

namespace lucid::cuda {

namespace {

constexpr unsigned kFullMask = 0xffffffffu;

__global__ void pointer_kernel(void** out, char* base, int64_t step, int64_t count) {
  for (int64_t b = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; b < count; b += int64_t(gridDim.x) * blockDim.x)
    out[b] = base + b * step;
}

template <class T>
__device__ T warp_sum(T v) {
  for (int offset = 16; offset > 0; offset >>= 1) v += __shfl_xor_sync(kFullMask, v, offset);
  return v;
}

// The matrix of this block's warp in shared memory: column c of row t at s[c][t].
template <class T>
struct SharedMatrix {
  T s[kSmallOrder][kSmallOrder + 1];  // (+1: a row's lanes fall in different banks)
};

template <class T>
__device__ void load(SharedMatrix<T>& sm, const T* a, int m, int n) {
  const int t = threadIdx.x;
  for (int c = 0; c < n; ++c) sm.s[c][t] = t < m ? a[t + c * m] : T(0);
  __syncwarp();
}

template <class T>
__device__ void store(const SharedMatrix<T>& sm, T* a, int m, int n) {
  const int t = threadIdx.x;
  if (t < m)
    for (int c = 0; c < n; ++c) a[t + c * m] = sm.s[c][t];
}

// Applies H = I - tau v v^T (v = column `j` of sm below row j, with v_j = 1) to columns
// first..n-1 of sm, rows j..m-1 (LAPACK's dlarf from the left).
template <class T>
__device__ void reflect(SharedMatrix<T>& sm, int j, T tau, int first, int m, int n) {
  const int t = threadIdx.x;
  const T v = t == j ? T(1) : (t > j && t < m ? sm.s[j][t] : T(0));
  for (int c = first; c < n; ++c) {
    const T w = warp_sum(t >= j && t < m ? v * sm.s[c][t] : T(0));
    __syncwarp();
    if (t >= j && t < m) sm.s[c][t] -= tau * w * v;
    __syncwarp();
  }
}

template <class T>
__global__ void geqr2_kernel(T* a, T* tau, int m, int n, int64_t count) {
  __shared__ SharedMatrix<T> sm;
  const int64_t b = blockIdx.x;
  const int t = threadIdx.x, k = min(m, n);
  T* mat = a + b * m * n;
  load(sm, mat, m, n);
  for (int j = 0; j < k; ++j) {
    // dlarfg: the reflector taking column j's rows j.. to (beta, 0, ..., 0)
    const T x = t > j && t < m ? sm.s[j][t] : T(0);
    const T xnorm2 = warp_sum(x * x);
    const T alpha = sm.s[j][j];
    T h = 0, beta = alpha;
    if (xnorm2 != T(0)) {
      beta = -copysign(sqrt(alpha * alpha + xnorm2), alpha);
      h = (beta - alpha) / beta;
    }
    __syncwarp();
    if (xnorm2 != T(0) && t > j && t < m) sm.s[j][t] = x / (alpha - beta);
    __syncwarp();
    reflect(sm, j, h, j + 1, m, n);
    if (t == j) sm.s[j][j] = beta;
    if (t == 0) tau[b * k + j] = h;
    __syncwarp();
  }
  store(sm, mat, m, n);
}

template <class T>
__global__ void org2r_kernel(T* a, const T* tau, int m, int n, int k, int64_t count) {
  __shared__ SharedMatrix<T> sm;
  const int64_t b = blockIdx.x;
  const int t = threadIdx.x;
  T* mat = a + b * m * n;
  load(sm, mat, m, n);
  for (int c = k; c < n; ++c) sm.s[c][t] = t == c ? T(1) : T(0);  // columns past k: the identity's
  __syncwarp();
  for (int i = k - 1; i >= 0; --i) {
    const T h = tau[b * k + i];
    if (i < n - 1) reflect(sm, i, h, i + 1, m, n);
    if (t > i && t < m) sm.s[i][t] *= -h;
    if (t == i) sm.s[i][i] = T(1) - h;
    if (t < i) sm.s[i][t] = T(0);
    __syncwarp();
  }
  store(sm, mat, m, n);
}

// LAPACK's potf2 (lower), one warp per matrix, lane t owning row t: column j is scaled by
// its pivot's root, then the trailing lower triangle loses its outer product, so each
// entry's updates come in LAPACK's order. Stops at the first pivot that is not positive
// (NaN included), as LAPACK's potf2, info = its order; the strict upper triangle zeroed.
template <class T>
__global__ void potf2_kernel(T* a, int* info, int n, int64_t count) {
  __shared__ SharedMatrix<T> sm;
  const int64_t b = blockIdx.x;
  const int t = threadIdx.x;
  T* mat = a + b * n * n;
  load(sm, mat, n, n);
  int failed = 0;
  for (int j = 0; j < n; ++j) {
    const T ajj = sm.s[j][j];
    if (!(ajj > T(0))) {  // (the same shared value in every lane: the warp leaves together)
      failed = j + 1;
      break;
    }
    const T root = sqrt(ajj);
    __syncwarp();
    if (t == j) sm.s[j][j] = root;
    if (t > j && t < n) sm.s[j][t] /= root;
    __syncwarp();
    if (t > j && t < n)
      for (int c = j + 1; c <= t; ++c) sm.s[c][t] -= sm.s[j][t] * sm.s[j][c];
    __syncwarp();
  }
  for (int c = t + 1; c < n; ++c) sm.s[c][t] = T(0);
  __syncwarp();
  store(sm, mat, n, n);
  if (t == 0) info[b] = failed;
}

// A pivot's NaN test, for real matrices and complex ones (float2, double2: the layout of
// complex64 and complex128; a complex pivot is real).
__device__ bool pivot_is_nan(float v) { return isnan(v); }
__device__ bool pivot_is_nan(double v) { return isnan(v); }
__device__ bool pivot_is_nan(float2 v) { return isnan(v.x); }
__device__ bool pivot_is_nan(double2 v) { return isnan(v.x); }

// The Cholesky primitive's contract past cuSOLVER's potrf: the strict upper triangle
// zeroed (all blocks, over the matrix's elements), and where potrf reported success,
// info naming the first NaN pivot (reference LAPACK stops there; cuSOLVER carries on:
// every pivot after a NaN one is NaN too, so a NaN never follows a reported failure).
// Blocks along y take matrices; the diagonal is scanned by each matrix's x = 0 block.
template <class T>
__global__ void finish_cholesky_kernel(T* a, int* info, int n, int64_t count) {
  __shared__ int first_nan;
  const int64_t size = int64_t(n) * n;
  for (int64_t b = blockIdx.y; b < count; b += gridDim.y) {
    T* mat = a + b * size;
    if (blockIdx.x == 0) {  // (uniform in the block: its barriers are reached by all)
      if (threadIdx.x == 0) first_nan = n + 1;
      __syncthreads();
      for (int j = threadIdx.x; j < n; j += blockDim.x)
        if (pivot_is_nan(mat[j + int64_t(j) * n])) atomicMin(&first_nan, j + 1);
      __syncthreads();
      if (threadIdx.x == 0 && info[b] == 0 && first_nan <= n) info[b] = first_nan;
      __syncthreads();
    }
    for (int64_t e = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; e < size; e += int64_t(gridDim.x) * blockDim.x)
      if (e % n < e / n) mat[e] = T{};  // (row < column)
  }
}

void check_small(Dtype dtype, int m, int n, int64_t count) {
  LUCID_CHECK(dtype == Dtype::F32 || dtype == Dtype::F64, RuntimeError, "internal: small-matrix QR of ",
              dtype_name(dtype));
  LUCID_CHECK(m >= 1 && n >= 1 && m <= kSmallOrder && n <= kSmallOrder && count < (int64_t(1) << 31),
              RuntimeError, "internal: batched small-matrix QR of ", count, " [", m, ", ", n, "] matrices");
}

}  // namespace

void fill_pointer_array(void** out, void* base, int64_t step_bytes, int64_t count, int device) {
  if (count == 0) return;
  DeviceGuard guard(device);
  const unsigned blocks = unsigned(std::min<int64_t>((count + 255) / 256, 4096));
  pointer_kernel<<<blocks, 256, 0, stream(device)>>>(out, static_cast<char*>(base), step_bytes, count);
  LUCID_CUDA_CHECK(cudaGetLastError());
}

void batched_potf2(Dtype dtype, void* a, int* info, int n, int64_t count, int device) {
  check_small(dtype, n, n, count);
  if (count == 0) return;
  DeviceGuard guard(device);
  visit_float32_or_64(dtype, [&]<class T>(T) {
    potf2_kernel<T><<<unsigned(count), kSmallOrder, 0, stream(device)>>>(static_cast<T*>(a), info, n, count);
  });
  LUCID_CUDA_CHECK(cudaGetLastError());
}

void finish_cholesky(Dtype dtype, void* a, int* info, int n, int64_t count, int device) {
  if (count == 0 || n == 0) return;
  DeviceGuard guard(device);
  const int64_t size = int64_t(n) * n;
  const dim3 grid(unsigned(std::min<int64_t>((size + 1023) / 1024, 1024)),
                  unsigned(std::min<int64_t>(count, 65535)));
  auto launch = [&]<class T>() {
    finish_cholesky_kernel<T><<<grid, 256, 0, stream(device)>>>(static_cast<T*>(a), info, n, count);
  };
  switch (dtype) {
    case Dtype::F32: launch.template operator()<float>(); break;
    case Dtype::F64: launch.template operator()<double>(); break;
    case Dtype::C64: launch.template operator()<float2>(); break;
    case Dtype::C128: launch.template operator()<double2>(); break;
    default: fail<RuntimeError>("internal: a Cholesky factor of ", dtype_name(dtype));
  }
  LUCID_CUDA_CHECK(cudaGetLastError());
}

void batched_geqr2(Dtype dtype, void* a, void* tau, int m, int n, int64_t count, int device) {
  check_small(dtype, m, n, count);
  if (count == 0) return;
  DeviceGuard guard(device);
  visit_float32_or_64(dtype, [&]<class T>(T) {
    geqr2_kernel<T><<<unsigned(count), kSmallOrder, 0, stream(device)>>>(static_cast<T*>(a), static_cast<T*>(tau),
                                                                         m, n, count);
  });
  LUCID_CUDA_CHECK(cudaGetLastError());
}

void batched_org2r(Dtype dtype, void* a, const void* tau, int m, int n, int k, int64_t count, int device) {
  check_small(dtype, m, n, count);
  LUCID_CHECK(k >= 0 && k <= n && n <= m, RuntimeError, "internal: org2r of k = ", k, " for [", m, ", ", n, "]");
  if (count == 0) return;
  DeviceGuard guard(device);
  visit_float32_or_64(dtype, [&]<class T>(T) {
    org2r_kernel<T><<<unsigned(count), kSmallOrder, 0, stream(device)>>>(static_cast<T*>(a),
                                                                         static_cast<const T*>(tau), m, n, k, count);
  });
  LUCID_CUDA_CHECK(cudaGetLastError());
}

}  // namespace lucid::cuda
