// A 16 x 16 float transpose in AVX-512 registers, shared by the transposing copy
// (core/transpose.cpp) and the matrix product's packing (backend/cpu/sgemm.cpp).
// Include only where <immintrin.h> is available (GCC/Clang on x86-64); callers are
// compiled for AVX-512 (a target attribute at least as wide as this one's).
#pragma once

#include <immintrin.h>

#define LUCID_TARGET_TRANSPOSE16 __attribute__((target("avx512f")))

namespace lucid {

// r[i][j] -> r[j][i] for 16 rows of 16 floats.
LUCID_TARGET_TRANSPOSE16 [[gnu::always_inline]] inline void transpose16(__m512 r[16]) {
  __m512 t[16], u[16];
#pragma GCC unroll 8
  for (int i = 0; i < 8; ++i) {
    t[2 * i] = _mm512_unpacklo_ps(r[2 * i], r[2 * i + 1]);
    t[2 * i + 1] = _mm512_unpackhi_ps(r[2 * i], r[2 * i + 1]);
  }
  // u[4i + j], 128-bit lane L: rows 4i..4i+3 of column 4L + j.
#pragma GCC unroll 4
  for (int i = 0; i < 4; ++i) {
    u[4 * i + 0] = _mm512_shuffle_ps(t[4 * i + 0], t[4 * i + 2], 0x44);
    u[4 * i + 1] = _mm512_shuffle_ps(t[4 * i + 0], t[4 * i + 2], 0xEE);
    u[4 * i + 2] = _mm512_shuffle_ps(t[4 * i + 1], t[4 * i + 3], 0x44);
    u[4 * i + 3] = _mm512_shuffle_ps(t[4 * i + 1], t[4 * i + 3], 0xEE);
  }
#pragma GCC unroll 4
  for (int j = 0; j < 4; ++j) {
    const __m512 lo02 = _mm512_shuffle_f32x4(u[j], u[4 + j], 0x88), lo13 = _mm512_shuffle_f32x4(u[j], u[4 + j], 0xDD);
    const __m512 hi02 = _mm512_shuffle_f32x4(u[8 + j], u[12 + j], 0x88),
                 hi13 = _mm512_shuffle_f32x4(u[8 + j], u[12 + j], 0xDD);
    r[j] = _mm512_shuffle_f32x4(lo02, hi02, 0x88);
    r[j + 8] = _mm512_shuffle_f32x4(lo02, hi02, 0xDD);
    r[j + 4] = _mm512_shuffle_f32x4(lo13, hi13, 0x88);
    r[j + 12] = _mm512_shuffle_f32x4(lo13, hi13, 0xDD);
  }
}

}  // namespace lucid
