// Device-side pieces the two LDL kernels (ldl_factor.cu, ldl_solve.cu) share: their
// element types (float, double and ::cuda::std::complex, as elementwise_launch.cuh's
// device_t maps complex64/128) and the conjugation a Hermitian factor adds.
#pragma once

#include <cuda/std/complex>

#include <type_traits>

#include "core/dtype.h"
#include "core/error.h"

namespace lucid::cuda::ldl_detail {

template <class T>
constexpr bool kComplex = !std::is_floating_point_v<T>;

// z, or its conjugate where a Hermitian factor reads L as L^H (a no-op otherwise).
template <bool kConj, class T>
__device__ T conj_if(T z) {
  if constexpr (kConj) return ::cuda::std::conj(z);
  else return z;
}

// fn.template operator()<T>() with T the device type of a float32/64 or complex64/128 dtype.
template <class Fn>
void visit_float_or_complex(Dtype dtype, const char* op, Fn&& fn) {
  switch (dtype) {
    case Dtype::F32: return fn.template operator()<float>();
    case Dtype::F64: return fn.template operator()<double>();
    case Dtype::C64: return fn.template operator()<::cuda::std::complex<float>>();
    case Dtype::C128: return fn.template operator()<::cuda::std::complex<double>>();
    default: fail<TypeError>(op, ": expected a float or complex dtype, got ", dtype_name(dtype));
  }
}

}  // namespace lucid::cuda::ldl_detail
