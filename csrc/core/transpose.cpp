#include "core/transpose.h"

#include <algorithm>
#include <cstring>

#include "core/isa.h"

#if (defined(__GNUC__) || defined(__clang__)) && defined(__x86_64__)
#include "core/transpose16.h"
#define LUCID_TRANSPOSE_X86 1
// GCC 12's AVX-512 headers build vectors from an uninitialised "undefined" value
// and warn about their own code.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

namespace lucid {

#if LUCID_TRANSPOSE_X86
namespace {

// Rows of dst are taken 64 at a time: each source row then gives 256 contiguous
// bytes (four whole cache lines; 2-byte elements two, 1-byte one) per pass, and the next 16 source rows are
// prefetched while this block is transposed: a miss per line in flight, instead of
// the hardware prefetcher, which does not follow a column walk.
constexpr int64_t kRowsPerPass = 64;

// 16 elements of E bytes as the 32-bit lanes of a vector (zero-extended), and back
// (truncated): narrower elements ride through the same 16 x 16 transpose.
template <int E>
LUCID_TARGET_TRANSPOSE16 [[gnu::always_inline]] inline __m512 load16(const std::byte* p) {
  if constexpr (E == 4) return _mm512_loadu_ps(reinterpret_cast<const float*>(p));
  else if constexpr (E == 2)
    return _mm512_castsi512_ps(_mm512_cvtepu16_epi32(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p))));
  else return _mm512_castsi512_ps(_mm512_cvtepu8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p))));
}
template <int E, bool kStream>
LUCID_TARGET_TRANSPOSE16 [[gnu::always_inline]] inline void store16(std::byte* p, __m512 v) {
  if constexpr (E == 4) {
    if constexpr (kStream) _mm512_stream_ps(reinterpret_cast<float*>(p), v);
    else _mm512_storeu_ps(reinterpret_cast<float*>(p), v);
  } else if constexpr (E == 2) {
    const __m256i w = _mm512_cvtepi32_epi16(_mm512_castps_si512(v));
    if constexpr (kStream) _mm256_stream_si256(reinterpret_cast<__m256i*>(p), w);
    else _mm256_storeu_si256(reinterpret_cast<__m256i*>(p), w);
  } else {
    const __m128i w = _mm512_cvtepi32_epi8(_mm512_castps_si512(v));
    if constexpr (kStream) _mm_stream_si128(reinterpret_cast<__m128i*>(p), w);
    else _mm_storeu_si128(reinterpret_cast<__m128i*>(p), w);
  }
}

template <int E, bool kStream>
LUCID_TARGET_TRANSPOSE16 void transpose_blocks(std::byte* dst, int64_t drs, const std::byte* src, int64_t srs, int64_t rows,
                                   int64_t cols) {
  const int64_t rows16 = rows / 16 * 16, cols16 = cols / 16 * 16;
  for (int64_t r0 = 0; r0 < rows16; r0 += kRowsPerPass) {
    const int64_t r1 = r0 + kRowsPerPass < rows16 ? r0 + kRowsPerPass : rows16;
    for (int64_t c0 = 0; c0 < cols16; c0 += 16) {
      if (c0 + 16 < cols16)
        for (int q = 0; q < 16; ++q)
          for (int64_t b = r0 * E; b < r1 * E; b += 64) _mm_prefetch(reinterpret_cast<const char*>(src + (c0 + 16 + q) * srs + b), _MM_HINT_T0);
      for (int64_t r = r0; r < r1; r += 16) {
        __m512 v[16];
#pragma GCC unroll 16
        for (int q = 0; q < 16; ++q) v[q] = load16<E>(src + (c0 + q) * srs + r * E);
        transpose16(v);
#pragma GCC unroll 16
        for (int q = 0; q < 16; ++q) store16<E, kStream>(dst + (r + q) * drs + c0 * E, v[q]);
      }
    }
  }
  if constexpr (kStream) _mm_sfence();  // streamed stores are weakly ordered: publish them
}

// The same on AVX2 machines, in 8 x 8 blocks of __m256 (x86-64-v3: the 4M-element
// transpose ran an element at a time there, at 0.4x torch).
__attribute__((target("avx2"))) inline void transpose8(__m256* v) {
  __m256 t[8], u[8];
  for (int q = 0; q < 8; q += 2) {
    t[q] = _mm256_unpacklo_ps(v[q], v[q + 1]);
    t[q + 1] = _mm256_unpackhi_ps(v[q], v[q + 1]);
  }
  for (int q = 0; q < 8; q += 4) {
    u[q] = _mm256_shuffle_ps(t[q], t[q + 2], _MM_SHUFFLE(1, 0, 1, 0));
    u[q + 1] = _mm256_shuffle_ps(t[q], t[q + 2], _MM_SHUFFLE(3, 2, 3, 2));
    u[q + 2] = _mm256_shuffle_ps(t[q + 1], t[q + 3], _MM_SHUFFLE(1, 0, 1, 0));
    u[q + 3] = _mm256_shuffle_ps(t[q + 1], t[q + 3], _MM_SHUFFLE(3, 2, 3, 2));
  }
  for (int q = 0; q < 4; ++q) {
    v[q] = _mm256_permute2f128_ps(u[q], u[q + 4], 0x20);
    v[q + 4] = _mm256_permute2f128_ps(u[q], u[q + 4], 0x31);
  }
}

