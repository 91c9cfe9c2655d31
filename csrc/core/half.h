// 16-bit floating-point storage types. Arithmetic happens in float; these types only
// convert, so they stay trivially copyable and usable from CUDA device code.
#pragma once

#include <cstdint>
#include <cstring>
#include <type_traits>

#if defined(__CUDACC__)
#define LUCID_HD __host__ __device__
#else
#define LUCID_HD
#endif

namespace lucid {

LUCID_HD inline uint32_t float_bits(float f) {
  uint32_t u;
  memcpy(&u, &f, sizeof u);
  return u;
}
LUCID_HD inline float bits_float(uint32_t u) {
  float f;
  memcpy(&f, &u, sizeof f);
  return f;
}

// Note [Hardware 16-bit conversions]
// In device code the conversions are one PTX cvt each (sm_80 and later: cvt.rn.bf16.f32
// too), where the portable rounding below is a dozen integer instructions an element:
// Nsight Compute counted 2.8x torch's instructions for a bfloat16 add. Both round to
// nearest even with IEEE overflow and subnormals, so every non-NaN value has the same
// bits on both devices; a NaN stays a NaN (the hardware's is the canonical one).

// IEEE-754 binary16.
struct Half {
  uint16_t bits = 0;
  Half() = default;
  LUCID_HD Half(float f) : bits(from_float(f)) {}
  LUCID_HD operator float() const { return to_float(bits); }

  LUCID_HD static float to_float(uint16_t h) {
#if defined(__CUDA_ARCH__)
    float f;  // Note [Hardware 16-bit conversions]
    asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h));
    return f;
#else
    uint32_t sign = uint32_t(h & 0x8000u) << 16;
    uint32_t exp = (h >> 10) & 0x1f;
    uint32_t mant = h & 0x3ffu;
    if (exp == 0x1f) return bits_float(sign | 0x7f800000u | (mant << 13));  // inf / nan
    if (exp == 0) {
      if (mant == 0) return bits_float(sign);
      // Subnormal half: value = mant * 2^-24, exact in float.
      float v = float(mant) * 5.9604644775390625e-08f;
      return sign ? -v : v;
    }
    return bits_float(sign | ((exp + 112) << 23) | (mant << 13));
#endif
  }

  // Round to nearest even, with overflow to inf and gradual underflow.
  LUCID_HD static uint16_t from_float(float f) {
#if defined(__CUDA_ARCH__)
    uint16_t h;  // Note [Hardware 16-bit conversions]
    asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(f));
    return h;
#else
    uint32_t x = float_bits(f);
    uint16_t sign = uint16_t((x >> 16) & 0x8000u);
    uint32_t abs = x & 0x7fffffffu;
    if (abs >= 0x7f800000u) return sign | (abs > 0x7f800000u ? 0x7e00u : 0x7c00u);
    if (abs >= 0x477ff000u) return sign | 0x7c00u;  // rounds past 65504: inf
    if (abs < 0x38800000u) {                        // below the smallest normal half
      // Scale so the subnormal quantum (2^-24) becomes 1, then round to integer.
      float v = bits_float(abs) * 16777216.0f;
      uint32_t m = uint32_t(v);
      float rem = v - float(m);
      if (rem > 0.5f || (rem == 0.5f && (m & 1u))) ++m;
      return sign | uint16_t(m);
    }
    uint32_t mant_rounded = abs + 0xfffu + ((abs >> 13) & 1u);
    return sign | uint16_t((mant_rounded - 0x38000000u) >> 13);
#endif
  }
};

// bfloat16: the top half of a float32.
struct BFloat16 {
  uint16_t bits = 0;
  BFloat16() = default;
  LUCID_HD BFloat16(float f) : bits(from_float(f)) {}
  LUCID_HD operator float() const { return bits_float(uint32_t(bits) << 16); }

  LUCID_HD static uint16_t from_float(float f) {
#if defined(__CUDA_ARCH__)
    uint16_t h;  // Note [Hardware 16-bit conversions]
    asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(h) : "f"(f));
    return h;
#else
    uint32_t x = float_bits(f);
    if ((x & 0x7fffffffu) > 0x7f800000u) return uint16_t((x >> 16) | 0x40u);  // quiet nan
    x += 0x7fffu + ((x >> 16) & 1u);  // round to nearest even
    return uint16_t(x >> 16);
#endif
  }
};

// The 16-bit floating types: they only convert from and to float.
template <typename T>
inline constexpr bool kIsHalfFloat = std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>;
// Every real floating type: the 16-bit ones, float and double.
template <typename T>
inline constexpr bool kIsRealFloat = kIsHalfFloat<T> || std::is_floating_point_v<T>;

}  // namespace lucid
