// LAPACK's sytf2 and hetf2 (lower) for the GPU: A = P L D L^T P^T of symmetric matrices
// (real or complex) or A = P L D L^H P^T of Hermitian ones, with Bunch-Kaufman pivoting,
// one block per matrix. cuSOLVER's sytrf is the symmetric form only, and it costs about
// 0.2 ms a call whatever the size (a batch of 4096 8 x 8 matrices took 0.94 s); torch
// reaches a Hermitian factorization through MAGMA.
//
// Each step is LAPACK's: the pivot search is a block reduction (i?amax's first largest
// |re| + |im|), the interchange and the rank-1 or rank-2 update of the trailing lower
// triangle are spread over the block's threads, so the pivots are LAPACK's and the
// arithmetic its, in its order. LAPACK's sytrf / hetrf proper are blocked (la?sf over
// panels of 64 columns) and make the same pivot choices in exact arithmetic. One block
// per matrix keeps a large matrix on one SM (about n^3/3 updates through its L1): the
// caller gives one or two large matrices to cuSOLVER instead.
#include <algorithm>
#include <climits>

#include "backend/cuda/check.h"
#include "backend/cuda/device_guard.h"
#include "backend/cuda/ldl.h"
#include "backend/cuda/ldl.cuh"
#include "backend/cuda/stream.h"

