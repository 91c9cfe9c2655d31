// Element types. The enum order is the promotion lattice within each category and
// is also the integer code the Python layer uses (python/lucid/_dtype.py).
#pragma once

#include <complex>
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <type_traits>

#include "core/error.h"
#include "core/half.h"

namespace lucid {

enum class Dtype : uint8_t { Bool, U8, I8, I16, I32, I64, F16, BF16, F32, F64, C64, C128 };
inline constexpr int kNumDtypes = 12;

using complex64 = std::complex<float>;
using complex128 = std::complex<double>;
// complex64 or complex128 (the host types; the CUDA units have their own, elementwise_table.h).
template <typename T>
inline constexpr bool kIsComplexValue = std::is_same_v<T, complex64> || std::is_same_v<T, complex128>;

enum class DtypeKind : uint8_t { Bool, Integer, Floating, Complex };

size_t dtype_size(Dtype d);
std::string_view dtype_name(Dtype d);  // "float32", as PyTorch spells it
const char* scalar_type_name(Dtype d);  // "Float": PyTorch's ScalarType name, which some of its messages use
DtypeKind dtype_kind(Dtype d);
inline bool is_floating(Dtype d) { return dtype_kind(d) == DtypeKind::Floating; }
inline bool is_complex(Dtype d) { return dtype_kind(d) == DtypeKind::Complex; }
inline bool is_integral(Dtype d, bool include_bool) {
  auto k = dtype_kind(d);
  return k == DtypeKind::Integer || (include_bool && k == DtypeKind::Bool);
}
Dtype dtype_from_code(int code);  // validates a code coming from Python

// torch.promote_types semantics (uint8 with int8 gives int16, float16 with
// bfloat16 gives float32, a float with a complex type gives the complex type of the
// larger precision: complex64 with float64 gives complex128).
Dtype promote_types(Dtype a, Dtype b);

// Dtype <-> C++ type, both ways: DtypeTraits<Dtype::F32>::type is float,
// DtypeOf<float>::value is Dtype::F32.
template <Dtype D> struct DtypeTraits;
template <typename T> struct DtypeOf;
#define LUCID_DTYPE_TRAIT(D, T)                                 \
  template <> struct DtypeTraits<Dtype::D> { using type = T; }; \
  template <> struct DtypeOf<T> { static constexpr Dtype value = Dtype::D; };
LUCID_DTYPE_TRAIT(Bool, bool)
LUCID_DTYPE_TRAIT(U8, uint8_t)
LUCID_DTYPE_TRAIT(I8, int8_t)
LUCID_DTYPE_TRAIT(I16, int16_t)
LUCID_DTYPE_TRAIT(I32, int32_t)
LUCID_DTYPE_TRAIT(I64, int64_t)
LUCID_DTYPE_TRAIT(F16, Half)
LUCID_DTYPE_TRAIT(BF16, BFloat16)
LUCID_DTYPE_TRAIT(F32, float)
LUCID_DTYPE_TRAIT(F64, double)
LUCID_DTYPE_TRAIT(C64, complex64)
LUCID_DTYPE_TRAIT(C128, complex128)
#undef LUCID_DTYPE_TRAIT

// Calls fn.template operator()<T>() with T the C++ type of d: the one place a
// run-time dtype becomes a compile-time type.
template <typename Fn>
decltype(auto) visit_dtype(Dtype d, Fn&& fn) {
  switch (d) {
    case Dtype::Bool: return fn.template operator()<bool>();
    case Dtype::U8: return fn.template operator()<uint8_t>();
    case Dtype::I8: return fn.template operator()<int8_t>();
    case Dtype::I16: return fn.template operator()<int16_t>();
    case Dtype::I32: return fn.template operator()<int32_t>();
    case Dtype::I64: return fn.template operator()<int64_t>();
    case Dtype::F16: return fn.template operator()<Half>();
    case Dtype::BF16: return fn.template operator()<BFloat16>();
    case Dtype::F32: return fn.template operator()<float>();
    case Dtype::F64: return fn.template operator()<double>();
    case Dtype::C64: return fn.template operator()<complex64>();
    case Dtype::C128: return fn.template operator()<complex128>();
  }
  fail<RuntimeError>("internal: invalid dtype code ", int(d));
}

// f(T{}) with T Half, BFloat16 or float for those dtypes, double otherwise: the
// kernels that read 16-bit floats natively and everything else as float64 (softmax's
// and the cross entropy's GPU rows, a product's bias and row sums).
template <typename F>
void visit_floating(Dtype d, F&& f) {
  switch (d) {
    case Dtype::F16: return f(Half{});
    case Dtype::BF16: return f(BFloat16{});
    case Dtype::F32: return f(float{});
    default: return f(double{});
  }
}

// f(T{}) with T float for float32, double otherwise: the kernels whose ops hand them
// only float32 or float64 (normalisation, recurrent layers, convolution).
template <typename F>
void visit_float32_or_64(Dtype d, F&& f) {
  if (d == Dtype::F32) f(float{});
  else f(double{});
}

}  // namespace lucid
