// where(cond, x, y) and |z| on the device. where moves bytes, so one kernel per item
// size serves every dtype (as the CPU's where.cpp).
#include <cstdint>
#include <cstring>

#include "backend/cuda/elementwise_launch.cuh"

namespace lucid::cuda {

namespace {

// The condition is a bool byte, the values items of T's size: where has its own loop.
// Dense operands (`contiguous`) index directly; others walk their byte strides.
template <bool kSmall, typename T>
__global__ void __launch_bounds__(kEwThreads) where_kernel(char* out, const char* cond, EwInputs<T, 2> in,
                                                           EwStrides<3> p, int64_t n, bool contiguous) {
  const int64_t step = int64_t(gridDim.x) * kEwThreads;
  for (int64_t i = int64_t(blockIdx.x) * kEwThreads + threadIdx.x; i < n; i += step) {
    int64_t off[4];
    if (contiguous) {
      off[0] = off[2] = off[3] = i * int64_t(sizeof(T));
      off[1] = i;
    } else {
      ew_offsets<kSmall>(i, p, off);
    }
    // Selects, not an index: a runtime index into the argument arrays would put them in
    // local memory (a load per element from the stack).
    const bool c = *reinterpret_cast<const uint8_t*>(cond + off[1]) != 0;
    const char* src = c ? in.ptr[0] : in.ptr[1];
    const int64_t src_off = c ? off[2] : off[3];
    *reinterpret_cast<T*>(out + off[0]) = src ? *reinterpret_cast<const T*>(src + src_off) : (c ? in.scalar[0] : in.scalar[1]);
  }
}

template <typename T>
void launch_where(const EwCall& call, T x_bits, T y_bits) {
  EwInputs<T, 2> in{};
  for (int k = 0; k < 2; ++k) in.ptr[k] = call.in[1 + k] ? reinterpret_cast<const char*>(call.in[1 + k]->data_ptr()) : nullptr;
  in.scalar[0] = x_bits;
  in.scalar[1] = y_bits;
  const EwStrides<3> p = ew_strides<3>(call);
  DeviceGuard guard(call.device);
  char* out = reinterpret_cast<char*>(call.out->data_ptr());
  const char* cond = reinterpret_cast<const char*>(call.in[0]->data_ptr());
  if (call.numel < (int64_t(1) << 31))
    where_kernel<true, T><<<ew_grid(call.numel), kEwThreads, 0, stream(call.device)>>>(out, cond, in, p, call.numel,
                                                                                      call.contiguous);
  else
    where_kernel<false, T><<<ew_grid(call.numel), kEwThreads, 0, stream(call.device)>>>(out, cond, in, p,
                                                                                       call.numel, call.contiguous);
  LUCID_CUDA_CHECK(cudaGetLastError());
}

// The bytes of a number converted to the output's dtype, as an unsigned integer of
// the dtype's size.
template <typename U>
U number_bits(const std::optional<Scalar>& s, Dtype dtype) {
  U bits = 0;
  if (!s) return bits;
  visit_dtype(dtype, [&]<typename T>() {
    T v;
    if constexpr (std::is_same_v<T, complex64>)
      v = std::visit([](auto x) { return complex64(std::complex<double>(x)); }, *s);
    else if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>)
      v = T(scalar_as<float>(*s));
    else
      v = scalar_as<T>(*s);
    if constexpr (sizeof(T) == sizeof(U)) memcpy(&bits, &v, sizeof(T));
  });
  return bits;
}

struct AbsC64 {
  __device__ float operator()(float re, float im) const { return hypotf(re, im); }
};

__global__ void __launch_bounds__(kEwThreads) complex_abs_kernel(char* out, const char* in, EwStrides<1> p,
                                                                 int64_t n) {
  const int64_t step = int64_t(gridDim.x) * kEwThreads;
  for (int64_t i = int64_t(blockIdx.x) * kEwThreads + threadIdx.x; i < n; i += step) {
    int64_t off[2];
    ew_offsets<false>(i, p, off);
    const float* z = reinterpret_cast<const float*>(in + off[1]);
    *reinterpret_cast<float*>(out + off[0]) = AbsC64()(z[0], z[1]);
  }
}

}  // namespace

void where(const EwCall& call) {
  if (call.numel == 0) return;
  const Dtype d = call.out->dtype();
  switch (dtype_size(d)) {
    case 1: return launch_where<uint8_t>(call, number_bits<uint8_t>(call.number[1], d), number_bits<uint8_t>(call.number[2], d));
    case 2: return launch_where<uint16_t>(call, number_bits<uint16_t>(call.number[1], d), number_bits<uint16_t>(call.number[2], d));
    case 4: return launch_where<uint32_t>(call, number_bits<uint32_t>(call.number[1], d), number_bits<uint32_t>(call.number[2], d));
    case 8: return launch_where<uint64_t>(call, number_bits<uint64_t>(call.number[1], d), number_bits<uint64_t>(call.number[2], d));
  }
  fail<RuntimeError>("internal: where on an item size of ", dtype_size(d));
}

void complex_abs(const EwCall& call) {
  if (call.numel == 0) return;
  const EwStrides<1> p = ew_strides<1>(call);
  DeviceGuard guard(call.device);
  complex_abs_kernel<<<ew_grid(call.numel), kEwThreads, 0, stream(call.device)>>>(
      reinterpret_cast<char*>(call.out->data_ptr()), reinterpret_cast<const char*>(call.in[0]->data_ptr()), p,
      call.numel);
  LUCID_CUDA_CHECK(cudaGetLastError());
}

}  // namespace lucid::cuda
