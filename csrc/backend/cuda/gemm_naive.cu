// The plain product kernel: one thread per output element, k multiply-adds in the
// accumulate type (double for floats, int64 for integers, as the CPU's loops). For
// the dtypes cuBLASLt lacks (integers) and for empty sums (k == 0), where it is as fast
// as anything: products of integers are rare, and empty sums only scale out by beta.
#include "backend/cuda/elementwise_launch.cuh"
#include "backend/cuda/gemm.h"

namespace lucid::cuda {

namespace {

template <typename T>
struct GemmAcc {
  using type = std::conditional_t<std::is_integral_v<T>, int64_t, double>;
};
template <>
struct GemmAcc<::cuda::std::complex<float>> {
  using type = ::cuda::std::complex<double>;
};
template <>
struct GemmAcc<::cuda::std::complex<double>> {
  using type = ::cuda::std::complex<double>;
};

template <typename T>
__global__ void naive_gemm_kernel(NaiveGemm g, T* c, const T* a, const T* b, typename GemmAcc<T>::type alpha,
                                  typename GemmAcc<T>::type beta, bool read_c, int64_t total) {
  using Acc = typename GemmAcc<T>::type;
  for (int64_t e = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; e < total; e += int64_t(gridDim.x) * blockDim.x) {
    const int64_t j = e % g.n, i = (e / g.n) % g.m;
    int64_t rest = e / (g.n * g.m), ao = 0, bo = 0, co = 0;
    for (int d = g.ndim - 1; d >= 0; --d) {
      const int64_t idx = rest % g.batch[d];
      rest /= g.batch[d];
      ao += idx * g.a_batch[d];
      bo += idx * g.b_batch[d];
      co += idx * g.c_batch[d];
    }
    Acc sum = Acc(0);
    for (int64_t l = 0; l < g.k; ++l)
      sum += Acc(opmath_t<T>(a[ao + i * g.a_rs + l * g.a_cs])) * Acc(opmath_t<T>(b[bo + l * g.b_rs + j * g.b_cs]));
    Acc r = alpha * sum;
    if (read_c) r += beta * Acc(opmath_t<T>(c[co + i * g.n + j]));
    if constexpr (std::is_same_v<T, bool>) c[co + i * g.n + j] = r != 0;
    else c[co + i * g.n + j] = T(opmath_t<T>(r));
  }
}

template <typename Acc>
Acc scalar_acc(const Scalar& s) {
  if constexpr (std::is_same_v<Acc, ::cuda::std::complex<double>>) {
    return std::visit([](auto v) -> Acc {
      if constexpr (std::is_same_v<decltype(v), std::complex<double>>) return Acc(v.real(), v.imag());
      else return Acc(double(v));
    }, s);
  } else {
    return scalar_as<Acc>(s);
  }
}

}  // namespace

void naive_gemm(const NaiveGemm& g, TensorImpl& out, const TensorImpl& a, const TensorImpl& b, const Scalar& alpha,
                const Scalar& beta) {
  int64_t total = g.m * g.n;
  for (int d = 0; d < g.ndim; ++d) total *= g.batch[d];
  if (total == 0) return;
  const int device = out.device().index;
  DeviceGuard guard(device);
  const bool read_c = std::visit([](auto v) { return v != decltype(v)(0); }, beta);
  visit_dtype(out.dtype(), [&]<typename T>() {
    using D = device_t<T>;
    using Acc = typename GemmAcc<D>::type;
    naive_gemm_kernel<D><<<ew_grid(total), kEwThreads, 0, stream(device)>>>(
        g, reinterpret_cast<D*>(out.data_ptr()), reinterpret_cast<const D*>(a.data_ptr()),
        reinterpret_cast<const D*>(b.data_ptr()), scalar_acc<Acc>(alpha), scalar_acc<Acc>(beta), read_c, total);
  });
  LUCID_CUDA_CHECK(cudaGetLastError());
}

}  // namespace lucid::cuda
