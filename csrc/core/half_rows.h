// Whole rows of float16 / bfloat16 converted to float and back, one vector
// instruction per 8 or 16 elements: casts (core/copy.cpp), and the CPU's elementwise
// loops, vector math and sums on 16-bit data.
//
// Note [16-bit rows]
// Arithmetic on float16 / bfloat16 happens in float (opmath_t). Element by element,
// the portable conversions of core/half.h cost a dozen integer instructions each way,
// which made a bfloat16 `x * y` 2.2x torch's time on the CPU. The dense loops instead
// widen a block of each operand into a float buffer on the stack, run the op's functor
// on the floats (vectorised like any float loop), and narrow the block back. Both
// directions round as core/half.h does (widening is exact; narrowing rounds to nearest
// even with IEEE overflow and subnormals), so every non-NaN result has the same bits as
// the element-by-element loop; a NaN stays a NaN (the hardware's float16 conversion
// keeps the payload's top bits where half.h writes the canonical one).
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "core/half.h"
#include "core/isa.h"

#if LUCID_X86_DISPATCH
#include <immintrin.h>
#endif

namespace lucid::cpu {

// Elements per block: three float buffers of it stay in L1.
inline constexpr int64_t kHalfBlock = 512;
// Elements per window of the reductions and scans that read 16-bit rows through one
// float stack buffer (8 KiB, in L1), as their float loops would read the row.
inline constexpr int64_t kHalfWindow = 2048;

// float <-> bfloat16 without branches, so the compiler vectorises the loops.
inline float bf16_to_float(uint16_t b) { return bits_float(uint32_t(b) << 16); }
inline uint16_t float_to_bf16(float f) {
  const uint32_t x = float_bits(f);
  const uint32_t rounded = (x + 0x7fffu + ((x >> 16) & 1u)) >> 16;  // to nearest even
  const uint32_t quiet_nan = (x >> 16) | 0x40u;
  return uint16_t((x & 0x7fffffffu) > 0x7f800000u ? quiet_nan : rounded);
}

#define LUCID_BF16_ROWS(ATTR, SFX)                                                   \
  ATTR inline void widen##SFX(float* dst, const BFloat16* src, int64_t n) {          \
    for (int64_t i = 0; i < n; ++i) dst[i] = bf16_to_float(src[i].bits);             \
  }                                                                                  \
  ATTR inline void narrow##SFX(BFloat16* dst, const float* src, int64_t n) {         \
    for (int64_t i = 0; i < n; ++i) dst[i].bits = float_to_bf16(src[i]);             \
  }

LUCID_BF16_ROWS(, _base)
inline void widen_base(float* dst, const Half* src, int64_t n) {
  for (int64_t i = 0; i < n; ++i) dst[i] = float(src[i]);
}
inline void narrow_base(Half* dst, const float* src, int64_t n) {
  for (int64_t i = 0; i < n; ++i) dst[i] = Half(src[i]);
}

#if LUCID_X86_DISPATCH
LUCID_BF16_ROWS(LUCID_TARGET_AVX2, _avx2)
LUCID_BF16_ROWS(LUCID_TARGET_AVX512, _avx512)

// float16: the F16C conversions (vcvtph2ps exact; vcvtps2ph rounding to nearest even). (The
// AVX-512 forms are the zero-masked ones: GCC 12's unmasked ones warn of an uninitialised
// variable of their own.)
LUCID_TARGET_AVX2 inline void widen_avx2(float* dst, const Half* src, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    _mm256_storeu_ps(dst + i, _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i))));
  for (; i < n; ++i) dst[i] = float(src[i]);
}
LUCID_TARGET_AVX2 inline void narrow_avx2(Half* dst, const float* src, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + i), _mm256_cvtps_ph(_mm256_loadu_ps(src + i), _MM_FROUND_TO_NEAREST_INT));
  for (; i < n; ++i) dst[i] = Half(src[i]);
}
LUCID_TARGET_AVX512 inline void widen_avx512(float* dst, const Half* src, int64_t n) {
  int64_t i = 0;
  for (; i + 16 <= n; i += 16)
    _mm512_storeu_ps(dst + i, _mm512_maskz_cvtph_ps(__mmask16(0xffff), _mm256_loadu_si256(reinterpret_cast<const __m256i*>(src + i))));
  for (; i < n; ++i) dst[i] = float(src[i]);
}
LUCID_TARGET_AVX512 inline void narrow_avx512(Half* dst, const float* src, int64_t n) {
  int64_t i = 0;
  for (; i + 16 <= n; i += 16)
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst + i),
                        _mm512_maskz_cvtps_ph(__mmask16(0xffff), _mm512_loadu_ps(src + i), _MM_FROUND_TO_NEAREST_INT));
  for (; i < n; ++i) dst[i] = Half(src[i]);
}
#endif
#undef LUCID_BF16_ROWS

// The conversions for this CPU, for callers outside the per-ISA loops.
template <typename T>
void widen_rows(float* dst, const T* src, int64_t n) {
#if LUCID_X86_DISPATCH
  static const Isa isa = cpu_isa();
  if (isa == Isa::Avx512) return widen_avx512(dst, src, n);
  if (isa == Isa::Avx2) return widen_avx2(dst, src, n);
#endif
  widen_base(dst, src, n);
}
template <typename T>
void narrow_rows(T* dst, const float* src, int64_t n) {
#if LUCID_X86_DISPATCH
  static const Isa isa = cpu_isa();
  if (isa == Isa::Avx512) return narrow_avx512(dst, src, n);
  if (isa == Isa::Avx2) return narrow_avx2(dst, src, n);
#endif
  narrow_base(dst, src, n);
}

// A buffer of n elements that the calling thread keeps (and reuses) for widened rows.
template <typename E>
E* thread_buffer(int64_t n) {
  static thread_local std::vector<E> buf;
  if (buf.size() < size_t(n)) buf.resize(size_t(n));
  return buf.data();
}

// Three buffers of a block, placed so that no two start a multiple of 4 KiB apart (a
// load from one and a store to another at the same offset would then falsely alias).
struct HalfBuffers {
  static constexpr int64_t kStride = kHalfBlock + 32;
  alignas(64) float data[3 * kStride];
  float* operator[](int k) { return data + k * kStride; }
};

// A 16-bit row through float blocks: a and b (either may be null) widened, then
// `rows(out, x, y, m)` runs the float loop, and its result is narrowed into o once.
template <typename T, typename Rows>
void half_rows(T* o, const T* a, const T* b, int64_t n, Rows rows) {
  HalfBuffers buf;
  for (int64_t i = 0; i < n; i += kHalfBlock) {
    const int64_t m = std::min(kHalfBlock, n - i);
    if (a) widen_rows(buf[0], a + i, m);
    if (b) widen_rows(buf[1], b + i, m);
    rows(buf[2], buf[0], buf[1], m);
    narrow_rows(o + i, buf[2], m);
  }
}

}  // namespace lucid::cpu
