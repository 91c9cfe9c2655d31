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
// bytes (four whole cache lines) per pass, and the next 16 source rows are
// prefetched while this block is transposed: a miss per line in flight, instead of
// the hardware prefetcher, which does not follow a column walk.
constexpr int64_t kRowsPerPass = 64;

template <bool kStream>
LUCID_TARGET_TRANSPOSE16 void transpose_blocks(std::byte* dst, int64_t drs, const std::byte* src, int64_t srs, int64_t rows,
                                   int64_t cols) {
  const int64_t rows16 = rows / 16 * 16, cols16 = cols / 16 * 16;
  for (int64_t r0 = 0; r0 < rows16; r0 += kRowsPerPass) {
    const int64_t r1 = r0 + kRowsPerPass < rows16 ? r0 + kRowsPerPass : rows16;
    for (int64_t c0 = 0; c0 < cols16; c0 += 16) {
      if (c0 + 16 < cols16)
        for (int q = 0; q < 16; ++q)
          for (int64_t b = r0 * 4; b < r1 * 4; b += 64) _mm_prefetch(reinterpret_cast<const char*>(src + (c0 + 16 + q) * srs + b), _MM_HINT_T0);
      for (int64_t r = r0; r < r1; r += 16) {
        __m512 v[16];
#pragma GCC unroll 16
        for (int q = 0; q < 16; ++q) v[q] = _mm512_loadu_ps(reinterpret_cast<const float*>(src + (c0 + q) * srs) + r);
        transpose16(v);
#pragma GCC unroll 16
        for (int q = 0; q < 16; ++q) {
          float* d = reinterpret_cast<float*>(dst + (r + q) * drs) + c0;
          if constexpr (kStream) _mm512_stream_ps(d, v[q]);
          else _mm512_storeu_ps(d, v[q]);
        }
      }
    }
  }
  if constexpr (kStream) _mm_sfence();  // streamed stores are weakly ordered: publish them
}

}  // namespace
#endif

bool transpose_4byte(std::byte* dst, int64_t drs, const std::byte* src, int64_t srs, int64_t rows, int64_t cols,
                     bool stream) {
#if LUCID_TRANSPOSE_X86
  if (cpu::cpu_isa() != cpu::Isa::Avx512) return false;
  // Streamed stores need 64-byte aligned rows.
  stream = stream && reinterpret_cast<uintptr_t>(dst) % 64 == 0 && drs % 64 == 0;
  if (stream) transpose_blocks<true>(dst, drs, src, srs, rows, cols);
  else transpose_blocks<false>(dst, drs, src, srs, rows, cols);
  // The edges the 16 x 16 blocks left: the last rows % 16 rows and cols % 16 columns.
  auto one = [&](int64_t r, int64_t c) { std::memcpy(dst + r * drs + c * 4, src + c * srs + r * 4, 4); };
  const int64_t rows16 = rows / 16 * 16, cols16 = cols / 16 * 16;
  for (int64_t r = 0; r < rows16; ++r)
    for (int64_t c = cols16; c < cols; ++c) one(r, c);
  for (int64_t c = 0; c < cols; ++c)
    for (int64_t r = rows16; r < rows; ++r) one(r, c);
  return true;
#else
  (void)dst, (void)drs, (void)src, (void)srs, (void)rows, (void)cols, (void)stream;
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