template <bool kStream>
__attribute__((target("avx2"))) void transpose_blocks8(std::byte* dst, int64_t drs, const std::byte* src, int64_t srs,
                                                       int64_t rows, int64_t cols) {
  const int64_t rows8 = rows / 8 * 8, cols8 = cols / 8 * 8;
  for (int64_t r0 = 0; r0 < rows8; r0 += kRowsPerPass) {
    const int64_t r1 = r0 + kRowsPerPass < rows8 ? r0 + kRowsPerPass : rows8;
    for (int64_t c0 = 0; c0 < cols8; c0 += 8) {
      if (c0 + 8 < cols8)
        for (int q = 0; q < 8; ++q)
          for (int64_t b = r0 * 4; b < r1 * 4; b += 64)
            _mm_prefetch(reinterpret_cast<const char*>(src + (c0 + 8 + q) * srs + b), _MM_HINT_T0);
      for (int64_t r = r0; r < r1; r += 8) {
        __m256 v[8];
        for (int q = 0; q < 8; ++q) v[q] = _mm256_loadu_ps(reinterpret_cast<const float*>(src + (c0 + q) * srs) + r);
        transpose8(v);
        for (int q = 0; q < 8; ++q) {
          float* d = reinterpret_cast<float*>(dst + (r + q) * drs) + c0;
          if constexpr (kStream) _mm256_stream_ps(d, v[q]);
          else _mm256_storeu_ps(d, v[q]);
        }
      }
    }
  }
  if constexpr (kStream) _mm_sfence();
}

}  // namespace
#endif

bool transpose_elements(int64_t elem, std::byte* dst, int64_t drs, const std::byte* src, int64_t srs, int64_t rows,
                        int64_t cols, bool stream) {
#if LUCID_TRANSPOSE_X86
  const cpu::Isa isa = cpu::cpu_isa();
  if (elem != 4 && elem != 2 && elem != 1) return false;
  if (isa != cpu::Isa::Avx512 && (isa != cpu::Isa::Avx2 || elem != 4)) return false;
  const int64_t block = isa == cpu::Isa::Avx512 ? 16 : 8;
  // Streamed stores need rows aligned to the stored vector's bytes.
  stream = stream && reinterpret_cast<uintptr_t>(dst) % (block * elem) == 0 && drs % (block * elem) == 0;
  if (isa == cpu::Isa::Avx512) {
    auto run = [&]<int E>() {
      if (stream) transpose_blocks<E, true>(dst, drs, src, srs, rows, cols);
      else transpose_blocks<E, false>(dst, drs, src, srs, rows, cols);
    };
    if (elem == 4) run.template operator()<4>();
    else if (elem == 2) run.template operator()<2>();
    else run.template operator()<1>();
  } else {
    if (stream) transpose_blocks8<true>(dst, drs, src, srs, rows, cols);
    else transpose_blocks8<false>(dst, drs, src, srs, rows, cols);
  }
  // The edges the blocks left: the last rows % block rows and cols % block columns.
  auto one = [&](int64_t r, int64_t c) { std::memcpy(dst + r * drs + c * elem, src + c * srs + r * elem, size_t(elem)); };
  const int64_t rows_b = rows / block * block, cols_b = cols / block * block;
  for (int64_t r = 0; r < rows_b; ++r)
    for (int64_t c = cols_b; c < cols; ++c) one(r, c);
  for (int64_t c = 0; c < cols; ++c)
    for (int64_t r = rows_b; r < rows; ++r) one(r, c);
  return true;
#else
  (void)elem, (void)dst, (void)drs, (void)src, (void)srs, (void)rows, (void)cols, (void)stream;
  return false;
#endif
}

void copy_streaming(std::byte* dst, const std::byte* src, int64_t bytes) {
#if LUCID_TRANSPOSE_X86
  const int64_t head = std::min<int64_t>(bytes, int64_t((16 - reinterpret_cast<uintptr_t>(dst) % 16) % 16));
  std::memcpy(dst, src, size_t(head));
  int64_t i = head;
  for (; i + 16 <= bytes; i += 16)
    _mm_stream_si128(reinterpret_cast<__m128i*>(dst + i), _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i)));
  std::memcpy(dst + i, src + i, size_t(bytes - i));
#else
  std::memcpy(dst, src, size_t(bytes));
#endif
}

void store_fence() {
#if LUCID_TRANSPOSE_X86
  _mm_sfence();
#endif
}

}  // namespace lucid
