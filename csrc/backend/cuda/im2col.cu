// im2col, col2im and the bias add on the GPU (im2col.h). One thread per element
// written, each a gather:
//   im2col: a column entry (image, channel, tap, window) reads its one input pixel,
//           or the padding's zero;
//   col2im: an image pixel sums the column entries of every (tap, window) that reads
//           it, taps in order, so no two threads write one address: no atomics, and
//           the sum is the CPU's (backend/cpu/conv_kernels.cpp adds taps in the same
//           order into a zeroed plane), bit for bit.
// Indices are 32-bit when both tensors have fewer than 2^31 elements, else 64-bit.
#include <type_traits>

#include "backend/cuda/elementwise_launch.cuh"
#include "backend/cuda/im2col.h"
#include "core/half.h"

namespace lucid::cuda {

namespace {

// ConvGeometry as a plain struct for the kernels' arguments.
struct Geo {
  int64_t big[3], small[3], k[3], stride[3], pad[3], dil[3];
};

Geo geo_of(const ops::ConvGeometry& g) {
  Geo r{};
  for (int d = 0; d < 3; ++d) {
    r.big[d] = g.big[d];
    r.small[d] = g.small[d];
    r.k[d] = g.k[d];
    r.stride[d] = g.stride[d];
    r.pad[d] = g.pad[d];
    r.dil[d] = g.dil[d];
  }
  return r;
}

template <typename T, typename I>
__global__ void __launch_bounds__(kEwThreads) im2col_kernel(const T* __restrict__ x, T* __restrict__ col, I total,
                                                            Geo g) {
  const I L = I(g.small[0] * g.small[1] * g.small[2]), K = I(g.k[0] * g.k[1] * g.k[2]);
  const I B = I(g.big[0] * g.big[1] * g.big[2]);
  const I step = I(gridDim.x) * kEwThreads;
  for (I e = I(blockIdx.x) * kEwThreads + threadIdx.x; e < total; e += step) {
    const I l = e % L, r = e / L;
    const I kk = r % K, plane = r / K;
    const I o2 = l % I(g.small[2]), o1 = (l / I(g.small[2])) % I(g.small[1]), o0 = l / I(g.small[2] * g.small[1]);
    const I k2 = kk % I(g.k[2]), k1 = (kk / I(g.k[2])) % I(g.k[1]), k0 = kk / I(g.k[2] * g.k[1]);
    const I i0 = o0 * I(g.stride[0]) - I(g.pad[0]) + k0 * I(g.dil[0]);
    const I i1 = o1 * I(g.stride[1]) - I(g.pad[1]) + k1 * I(g.dil[1]);
    const I i2 = o2 * I(g.stride[2]) - I(g.pad[2]) + k2 * I(g.dil[2]);
    const bool inside = i0 >= 0 && i0 < I(g.big[0]) && i1 >= 0 && i1 < I(g.big[1]) && i2 >= 0 && i2 < I(g.big[2]);
    col[e] = inside ? x[plane * B + (i0 * I(g.big[1]) + i1) * I(g.big[2]) + i2] : T(0);
  }
}

// The window index o along one dim whose tap k reads position i, or -1.
template <typename I>
__device__ __forceinline__ I window_of(I i, I k, const Geo& g, int d) {
  const I t = i + I(g.pad[d]) - k * I(g.dil[d]);
  if (t < 0 || t % I(g.stride[d]) != 0) return -1;
  const I o = t / I(g.stride[d]);
  return o < I(g.small[d]) ? o : -1;
}

template <typename T, typename I>
__global__ void __launch_bounds__(kEwThreads) col2im_kernel(const T* __restrict__ col, T* __restrict__ img, I total,
                                                            Geo g) {
  const I L = I(g.small[0] * g.small[1] * g.small[2]), K = I(g.k[0] * g.k[1] * g.k[2]);
  const I step = I(gridDim.x) * kEwThreads;
  for (I e = I(blockIdx.x) * kEwThreads + threadIdx.x; e < total; e += step) {
    const I i2 = e % I(g.big[2]), i1 = (e / I(g.big[2])) % I(g.big[1]);
    const I rest = e / I(g.big[2] * g.big[1]);
    const I i0 = rest % I(g.big[0]), plane = rest / I(g.big[0]);
    const T* src = col + plane * K * L;
    T sum = T(0);
    for (I k0 = 0; k0 < I(g.k[0]); ++k0) {
      const I o0 = window_of(i0, k0, g, 0);
      if (o0 < 0) continue;
      for (I k1 = 0; k1 < I(g.k[1]); ++k1) {
        const I o1 = window_of(i1, k1, g, 1);
        if (o1 < 0) continue;
        for (I k2 = 0; k2 < I(g.k[2]); ++k2) {
          const I o2 = window_of(i2, k2, g, 2);
          if (o2 < 0) continue;
          const I kk = (k0 * I(g.k[1]) + k1) * I(g.k[2]) + k2;
          sum += src[kk * L + (o0 * I(g.small[1]) + o1) * I(g.small[2]) + o2];
        }
      }
    }
    img[e] = sum;
  }
}

template <typename T, typename I>
__global__ void __launch_bounds__(kEwThreads) add_bias_kernel(T* out, const T* __restrict__ bias, I total, I c,
                                                              I spatial) {
  const I step = I(gridDim.x) * kEwThreads;
  // (16-bit: the sum in float32, rounded once, as the CPU's add rounds it)
  using Acc = std::conditional_t<std::is_same_v<T, double>, double, float>;
  for (I e = I(blockIdx.x) * kEwThreads + threadIdx.x; e < total; e += step)
    out[e] = T(Acc(out[e]) + Acc(bias[(e / spatial) % c]));
}

bool fits_32(int64_t a, int64_t b) { return a < (int64_t(1) << 31) && b < (int64_t(1) << 31); }

// Runs fn(T{}, I{}) for the element type of `dtype` and the index type of the sizes.
template <typename Fn>
void dispatch(Dtype dtype, bool small_index, Fn&& fn) {
  if (dtype == Dtype::F64) {
    if (small_index) fn(double{}, int32_t{});
    else fn(double{}, int64_t{});
  } else {
    if (small_index) fn(float{}, int32_t{});
    else fn(float{}, int64_t{});
  }
}

}  // namespace

void launch_im2col(const void* x, void* col, Dtype dtype, int64_t n, int64_t c, const ops::ConvGeometry& g,
                   int device) {
  const int64_t total = n * c * g.kernel_numel() * g.small_numel();
  if (total == 0) return;
  DeviceGuard guard(device);
  cudaStream_t s = stream(device);
  dispatch(dtype, fits_32(total, n * c * g.big_numel()), [&](auto t, auto i) {
    using T = decltype(t);
    using I = decltype(i);
    im2col_kernel<T, I><<<ew_grid(total), kEwThreads, 0, s>>>(static_cast<const T*>(x), static_cast<T*>(col),
                                                              I(total), geo_of(g));
  });
  LUCID_CUDA_CHECK(cudaGetLastError());
}

void launch_col2im(const void* col, void* img, Dtype dtype, int64_t n, int64_t c, const ops::ConvGeometry& g,
                   int device) {
  const int64_t total = n * c * g.big_numel();
  if (total == 0) return;
  DeviceGuard guard(device);
  cudaStream_t s = stream(device);
  dispatch(dtype, fits_32(total, n * c * g.kernel_numel() * g.small_numel()), [&](auto t, auto i) {
    using T = decltype(t);
    using I = decltype(i);
    col2im_kernel<T, I><<<ew_grid(total), kEwThreads, 0, s>>>(static_cast<const T*>(col), static_cast<T*>(img),
                                                              I(total), geo_of(g));
  });
  LUCID_CUDA_CHECK(cudaGetLastError());
}

void launch_add_bias(void* out, const void* bias, Dtype dtype, int64_t n, int64_t c, int64_t spatial, int device) {
  const int64_t total = n * c * spatial;
  if (total == 0) return;
  DeviceGuard guard(device);
  cudaStream_t s = stream(device);
  // (the bias of 16-bit convolutions too, which cuDNN runs natively; im2col and
  // col2im only see float32 and float64: conv.cpp's GEMM route computes in float32)
  auto types = [&](auto fn) {
    if (dtype == Dtype::F16) fn(Half{});
    else if (dtype == Dtype::BF16) fn(BFloat16{});
    else if (dtype == Dtype::F64) fn(double{});
    else fn(float{});
  };
  types([&](auto t) {
    using T = decltype(t);
    auto run = [&](auto i) {
      using I = decltype(i);
      add_bias_kernel<T, I><<<ew_grid(total), kEwThreads, 0, s>>>(static_cast<T*>(out),
                                                                  static_cast<const T*>(bias), I(total), I(c),
                                                                  I(spatial));
    };
    if (fits_32(total, 0)) run(int32_t{});
    else run(int64_t{});
  });
  LUCID_CUDA_CHECK(cudaGetLastError());
}

}  // namespace lucid::cuda
