// where(cond, x, y) and |z| on the device. where moves bytes, so one kernel per item
// size serves every dtype (as the CPU's where.cpp).
#include <cstdint>
#include <cstring>

#include "backend/cuda/elementwise_launch.cuh"
#include "backend/cuda/strided_copy_kernel.cuh"

namespace lucid::cuda {

namespace {

// The condition is a bool byte, the values items of T's size: where has its own loops.
// Selects, not an index: a runtime index into the argument arrays would put them in
// local memory (a load per element from the stack).
template <typename T>
__device__ __forceinline__ T where_pick(bool c, const char* x, const char* y, int64_t x_off, int64_t y_off,
                                        const EwInputs<T, 2>& in) {
  const char* src = c ? x : y;
  return src ? *reinterpret_cast<const T*>(src + (c ? x_off : y_off)) : (c ? in.scalar[0] : in.scalar[1]);
}

// Strided operands: byte offsets walked per element.
template <bool kSmall, typename T>
__global__ void __launch_bounds__(kEwThreads) where_strided(char* out, const char* cond, EwInputs<T, 2> in,
                                                            EwStrides<3> p, int64_t n) {
  const int64_t step = int64_t(gridDim.x) * kEwThreads;
  for (int64_t i = int64_t(blockIdx.x) * kEwThreads + threadIdx.x; i < n; i += step) {
    int64_t off[4];
    ew_offsets<kSmall>(i, p, off);
    const bool c = *reinterpret_cast<const uint8_t*>(cond + off[1]) != 0;
    *reinterpret_cast<T*>(out + off[0]) = where_pick(c, in.ptr[0], in.ptr[1], off[2], off[3], in);
  }
}

// The contiguous path (elementwise_loop.cuh): V elements a thread. With `aligned` the
// condition is one V-byte load and the dense values one 16-byte load each.
template <typename T>
__global__ void __launch_bounds__(kEwThreads) where_contiguous(T* out, const uint8_t* cond, int64_t cond_period,
                                                               FastDiv cond_div, EwInputs<T, 2> in, int64_t n,
                                                               bool aligned) {
  constexpr int V = ew_vec_width<T>();
  const int64_t i0 = (int64_t(blockIdx.x) * kEwThreads + threadIdx.x) * V;
  if (i0 >= n) return;
  auto source = [&](int k, int64_t i) { return ew_source(i, in.period[k], in.period_div[k]) * int64_t(sizeof(T)); };
  if (aligned && i0 + V <= n && cond_period != 1 && in.period[0] != 1 && in.period[1] != 1) {
    const EwVec<uint8_t, V> c = *reinterpret_cast<const EwVec<uint8_t, V>*>(cond + ew_source(i0, cond_period, cond_div));
    EwVec<T, V> x{}, y{};
    if (in.ptr[0]) x = *reinterpret_cast<const EwVec<T, V>*>(in.ptr[0] + source(0, i0));
    if (in.ptr[1]) y = *reinterpret_cast<const EwVec<T, V>*>(in.ptr[1] + source(1, i0));
    EwVec<T, V> r;
#pragma unroll
    for (int j = 0; j < V; ++j)
      r.v[j] = c.v[j] ? (in.ptr[0] ? x.v[j] : T(in.scalar[0])) : (in.ptr[1] ? y.v[j] : T(in.scalar[1]));
    *reinterpret_cast<EwVec<T, V>*>(out + i0) = r;
    return;
  }
  for (int64_t i = i0; i < n && i < i0 + V; ++i) {
    const bool c = cond[ew_source(i, cond_period, cond_div)] != 0;
    out[i] = where_pick(c, in.ptr[0], in.ptr[1], source(0, i), source(1, i), in);
  }
}

template <typename T>
void launch_where(const EwCall& call, T x_bits, T y_bits) {
  EwInputs<T, 2> in{};
  for (int k = 0; k < 2; ++k) {
    in.ptr[k] = call.in[1 + k] ? reinterpret_cast<const char*>(call.in[1 + k]->data_ptr()) : nullptr;
    in.period[k] = call.period[1 + k];
    if (in.period[k] > 0 && in.period[k] < (int64_t(1) << 31)) in.period_div[k] = FastDiv(uint32_t(in.period[k]));
  }
  in.scalar[0] = x_bits;
  in.scalar[1] = y_bits;
  DeviceGuard guard(call.device);
  cudaStream_t s = stream(call.device);
  char* out = reinterpret_cast<char*>(call.out->data_ptr());
  const char* cond = reinterpret_cast<const char*>(call.in[0]->data_ptr());
  if (call.contiguous) {
    constexpr int V = ew_vec_width<T>();
    // The plan checked 16-byte alignment for the values; the condition's V bytes need
    // their own (V-byte) alignment and a period that keeps a thread's bytes adjacent.
    const int64_t cp = call.period[0];
    const bool aligned = call.aligned && (reinterpret_cast<uintptr_t>(cond) % V) == 0 && cp % V == 0;
    const FastDiv cond_div = cp > 0 && cp < (int64_t(1) << 31) ? FastDiv(uint32_t(cp)) : FastDiv();
    where_contiguous<T><<<ew_grid((call.numel + V - 1) / V), kEwThreads, 0, s>>>(
        reinterpret_cast<T*>(out), reinterpret_cast<const uint8_t*>(cond), cp, cond_div, in, call.numel, aligned);
  } else {
    const EwStrides<3> p = ew_strides<3>(call);
    if (call.numel < (int64_t(1) << 31))
      where_strided<true, T><<<ew_grid(call.numel), kEwThreads, 0, s>>>(out, cond, in, p, call.numel);
    else
      where_strided<false, T><<<ew_grid(call.numel), kEwThreads, 0, s>>>(out, cond, in, p, call.numel);
  }
  LUCID_CUDA_CHECK(cudaGetLastError());
}

// The bytes of a number converted to the output's dtype, as an unsigned integer of
// the dtype's size (Bytes16 for 16).
template <typename U>
U number_bits(const std::optional<Scalar>& s, Dtype dtype) {
  U bits{};
  if (!s) return bits;
  visit_dtype(dtype, [&]<typename T>() {
    T v;
    if constexpr (kIsComplexValue<T>)
      v = std::visit([](auto x) { return T(std::complex<double>(x)); }, *s);
    else if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>)
      v = T(scalar_as<float>(*s));
    else
      v = scalar_as<T>(*s);
    if constexpr (sizeof(T) == sizeof(U)) memcpy(&bits, &v, sizeof(T));
  });
  return bits;
}

// |z| of complex64 (R float) or complex128 (R double) z, as R.
template <typename R>
__global__ void __launch_bounds__(kEwThreads) complex_abs_kernel(char* out, const char* in, EwStrides<1> p,
                                                                 int64_t n) {
  const int64_t step = int64_t(gridDim.x) * kEwThreads;
  for (int64_t i = int64_t(blockIdx.x) * kEwThreads + threadIdx.x; i < n; i += step) {
    int64_t off[2];
    ew_offsets<false>(i, p, off);
    const R* z = reinterpret_cast<const R*>(in + off[1]);
    *reinterpret_cast<R*>(out + off[0]) = hypot(z[0], z[1]);
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
    case 16: return launch_where<Bytes16>(call, number_bits<Bytes16>(call.number[1], d), number_bits<Bytes16>(call.number[2], d));
  }
  fail<RuntimeError>("internal: where on an item size of ", dtype_size(d));
}

void complex_abs(const EwCall& call) {
  if (call.numel == 0) return;
  const EwStrides<1> p = ew_strides<1>(call);
  DeviceGuard guard(call.device);
  auto* out = reinterpret_cast<char*>(call.out->data_ptr());
  const auto* in = reinterpret_cast<const char*>(call.in[0]->data_ptr());
  if (call.out->dtype() == Dtype::F64)
    complex_abs_kernel<double><<<ew_grid(call.numel), kEwThreads, 0, stream(call.device)>>>(out, in, p, call.numel);
  else
    complex_abs_kernel<float><<<ew_grid(call.numel), kEwThreads, 0, stream(call.device)>>>(out, in, p, call.numel);
  LUCID_CUDA_CHECK(cudaGetLastError());
}

}  // namespace lucid::cuda
