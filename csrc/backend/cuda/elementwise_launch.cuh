// The body of one CUDA elementwise unit (binary_*.cu, unary_*.cu): the table's ops
// whose unit is U, over every dtype the op supports, as on the CPU
// (backend/cpu/kernel_unit.h). The functors are the CPU's (ops/elementwise_table.h).
//
// Note [Numbers as parameters]
// A Python number operand (or a 0-d CPU tensor joining a GPU op) reaches the kernel as
// a value in its arguments, converted to the compute type here on the host. No
// one-element upload: an upload from pageable memory would synchronise the stream.
#pragma once

#include <type_traits>
#include <variant>

#include "backend/common/elementwise_units.h"
#include "backend/cuda/check.h"
#include "backend/cuda/device_error.h"
#include "backend/cuda/device_guard.h"
#include "backend/cuda/elementwise.h"
#include "backend/cuda/stream.h"
#include "core/error.h"

namespace lucid::cuda {

// The storage type a dtype's elements have in device code: complex64 is
// ::cuda::std::complex<float> there (the same bytes as std::complex<float>), complex128
// ::cuda::std::complex<double>.
template <typename T>
struct DeviceStorage { using type = T; };
template <>
struct DeviceStorage<complex64> { using type = ::cuda::std::complex<float>; };
template <>
struct DeviceStorage<complex128> { using type = ::cuda::std::complex<double>; };
template <typename T>
using device_t = typename DeviceStorage<T>::type;

template <typename C>
C scalar_as(const Scalar& s) {
  return std::visit([](auto v) -> C {
    using V = decltype(v);
    if constexpr (ops::kIsComplex<C>) {
      using R = typename C::value_type;
      if constexpr (std::is_same_v<V, std::complex<double>>) return C(R(v.real()), R(v.imag()));
      else return C(R(v));
    } else if constexpr (std::is_same_v<V, std::complex<double>>) {
      return C(v.real());
    } else {
      return C(v);
    }
  }, s);
}

// The device functors: compute in opmath_t<T>, store as TOut.
template <typename Op, typename TOut>
struct UnaryDev {
  template <typename C> __device__ TOut operator()(C a) const { return TOut(Op()(a)); }
};
template <typename Op>
inline constexpr bool kDividesIntegers = std::is_same_v<Op, ops::fn::FloorDivide> ||
    std::is_same_v<Op, ops::fn::DivTrunc> || std::is_same_v<Op, ops::fn::Remainder> ||
    std::is_same_v<Op, ops::fn::Fmod>;

// An integer divisor of zero is reported (the op raises at the next synchronisation,
// as the CPU raises at once) and its element left 0: Note [Errors found on the device].
template <typename Op, typename TOut>
struct BinaryDev {
  DeviceErrorSlot* error = nullptr;
  template <typename C> __device__ TOut operator()(C a, C b) const {
    if constexpr (kDividesIntegers<Op> && std::is_integral_v<C>) {
      if (b == C(0)) {
        report_device_error(error, DeviceErrorCode::ZeroDivision);
        return TOut(0);
      }
    }
    return TOut(Op()(a, b));
  }
};

inline unsigned ew_grid(int64_t work) {
  int64_t blocks = (work + kEwThreads - 1) / kEwThreads;
  return unsigned(blocks < (int64_t(1) << 20) ? blocks : (int64_t(1) << 20));
}

// The kernel's view of a planned call's dimensions (N inputs).
template <int N>
EwStrides<N> ew_strides(const EwCall& call) {
  EwStrides<N> p{};
  p.ndim = call.ndim;
  for (int d = 0; d < call.ndim; ++d) {
    p.sizes[d] = call.sizes[d];
    if (call.sizes[d] < (int64_t(1) << 31)) p.div[d] = FastDiv(uint32_t(call.sizes[d]));
    for (int k = 0; k <= N; ++k) p.strides[k][d] = call.strides[k][d];
  }
  return p;
}

// Launches f over the planned call with inputs of storage type T and output TOut.
template <typename TOut, typename T, int N, typename F>
void launch_elementwise(const EwCall& call, F f) {
  if (call.numel == 0) return;
  EwInputs<T, N> in{};
  for (int k = 0; k < N; ++k) {
    in.ptr[k] = call.in[k] ? reinterpret_cast<const char*>(call.in[k]->data_ptr()) : nullptr;
    if (!call.in[k]) in.scalar[k] = scalar_as<opmath_t<T>>(*call.number[k]);
    in.period[k] = call.period[k];
    if (call.period[k] > 0 && call.period[k] < (int64_t(1) << 31)) in.period_div[k] = FastDiv(uint32_t(call.period[k]));
  }
  DeviceGuard guard(call.device);
  cudaStream_t s = stream(call.device);
  if (call.contiguous) {
    constexpr int V = ew_vec_width<T>();
    ew_contiguous<TOut, T, N><<<ew_grid((call.numel + V - 1) / V), kEwThreads, 0, s>>>(
        reinterpret_cast<TOut*>(call.out->data_ptr()), in, call.numel, call.aligned, f);
  } else {
    const EwStrides<N> p = ew_strides<N>(call);
    char* out = reinterpret_cast<char*>(call.out->data_ptr());
    if (call.numel < (int64_t(1) << 31))
      ew_strided<true, TOut, T, N><<<ew_grid(call.numel), kEwThreads, 0, s>>>(out, in, p, call.numel, f);
    else
      ew_strided<false, TOut, T, N><<<ew_grid(call.numel), kEwThreads, 0, s>>>(out, in, p, call.numel, f);
  }
  LUCID_CUDA_CHECK(cudaGetLastError());
}

template <typename Op>
void run_binary(const char* name, const EwCall& call) {
  visit_dtype(call.compute, [&]<typename T>() {
    using D = device_t<T>;
    using C = opmath_t<D>;
    if constexpr (!Op::template supports<C>) {
      fail<RuntimeError>("internal: ", name, " launched for dtype ", dtype_name(call.compute),
                         ", which ops::check_supported refuses");
    } else {
      using R = decltype(Op()(C(), C()));
      using TOut = std::conditional_t<std::is_same_v<R, bool>, bool, D>;
      BinaryDev<Op, TOut> f;
      if constexpr (kDividesIntegers<Op> && std::is_integral_v<C>) f.error = device_error_slot(call.device);
      launch_elementwise<TOut, D, 2>(call, f);
    }
  });
}

template <typename Op>
void run_unary(const char* name, const EwCall& call) {
  visit_dtype(call.compute, [&]<typename T>() {
    using D = device_t<T>;
    using C = opmath_t<D>;
    if constexpr (!Op::template supports<C>) {
      fail<RuntimeError>("internal: ", name, " launched for dtype ", dtype_name(call.compute),
                         ", which ops::check_supported refuses");
    } else {
      using R = decltype(Op()(C()));
      using TOut = std::conditional_t<std::is_same_v<R, bool>, bool, D>;
      launch_elementwise<TOut, D, 1>(call, UnaryDev<Op, TOut>());
    }
  });
}

template <backend::Unit U>
void run_binary_unit(const char* unit_name, ops::BinaryOp op, const EwCall& call) {
  switch (op) {
#define LUCID_CASE(name, Fn, rule, operands)                       \
  case ops::BinaryOp::Fn:                                          \
    if constexpr (backend::binary_unit(ops::BinaryOp::Fn) == U)    \
      return run_binary<ops::fn::Fn>(#name, call);                 \
    break;
    LUCID_BINARY_OPS(LUCID_CASE)
#undef LUCID_CASE
  }
  fail<RuntimeError>("internal: CUDA ", unit_name, " given another unit's op");
}

template <backend::Unit U>
void run_unary_unit(const char* unit_name, ops::UnaryOp op, const EwCall& call) {
  switch (op) {
#define LUCID_CASE(name, Fn, rule)                                 \
  case ops::UnaryOp::Fn:                                           \
    if constexpr (backend::unary_unit(ops::UnaryOp::Fn) == U)      \
      return run_unary<ops::fn::Fn>(#name, call);                  \
    break;
    LUCID_UNARY_OPS(LUCID_CASE)
#undef LUCID_CASE
  }
  fail<RuntimeError>("internal: CUDA ", unit_name, " given another unit's op");
}

}  // namespace lucid::cuda