namespace lucid::cuda {

namespace {

constexpr int kMaxThreads = 512;
constexpr int kMaxBlocks = 4096;  // (the workspace is 2 n elements per block)

using ldl_detail::conj_if;
using ldl_detail::kComplex;

template <class T>
struct RealOf {
  using type = T;
};
template <class R>
struct RealOf<::cuda::std::complex<R>> {
  using type = R;
};

// LAPACK's cabs1 (|re| + |im|), the magnitude its pivot search compares; |x| for a real x.
template <class T>
__device__ auto magnitude(T z) {
  if constexpr (kComplex<T>) return fabs(z.real()) + fabs(z.imag());
  else return fabs(z);
}

// A Hermitian matrix's diagonal entry with its (rounding's) imaginary part dropped, as hetf2 keeps it.
template <bool kHermitian, class T>
__device__ T real_if(T z) {
  if constexpr (kHermitian) return T(z.real(), 0);
  else return z;
}

// The block's largest v, and the smallest i holding it (i?amax's first); every thread
// gets both. A NaN counts as the largest, so a column of NaN still yields a valid row.
template <class R>
__device__ void block_argmax(R& v, int& i, R* values, int* rows) {
  for (int offset = 16; offset > 0; offset >>= 1) {
    const R other_v = __shfl_xor_sync(0xffffffffu, v, offset);
    const int other_i = __shfl_xor_sync(0xffffffffu, i, offset);
    if (other_v > v || (other_v == v && other_i < i)) v = other_v, i = other_i;
  }
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  __syncthreads();  // (the slots may still be read from the previous reduction)
  if (lane == 0) values[warp] = v, rows[warp] = i;
  __syncthreads();
  v = values[0], i = rows[0];
  for (int w = 1; w < int(blockDim.x / 32); ++w)
    if (values[w] > v || (values[w] == v && rows[w] < i)) v = values[w], i = rows[w];
}

template <class R>
__device__ R block_max(R v, R* values) {
  for (int offset = 16; offset > 0; offset >>= 1) v = fmax(v, __shfl_xor_sync(0xffffffffu, v, offset));
  __syncthreads();
  if (threadIdx.x % 32 == 0) values[threadIdx.x / 32] = v;
  __syncthreads();
  v = values[0];
  for (int w = 1; w < int(blockDim.x / 32); ++w) v = fmax(v, values[w]);
  return v;
}

template <class T>
__device__ void swap(T& x, T& y) {
  const T t = x;
  x = y;
  y = t;
}

// kHermitian: hetf2 (complex T only); otherwise sytf2 (dsytf2 / zsytf2).
template <class T, bool kHermitian>
__global__ void ldl_lower_kernel(T* matrices, int* pivots, int* infos, T* work, int n, int64_t count) {
  using R = typename RealOf<T>::type;
  __shared__ R values[kMaxThreads / 32];
  __shared__ int rows[kMaxThreads / 32];
  const R alpha = (1 + sqrt(R(17))) / 8;  // Bunch-Kaufman's growth bound
  const int tid = threadIdx.x, threads = blockDim.x;
  T* w = work + int64_t(blockIdx.x) * 2 * n;  // a 2 x 2 step's new columns k and k + 1
  auto diagonal_magnitude = [](T z) {
    if constexpr (kHermitian) return fabs(z.real());
    else return magnitude(z);
  };
  for (int64_t b = blockIdx.x; b < count; b += gridDim.x) {
    T* a = matrices + b * int64_t(n) * n;
    auto A = [&](int i, int j) -> T& { return a[i + int64_t(j) * n]; };
    int info = 0;
    for (int k = 0; k < n;) {
      // Every thread makes the same choices from the same reads (the reductions hand
      // every thread one result; the last step's writes were fenced by a barrier).
      int kstep = 1, kp = k;
      const R absakk = diagonal_magnitude(A(k, k));
      R colmax = 0;
      int imax = k;
      if (k < n - 1) {
        R v = -1;
        int row = INT_MAX;
        for (int i = k + 1 + tid; i < n; i += threads) {
          const R c = magnitude(A(i, k)), key = isnan(c) ? R(INFINITY) : c;
          if (key > v) v = key, row = i;
        }
        block_argmax(v, row, values, rows);
        imax = row;
        colmax = magnitude(A(imax, k));
      }
      const bool zero_column = fmax(absakk, colmax) == 0 || isnan(absakk);
      if (!zero_column && !(absakk >= alpha * colmax)) {
        // The largest off-diagonal magnitude in row (and column) imax of the trailing matrix.
        R v = 0;
        for (int j = k + tid; j < imax; j += threads) v = fmax(v, magnitude(A(imax, j)));
        for (int i = imax + 1 + tid; i < n; i += threads) v = fmax(v, magnitude(A(i, imax)));
        const R rowmax = block_max(v, values);
        if (absakk >= alpha * colmax * (colmax / rowmax)) {
          kp = k;
        } else if (diagonal_magnitude(A(imax, imax)) >= alpha * rowmax) {
          kp = imax;
        } else {
          kp = imax;
          kstep = 2;
        }
      }
      __syncthreads();  // (every thread has read what the choices needed)
      if (zero_column) {
        if (info == 0) info = k + 1;
        if (tid == 0) A(k, k) = real_if<kHermitian>(A(k, k));
      } else {
        // Interchange rows and columns kk and kp of the trailing matrix (its lower
        // triangle: the pieces below are disjoint, so one pass).
        const int kk = k + kstep - 1;
        if (kp != kk) {
          for (int i = kp + 1 + tid; i < n; i += threads) swap(A(i, kk), A(i, kp));
          for (int j = kk + 1 + tid; j < kp; j += threads) {
            const T t = conj_if<kHermitian>(A(j, kk));
            A(j, kk) = conj_if<kHermitian>(A(kp, j));
            A(kp, j) = t;
          }
          if (tid == 0) {
            A(kp, kk) = conj_if<kHermitian>(A(kp, kk));
            const T t = real_if<kHermitian>(A(kk, kk));
            A(kk, kk) = real_if<kHermitian>(A(kp, kp));
            A(kp, kp) = t;
            if (kstep == 2) {
              A(k, k) = real_if<kHermitian>(A(k, k));
              swap(A(k + 1, k), A(kp, k));
            }
          }
        } else if (tid == 0) {
          A(k, k) = real_if<kHermitian>(A(k, k));
          if (kstep == 2) A(k + 1, k + 1) = real_if<kHermitian>(A(k + 1, k + 1));
        }
        __syncthreads();
        if (kstep == 1 && k < n - 1) {
          // A := A - W D(k)^-1 W^T (W^H) over the trailing lower triangle (?syr / zher),
          // then L(k) = W / D(k).
          T r1;
          if constexpr (kHermitian) r1 = T(1 / A(k, k).real());
          else r1 = T(1) / A(k, k);
          const int64_t m = n - k - 1;
          for (int64_t e = tid; e < m * m; e += threads) {
            const int i = k + 1 + int(e % m), j = k + 1 + int(e / m);
            if (i < j) continue;
            const T update = A(i, j) + A(i, k) * (-r1 * conj_if<kHermitian>(A(j, k)));
            A(i, j) = i == j ? real_if<kHermitian>(update) : update;
          }
          __syncthreads();
          for (int i = k + 1 + tid; i < n; i += threads) A(i, k) *= r1;
        } else if (kstep == 2 && k < n - 2) {
          // A := A - (W(k) W(k+1)) D(k)^-1 (W(k) W(k+1))^T (^H), with L's two columns
          // first computed into w (the update reads the old ones); LAPACK's two forms.
          if constexpr (kHermitian) {
            R d = hypot(A(k + 1, k).real(), A(k + 1, k).imag());
            const R d11 = A(k + 1, k + 1).real() / d, d22 = A(k, k).real() / d;
            const R tt = 1 / (d11 * d22 - 1);
            const T d21 = A(k + 1, k) / d;
            d = tt / d;
            for (int j = k + 2 + tid; j < n; j += threads) {
              w[j] = d * (d11 * A(j, k) - d21 * A(j, k + 1));
              w[n + j] = d * (d22 * A(j, k + 1) - conj(d21) * A(j, k));
            }
          } else {
            T d21 = A(k + 1, k);
            const T d11 = A(k + 1, k + 1) / d21, d22 = A(k, k) / d21;
            const T t = T(1) / (d11 * d22 - T(1));
            d21 = t / d21;
            for (int j = k + 2 + tid; j < n; j += threads) {
              w[j] = d21 * (d11 * A(j, k) - A(j, k + 1));
              w[n + j] = d21 * (d22 * A(j, k + 1) - A(j, k));
            }
          }
          __syncthreads();
          const int64_t m = n - k - 2;
          for (int64_t e = tid; e < m * m; e += threads) {
            const int i = k + 2 + int(e % m), j = k + 2 + int(e / m);
            if (i < j) continue;
            const T update =
                A(i, j) - A(i, k) * conj_if<kHermitian>(w[j]) - A(i, k + 1) * conj_if<kHermitian>(w[n + j]);
            A(i, j) = i == j ? real_if<kHermitian>(update) : update;
          }
          __syncthreads();
          for (int j = k + 2 + tid; j < n; j += threads) A(j, k) = w[j], A(j, k + 1) = w[n + j];
        }
      }
      if (tid == 0) {
        int* p = pivots + b * n;
        if (kstep == 1) {
          p[k] = kp + 1;
        } else {
          p[k] = -(kp + 1);
          p[k + 1] = -(kp + 1);
        }
      }
      __syncthreads();
      k += kstep;
    }
    if (tid == 0) infos[b] = info;
  }
}

// LAPACK's info from a finished factorization (cuSOLVER's sytrf reports no zero column
// of a complex matrix, and another index for a real one): the first 1 x 1 block of D
// that is exactly zero (or NaN, which LAPACK also stops at), 1-based. One thread per matrix.
template <class T>
__global__ void ldl_info_kernel(const T* matrices, const int* pivots, int* infos, int n, int64_t count) {
  for (int64_t b = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; b < count; b += int64_t(gridDim.x) * blockDim.x) {
    const T* a = matrices + b * int64_t(n) * n;
    const int* p = pivots + b * n;
    int info = 0;
    for (int k = 0; k < n && info == 0; k += p[k] < 0 ? 2 : 1) {
      const auto d = magnitude(a[k + int64_t(k) * n]);
      if (p[k] > 0 && (d == 0 || isnan(d))) info = k + 1;
    }
    infos[b] = info;
  }
}

int block_size(int n) { return n <= 8 ? 32 : n <= 24 ? 128 : n <= 64 ? 256 : kMaxThreads; }

}  // namespace

bool ldl_factor_by_blocks(int n, int64_t count) { return count > 2 || n < 256; }

int64_t ldl_factor_workspace(int n, int64_t count) { return std::min<int64_t>(count, kMaxBlocks) * 2 * n; }

void ldl_factor(Dtype dtype, bool hermitian, void* a, int* pivots, int* info, void* work, int n, int64_t count,
                int device) {
  if (count == 0 || n == 0) return;
  DeviceGuard guard(device);
  const unsigned blocks = unsigned(std::min<int64_t>(count, kMaxBlocks));
  ldl_detail::visit_float_or_complex(dtype, "linalg.ldl_factor", [&]<class T>() {
    auto run = [&]<bool kHermitian>() {
      ldl_lower_kernel<T, kHermitian><<<blocks, block_size(n), 0, stream(device)>>>(
          static_cast<T*>(a), pivots, info, static_cast<T*>(work), n, count);
    };
    if constexpr (kComplex<T>) hermitian ? run.template operator()<true>() : run.template operator()<false>();
    else run.template operator()<false>();  // (a real Hermitian matrix is a symmetric one)
  });
  LUCID_CUDA_CHECK(cudaGetLastError());
}

void ldl_factor_info(Dtype dtype, const void* a, const int* pivots, int* info, int n, int64_t count, int device) {
  if (count == 0 || n == 0) return;
  DeviceGuard guard(device);
  const unsigned blocks = unsigned(std::min<int64_t>((count + 127) / 128, 65535));
  ldl_detail::visit_float_or_complex(dtype, "linalg.ldl_factor", [&]<class T>() {
    ldl_info_kernel<T><<<blocks, 128, 0, stream(device)>>>(static_cast<const T*>(a), pivots, info, n, count);
  });
  LUCID_CUDA_CHECK(cudaGetLastError());
}

}  // namespace lucid::cuda
