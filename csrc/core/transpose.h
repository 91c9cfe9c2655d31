// A transposing copy of 1-, 2- or 4-byte elements, the inner loop of every copy or
// elementwise op that reads one operand across its memory order (x.t().contiguous(),
// x.t() + y): 16 x 16 blocks transposed in AVX-512 registers (narrower elements
// zero-extended to 32-bit lanes and truncated back: the same transpose), the next
// block's source rows prefetched, and large outputs written with streaming stores
// (which skip the read a cache fills a line with before a write).
#pragma once

#include <cstddef>
#include <cstdint>

namespace lucid {

// dst[r][c] = src[c][r] for r < rows, c < cols, elements of `elem` bytes, where dst's
// row r starts at dst + r * dst_row_bytes and src's row c at src + c * src_row_bytes
// (both rows contiguous). `stream`: write around the caches (an output too large to
// be read back from them). Returns false, having written nothing, when there is no
// vector form: elements of other sizes, a CPU without AVX-512 (AVX2: 4-byte elements
// only, in 8 x 8 blocks), or without AVX2; the caller then runs its own loop.
bool transpose_elements(int64_t elem, std::byte* dst, int64_t dst_row_bytes, const std::byte* src,
                        int64_t src_row_bytes, int64_t rows, int64_t cols, bool stream);

// dst[0, bytes) = src[0, bytes), the 16-byte aligned part of dst written with
// streaming stores (SSE2, every x86-64; elsewhere memcpy). Streamed stores are
// weakly ordered: call store_fence() before another thread may read dst.
void copy_streaming(std::byte* dst, const std::byte* src, int64_t bytes);
void store_fence();

// Outputs at least this large are streamed (they would evict everything the caches
// hold, and the write-allocate reads of a scattered output cost as much as the data).
inline constexpr int64_t kStreamingStoreBytes = int64_t(8) << 20;

}  // namespace lucid
