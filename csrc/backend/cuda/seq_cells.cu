// CUDA kernels of the pointwise LSTM and GRU cells and their backward (seq_kernels.h),
// the same formulas as the CPU's (backend/cpu/seq_kernels.cpp), one thread per
// (batch row, hidden unit): each thread reads its unit's 3 or 4 gates and writes
// them back at the same places, which is what makes the in-place forms the layer
// loops use (act = gates, dc_prev = dc, dh_prev = dh) safe. float32 and float64,
// computed in their own type.
#include <cuda_runtime.h>

#include "backend/cuda/check.h"
#include "backend/cuda/elementwise_launch.cuh"
#include "backend/cuda/seq_kernels.h"

namespace lucid::cuda {

namespace {

template <typename T>
__device__ inline T sigmoid(T x) {
  return T(1) / (T(1) + exp(-x));
}

template <typename T>
__global__ void __launch_bounds__(kEwThreads) lstm_cell_kernel(const T* gates, const T* c_prev, T* h, T* c,
                                                               T* act, int64_t n, int64_t H) {
  const int64_t step = int64_t(gridDim.x) * kEwThreads;
  for (int64_t e = int64_t(blockIdx.x) * kEwThreads + threadIdx.x; e < n; e += step) {
    const int64_t b = e / H, j = e - b * H;
    const T* gr = gates + b * 4 * H;
    const T i = sigmoid(gr[j]), f = sigmoid(gr[H + j]), g = tanh(gr[2 * H + j]), o = sigmoid(gr[3 * H + j]);
    T* ar = act + b * 4 * H;
    ar[j] = i;
    ar[H + j] = f;
    ar[2 * H + j] = g;
    ar[3 * H + j] = o;
    const T cv = f * c_prev[e] + i * g;
    c[e] = cv;
    h[e] = o * tanh(cv);
  }
}

template <typename T>
__global__ void __launch_bounds__(kEwThreads) lstm_cell_backward_kernel(const T* dh, const T* dh_add, const T* dc,
                                                                        const T* act, const T* c, const T* c_prev,
                                                                        T* dgates, T* dc_prev, int64_t n,
                                                                        int64_t H) {
  const int64_t step = int64_t(gridDim.x) * kEwThreads;
  for (int64_t e = int64_t(blockIdx.x) * kEwThreads + threadIdx.x; e < n; e += step) {
    const int64_t b = e / H, j = e - b * H;
    const T* ar = act + b * 4 * H;
    const T i = ar[j], f = ar[H + j], g = ar[2 * H + j], o = ar[3 * H + j];
    const T gh = dh_add ? dh[e] + dh_add[e] : dh[e];
    const T t = tanh(c[e]);
    const T dcv = dc[e] + gh * o * (T(1) - t * t);
    T* d = dgates + b * 4 * H;
    d[j] = dcv * g * i * (T(1) - i);
    d[H + j] = dcv * c_prev[e] * f * (T(1) - f);
    d[2 * H + j] = dcv * i * (T(1) - g * g);
    d[3 * H + j] = gh * t * o * (T(1) - o);
    dc_prev[e] = dcv * f;
  }
}

template <typename T>
__global__ void __launch_bounds__(kEwThreads) gru_cell_kernel(const T* gx, T* gh, const T* b_hh, const T* h_prev,
                                                              T* h, T* act, int64_t n, int64_t H) {
  const int64_t step = int64_t(gridDim.x) * kEwThreads;
  for (int64_t e = int64_t(blockIdx.x) * kEwThreads + threadIdx.x; e < n; e += step) {
    const int64_t b = e / H, j = e - b * H;
    const T* xr = gx + b * 3 * H;
    T* hr = gh + b * 3 * H;
    T hrr = hr[j], hrz = hr[H + j], hrn = hr[2 * H + j];
    if (b_hh) {
      hrr += b_hh[j];
      hrz += b_hh[H + j];
      hrn += b_hh[2 * H + j];
      hr[j] = hrr;
      hr[H + j] = hrz;
      hr[2 * H + j] = hrn;
    }
    const T r = sigmoid(xr[j] + hrr), z = sigmoid(xr[H + j] + hrz);
    const T nv = tanh(xr[2 * H + j] + r * hrn);
    T* ar = act + b * 3 * H;
    ar[j] = r;
    ar[H + j] = z;
    ar[2 * H + j] = nv;
    h[e] = (T(1) - z) * nv + z * h_prev[e];
  }
}

template <typename T>
__global__ void __launch_bounds__(kEwThreads) gru_cell_backward_kernel(const T* dh, const T* dh_add, const T* act,
                                                                       const T* gh, const T* h_prev, T* dgx,
                                                                       T* dgh, T* dh_prev, int64_t n, int64_t H) {
  const int64_t step = int64_t(gridDim.x) * kEwThreads;
  for (int64_t e = int64_t(blockIdx.x) * kEwThreads + threadIdx.x; e < n; e += step) {
    const int64_t b = e / H, j = e - b * H;
    const T* ar = act + b * 3 * H;
    const T r = ar[j], z = ar[H + j], nv = ar[2 * H + j];
    const T g = dh_add ? dh[e] + dh_add[e] : dh[e];
    const T dn = g * (T(1) - z) * (T(1) - nv * nv);
    const T dz = g * (h_prev[e] - nv) * z * (T(1) - z);
    const T dr = dn * gh[b * 3 * H + 2 * H + j] * r * (T(1) - r);
    T* dx = dgx + b * 3 * H;
    T* dhh = dgh + b * 3 * H;
    dx[j] = dr;
    dx[H + j] = dz;
    dx[2 * H + j] = dn;
    dhh[j] = dr;
    dhh[H + j] = dz;
    dhh[2 * H + j] = dn * r;
    dh_prev[e] = g * z;
  }
}

template <typename T>
const T* in(const void* p) {
  return static_cast<const T*>(p);
}
template <typename T>
T* out(void* p) {
  return static_cast<T*>(p);
}

// f(T{}) for the element type.
template <typename F>
void with_type(bool f64, F&& f) {
  if (f64) f(double{});
  else f(float{});
}

}  // namespace

void lstm_cell(bool f64, const void* gates, const void* c_prev, void* h, void* c, void* act, int64_t B, int64_t H,
               cudaStream_t s) {
  const int64_t n = B * H;
  if (n == 0) return;
  with_type(f64, [&](auto z) {
    using T = decltype(z);
    lstm_cell_kernel<T><<<ew_grid(n), kEwThreads, 0, s>>>(in<T>(gates), in<T>(c_prev), out<T>(h), out<T>(c),
                                                          out<T>(act), n, H);
  });
  LUCID_CUDA_CHECK(cudaGetLastError());
}

void lstm_cell_backward(bool f64, const void* dh, const void* dh_add, const void* dc, const void* act,
                        const void* c, const void* c_prev, void* dgates, void* dc_prev, int64_t B, int64_t H,
                        cudaStream_t s) {
  const int64_t n = B * H;
  if (n == 0) return;
  with_type(f64, [&](auto z) {
    using T = decltype(z);
    lstm_cell_backward_kernel<T><<<ew_grid(n), kEwThreads, 0, s>>>(in<T>(dh), in<T>(dh_add), in<T>(dc), in<T>(act),
                                                                   in<T>(c), in<T>(c_prev), out<T>(dgates),
                                                                   out<T>(dc_prev), n, H);
  });
  LUCID_CUDA_CHECK(cudaGetLastError());
}

void gru_cell(bool f64, const void* gx, void* gh, const void* b_hh, const void* h_prev, void* h, void* act,
              int64_t B, int64_t H, cudaStream_t s) {
  const int64_t n = B * H;
  if (n == 0) return;
  with_type(f64, [&](auto z) {
    using T = decltype(z);
    gru_cell_kernel<T><<<ew_grid(n), kEwThreads, 0, s>>>(in<T>(gx), out<T>(gh), in<T>(b_hh), in<T>(h_prev),
                                                         out<T>(h), out<T>(act), n, H);
  });
  LUCID_CUDA_CHECK(cudaGetLastError());
}

void gru_cell_backward(bool f64, const void* dh, const void* dh_add, const void* act, const void* gh,
                       const void* h_prev, void* dgx, void* dgh, void* dh_prev, int64_t B, int64_t H,
                       cudaStream_t s) {
  const int64_t n = B * H;
  if (n == 0) return;
  with_type(f64, [&](auto z) {
    using T = decltype(z);
    gru_cell_backward_kernel<T><<<ew_grid(n), kEwThreads, 0, s>>>(in<T>(dh), in<T>(dh_add), in<T>(act), in<T>(gh),
                                                                  in<T>(h_prev), out<T>(dgx), out<T>(dgh),
                                                                  out<T>(dh_prev), n, H);
  });
  LUCID_CUDA_CHECK(cudaGetLastError());
}

}  // namespace lucid::cuda
