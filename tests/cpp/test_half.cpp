// float16 and bfloat16 conversions: exhaustive round trips, round-to-nearest-even
// at halfway cases, overflow, subnormals and signed zero. The float16 reference is
// the compiler's _Float16 (GCC 12+ on x86-64); known values are hard-coded as well.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>

#include "core/half.h"

using namespace lucid;

namespace {

bool half_is_nan(uint16_t h) { return (h & 0x7c00u) == 0x7c00u && (h & 0x3ffu) != 0; }
bool bf16_is_nan(uint16_t b) { return (b & 0x7f80u) == 0x7f80u && (b & 0x7fu) != 0; }
uint16_t to_half(float f) { return Half(f).bits; }
uint16_t to_bf16(float f) { return BFloat16(f).bits; }
float half_value(uint16_t h) { return Half::to_float(h); }
float bf16_value(uint16_t b) { return bits_float(uint32_t(b) << 16); }

#if defined(__FLT16_MAX__)
#define LUCID_HAVE_FLOAT16 1
uint16_t ref_half(float f) {
  _Float16 h = static_cast<_Float16>(f);
  uint16_t b;
  std::memcpy(&b, &h, sizeof b);
  return b;
}
float ref_half_value(uint16_t b) {
  _Float16 h;
  std::memcpy(&h, &b, sizeof h);
  return static_cast<float>(h);
}
#endif

// Checks lucid's float->half of f against the reference (NaN: any NaN).
void expect_half_matches_ref(float f) {
#ifdef LUCID_HAVE_FLOAT16
  uint16_t got = to_half(f), want = ref_half(f);
  if (half_is_nan(want)) EXPECT_TRUE(half_is_nan(got)) << std::hex << float_bits(f);
  else EXPECT_EQ(got, want) << "float bits 0x" << std::hex << float_bits(f) << " (" << f << ")";
#else
  (void)f;
#endif
}

// ---- float16 --------------------------------------------------------------------

TEST(Half, EveryBitPatternRoundTrips) {
  int nan_count = 0;
  for (uint32_t i = 0; i < 65536; ++i) {
    uint16_t h = uint16_t(i);
    float f = half_value(h);
    if (half_is_nan(h)) {
      ++nan_count;
      EXPECT_TRUE(std::isnan(f)) << std::hex << i;
      EXPECT_TRUE(half_is_nan(to_half(f))) << std::hex << i;
      continue;
    }
    EXPECT_FALSE(std::isnan(f)) << std::hex << i;
    ASSERT_EQ(to_half(f), h) << "half bits 0x" << std::hex << i;
    // Half's float conversion operator agrees with the static helper.
    Half hh;
    hh.bits = h;
    EXPECT_EQ(float_bits(float(hh)), float_bits(f));
  }
  EXPECT_EQ(nan_count, 2 * 1023);
}

#ifdef LUCID_HAVE_FLOAT16
TEST(Half, ToFloatMatchesCompilerForEveryPattern) {
  for (uint32_t i = 0; i < 65536; ++i) {
    uint16_t h = uint16_t(i);
    float got = half_value(h), want = ref_half_value(h);
    if (std::isnan(want)) EXPECT_TRUE(std::isnan(got)) << std::hex << i;
    else EXPECT_EQ(float_bits(got), float_bits(want)) << "half bits 0x" << std::hex << i;
  }
}

// Every halfway point between adjacent halves, and the floats right around it and
// around each half value itself: the cases rounding gets wrong.
TEST(Half, FromFloatMatchesCompilerNearEveryHalfAndMidpoint) {
  for (uint32_t i = 0; i < 0x7c00u; ++i) {  // every finite non-negative half
    float lo = half_value(uint16_t(i));
    float hi = i + 1 < 0x7c00u ? half_value(uint16_t(i + 1)) : 65536.0f;
    float mid = lo + (hi - lo) / 2;  // exact in float
    for (float base : {lo, mid}) {
      uint32_t b = float_bits(base);
      for (int64_t d = -2; d <= 2; ++d) {
        int64_t bits = int64_t(b) + d;
        if (bits < 0) continue;
        float f = bits_float(uint32_t(bits));
        expect_half_matches_ref(f);
        expect_half_matches_ref(-f);
      }
    }
  }
}

TEST(Half, FromFloatMatchesCompilerOnSampledFloats) {
  // A stride through all 2^32 patterns (every exponent, sign, nan and inf) ...
  for (uint64_t bits = 0; bits < (uint64_t(1) << 32); bits += 1021)
    expect_half_matches_ref(bits_float(uint32_t(bits)));
  // ... and random floats within the range where halves live.
  std::mt19937 rng(1234);
  std::uniform_int_distribution<uint32_t> dist(0x32000000u, 0x48000000u);
  for (int i = 0; i < 1000000; ++i) {
    float f = bits_float(dist(rng));
    expect_half_matches_ref(f);
    expect_half_matches_ref(-f);
  }
}
#endif

TEST(Half, KnownValues) {
  EXPECT_EQ(to_half(0.0f), 0x0000);
  EXPECT_EQ(to_half(-0.0f), 0x8000);
  EXPECT_EQ(to_half(1.0f), 0x3c00);
  EXPECT_EQ(to_half(-2.0f), 0xc000);
  EXPECT_EQ(to_half(0.5f), 0x3800);
  EXPECT_EQ(to_half(65504.0f), 0x7bff);
  EXPECT_EQ(to_half(0.333333343f), 0x3555);
  EXPECT_EQ(to_half(std::numeric_limits<float>::infinity()), 0x7c00);
  EXPECT_EQ(to_half(-std::numeric_limits<float>::infinity()), 0xfc00);
  EXPECT_TRUE(half_is_nan(to_half(std::numeric_limits<float>::quiet_NaN())));
  EXPECT_TRUE(half_is_nan(to_half(-std::numeric_limits<float>::quiet_NaN())));
  EXPECT_TRUE(half_is_nan(to_half(bits_float(0x7f800001u))));  // signalling NaN, low payload
  EXPECT_FLOAT_EQ(half_value(0x3c00), 1.0f);
  EXPECT_FLOAT_EQ(half_value(0x7bff), 65504.0f);
  EXPECT_EQ(float_bits(half_value(0x8000)), 0x80000000u);
  EXPECT_TRUE(std::isinf(half_value(0x7c00)));
}

TEST(Half, OverflowToInfinity) {
  EXPECT_EQ(to_half(65519.0f), 0x7bff);  // below the midpoint 65520: 65504
  EXPECT_EQ(to_half(std::nextafter(65520.0f, 0.0f)), 0x7bff);
  EXPECT_EQ(to_half(65520.0f), 0x7c00);  // the tie rounds to even, which is inf
  EXPECT_EQ(to_half(-65520.0f), 0xfc00);
  EXPECT_EQ(to_half(-65519.0f), 0xfbff);
  EXPECT_EQ(to_half(65536.0f), 0x7c00);
  EXPECT_EQ(to_half(1e10f), 0x7c00);
  EXPECT_EQ(to_half(std::numeric_limits<float>::max()), 0x7c00);
  EXPECT_EQ(to_half(-std::numeric_limits<float>::max()), 0xfc00);
}

TEST(Half, RoundsToNearestEvenAtHalfwayCases) {
  const float ulp1 = std::ldexp(1.0f, -10);  // spacing of halves in [1, 2)
  EXPECT_EQ(to_half(1.0f + ulp1 / 2), 0x3c00);      // tie: 0x3c00 is even
  EXPECT_EQ(to_half(1.0f + 3 * ulp1 / 2), 0x3c02);  // tie: 0x3c01 odd -> up
  EXPECT_EQ(to_half(std::nextafter(1.0f + ulp1 / 2, 2.0f)), 0x3c01);  // above the tie
  EXPECT_EQ(to_half(std::nextafter(1.0f + 3 * ulp1 / 2, 0.0f)), 0x3c01);  // below the tie
  EXPECT_EQ(to_half(-(1.0f + ulp1 / 2)), 0xbc00);
  EXPECT_EQ(to_half(-(1.0f + 3 * ulp1 / 2)), 0xbc02);
  // A carry out of the mantissa bumps the exponent: 2 - 2^-12 ties to 2.0.
  EXPECT_EQ(to_half(2.0f - std::ldexp(1.0f, -11)), 0x4000);
  EXPECT_EQ(to_half(2048.0f + 1.0f), 0x6800);  // 2049: tie between 2048 and 2050 -> 2048
  EXPECT_EQ(to_half(2048.0f + 3.0f), 0x6802);  // 2051: tie -> 2052
}

TEST(Half, Subnormals) {
  const float q = std::ldexp(1.0f, -24);  // the smallest subnormal half
  EXPECT_EQ(to_half(q), 0x0001);
  EXPECT_EQ(to_half(-q), 0x8001);
  EXPECT_EQ(to_half(1023 * q), 0x03ff);  // the largest subnormal
  EXPECT_EQ(to_half(1024 * q), 0x0400);  // the smallest normal, 2^-14
  EXPECT_EQ(to_half(1023.5f * q), 0x0400);  // tie: 1023 odd -> 1024, a normal
  EXPECT_EQ(to_half(2.5f * q), 0x0002);  // tie -> even
  EXPECT_EQ(to_half(1.5f * q), 0x0002);  // tie -> even
  EXPECT_EQ(to_half(q / 2), 0x0000);     // tie between 0 and q -> 0
  EXPECT_EQ(to_half(-q / 2), 0x8000);    // ... keeping the sign
  EXPECT_EQ(to_half(std::nextafter(q / 2, 1.0f)), 0x0001);  // just above the tie
  EXPECT_EQ(to_half(q / 4), 0x0000);
  EXPECT_EQ(to_half(-q / 4), 0x8000);
  EXPECT_EQ(to_half(std::numeric_limits<float>::denorm_min()), 0x0000);
  EXPECT_EQ(to_half(-std::numeric_limits<float>::denorm_min()), 0x8000);
  for (uint16_t m = 1; m < 0x400; ++m) EXPECT_EQ(half_value(m), float(m) * q) << m;
}

// ---- bfloat16 ------------------------------------------------------------------------

// Round-to-nearest-even computed from distances in double (exact for adjacent floats).
uint16_t ref_bf16(float f) {
  uint32_t x = float_bits(f);
  if (std::isnan(f)) return 0x7fc0;
  if (std::isinf(f)) return uint16_t(x >> 16);
  uint32_t sign = x & 0x80000000u, abs = x & 0x7fffffffu;
  uint16_t lo = uint16_t(abs >> 16), hi = uint16_t(lo + 1);
  double a = std::fabs(double(f));
  double vlo = bf16_value(lo);
  double vhi = hi == 0x7f80 ? std::ldexp(1.0, 128) : double(bf16_value(hi));
  uint16_t r = (a - vlo < vhi - a) ? lo : (a - vlo > vhi - a) ? hi : ((lo & 1) ? hi : lo);
  return uint16_t(r | (sign >> 16));
}

TEST(BFloat16, EveryBitPatternRoundTrips) {
  for (uint32_t i = 0; i < 65536; ++i) {
    uint16_t b = uint16_t(i);
    float f = bf16_value(b);
    BFloat16 v;
    v.bits = b;
    EXPECT_EQ(float_bits(float(v)), uint32_t(b) << 16);
    if (bf16_is_nan(b)) EXPECT_TRUE(bf16_is_nan(to_bf16(f))) << std::hex << i;
    else ASSERT_EQ(to_bf16(f), b) << std::hex << i;
  }
}

TEST(BFloat16, RoundsToNearestEven) {
  // 1 + 2^-8 is halfway between 1 (0x3f80, even) and 1 + 2^-7 (0x3f81).
  EXPECT_EQ(to_bf16(1.0f + std::ldexp(1.0f, -8)), 0x3f80);
  EXPECT_EQ(to_bf16(1.0f + 3 * std::ldexp(1.0f, -8)), 0x3f82);  // odd 0x3f81 -> up
  EXPECT_EQ(to_bf16(std::nextafter(1.0f + std::ldexp(1.0f, -8), 2.0f)), 0x3f81);
  EXPECT_EQ(to_bf16(-(1.0f + std::ldexp(1.0f, -8))), 0xbf80);
  EXPECT_EQ(to_bf16(1.0f), 0x3f80);
  EXPECT_EQ(to_bf16(-0.0f), 0x8000);
  EXPECT_EQ(to_bf16(3.14159265f), 0x4049);
  // Overflow: the largest finite bfloat16 is 0x7f7f; values past its midpoint -> inf.
  EXPECT_EQ(to_bf16(std::numeric_limits<float>::max()), 0x7f80);
  EXPECT_EQ(to_bf16(bf16_value(0x7f7f)), 0x7f7f);
  EXPECT_EQ(to_bf16(std::numeric_limits<float>::infinity()), 0x7f80);
  EXPECT_EQ(to_bf16(-std::numeric_limits<float>::infinity()), 0xff80);
  // Subnormal floats round like any other value.
  EXPECT_EQ(to_bf16(std::numeric_limits<float>::denorm_min()), 0x0000);
  EXPECT_EQ(to_bf16(bits_float(0x00018000u)), 0x0002);  // tie, 0x0001 odd -> up
  EXPECT_EQ(to_bf16(bits_float(0x00008000u)), 0x0000);  // tie, 0x0000 even -> down
}

TEST(BFloat16, NanStaysNan) {
  // Every NaN, including those whose payload sits only in the low 16 bits (which
  // plain rounding would turn into inf) and the one whose rounding would carry.
  for (uint32_t x : {0x7f800001u, 0x7f80ffffu, 0x7fc00000u, 0x7fffffffu, 0xff800001u,
                     0xffffffffu, 0x7f81ffffu, 0x7fbfffffu}) {
    uint16_t b = to_bf16(bits_float(x));
    EXPECT_TRUE(bf16_is_nan(b)) << std::hex << x << " -> " << b;
    EXPECT_EQ(b & 0x8000u, (x >> 16) & 0x8000u) << std::hex << x;  // sign kept
  }
}

TEST(BFloat16, MatchesReferenceNearMidpointsAndSampled) {
  auto check = [](float f) {
    uint16_t got = to_bf16(f), want = ref_bf16(f);
    if (std::isnan(f)) EXPECT_TRUE(bf16_is_nan(got)) << std::hex << float_bits(f);
    else EXPECT_EQ(got, want) << "float bits 0x" << std::hex << float_bits(f);
  };
  for (uint32_t hi = 0; hi < 0x10000u; ++hi) {
    for (uint32_t low : {0x0000u, 0x0001u, 0x7fffu, 0x8000u, 0x8001u, 0xffffu})
      check(bits_float((hi << 16) | low));
  }
  for (uint64_t bits = 0; bits < (uint64_t(1) << 32); bits += 4099)
    check(bits_float(uint32_t(bits)));
}

}  // namespace
