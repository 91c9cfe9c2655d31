// Note [Winograd convolution]
// A 3x3, stride-1, undilated 2-d convolution computes each 2x2 block of outputs
// (a "tile") from the 4x4 input patch under it with Winograd's F(2x2, 3x3) (Lavin &
// Gray, "Fast Algorithms for Convolutional Neural Networks", 2015):
//   Y = A^T [ (G g G^T) . (B^T d B) ] A
// with g the 3x3 window, d the patch, . the element-wise product, and
//   B^T = [1 0 -1 0; 0 1 1 0; 0 -1 1 0; 0 1 0 -1], G = [1 0 0; .5 .5 .5; .5 -.5 .5; 0 0 1],
//   A^T = [1 1 1 0; 0 1 -1 -1].
// Summed over input channels, the element-wise products become 16 independent
// matrix products per group, one per patch position xi:
//   M[xi] [Cout, tiles] = U[xi] [Cout, Cin] @ V[xi] [Cin, tiles]
// 16 multiply-adds per 4 outputs where the direct product (conv_direct.cpp) spends
// 36, for a pass over the input (B^T d B) and one over the output (A^T m A), both
// additions only.
// What makes it pay (a first version through own_sgemm measured no faster than
// the direct product at 64 channels, 56x56: its transforms took ~25% and packing
// V and U ~13%):
// - the transforms run 16 tiles at a time in vector lanes (the patch columns
//   de-interleaved by permutes), and write V straight in the product kernel's packed
//   B layout (panels of kTileCols tiles, channel by channel), U once per call in its
//   packed A layout: the products are bare kernel calls (sgemm_tile), no packing;
// - an image's tiles go through in blocks sized so that V and M of a block stay in
//   the thread's L2 between the three passes, and (sample, block) pieces are the
//   unit of threading, so any batch fills any number of threads.
// Rounding: the transforms add at most 4 terms with coefficients 1 and 1/2, so the
// results stay within a few ULP of the direct sum (checked against float64 in
// tests/python/test_conv_winograd.py). Non-finite inputs would not: inf - inf in a
// transform makes NaN where the direct sum has inf, so weights with one skip
// Winograd, and a sample in which the input transform meets one is recomputed by the
// direct product.
#include "backend/cpu/conv_winograd.h"

#include <algorithm>
#include <cmath>
#include <atomic>
#include <cstdint>
#include <vector>

#include "backend/cpu/conv_direct.h"
#include "backend/cpu/conv_scratch.h"
#include "backend/cpu/sgemm.h"
#include "core/isa.h"
#include "core/parallel.h"

#if LUCID_X86_DISPATCH
#include <immintrin.h>
#endif

namespace lucid::cpu {

namespace {

// Below this many channels a group on either side the 16 products are too thin to
// run near the kernel's speed (the direct product's depth is 9x the input channels).
constexpr int64_t kMinChannels = 32;
// V and M of one block, at most (floats): the thread's L2 holds them between passes.
constexpr int64_t kBlockFloats = int64_t(320) << 10;

struct Plan {
  int64_t cbg, csg, csg_pad;  // channels a group: in, out, out rounded up to kTileRows
  int64_t trows, tcols;       // tile rows and columns: ceil(out / 2)
  int64_t block;              // tiles a block: a multiple of kTileCols
  int64_t blocks;             // blocks an image
  int64_t tiles() const { return trows * tcols; }
  int64_t panels() const { return block / kTileCols; }
  // V[xi] and M[xi] are this far apart: their size plus one cache line, so that the
  // 16 of them written (V) or read (M) together do not all map to one L1 set (a
  // block's V[xi] is often a multiple of 4 KiB: 3 panels of 64 channels is 36 KiB).
  int64_t v_step() const { return panels() * cbg * kTileCols + 16; }
  int64_t m_step() const { return csg_pad * block + 16; }
  int64_t scratch() const { return 16 * (v_step() + m_step()); }
};

Plan plan_of(const ConvGeom& g, int64_t c_big, int64_t c_small) {
  Plan p{};
  p.cbg = c_big / g.groups;
  p.csg = c_small / g.groups;
  p.csg_pad = (p.csg + kTileRows - 1) / kTileRows * kTileRows;
  p.trows = (g.small[1] + 1) / 2;
  p.tcols = (g.small[2] + 1) / 2;
  const int64_t all = (p.tiles() + kTileCols - 1) / kTileCols * kTileCols;
  p.block = std::clamp<int64_t>(kBlockFloats / (16 * (p.cbg + p.csg_pad)) / kTileCols * kTileCols, kTileCols, all);
  p.blocks = (p.tiles() + p.block - 1) / p.block;
  return p;
}

#if LUCID_X86_DISPATCH

// U [G][16][csg_pad / kTileRows][cbg][kTileRows] = G g G^T of w [G * csg, cbg, 3, 3]:
// each (group, xi) an A operand packed for sgemm_tile (rows past csg are zeros).
// Empty when a value of U is not finite (an inf or NaN weight, or sums past the float
// range): those convolutions go through the direct product.
std::vector<float> transform_weights(const float* w, int64_t groups, const Plan& p) {
  std::vector<float> u(size_t(groups * 16 * p.csg_pad * p.cbg), 0.0f);
  for (int64_t gi = 0; gi < groups; ++gi)
    for (int64_t o = 0; o < p.csg; ++o)
      for (int64_t i = 0; i < p.cbg; ++i) {
        const float* k = w + ((gi * p.csg + o) * p.cbg + i) * 9;
        float gk[4][3];  // G g
        for (int c = 0; c < 3; ++c) {
          gk[0][c] = k[c];
          gk[1][c] = 0.5f * (k[c] + k[3 + c] + k[6 + c]);
          gk[2][c] = 0.5f * (k[c] - k[3 + c] + k[6 + c]);
          gk[3][c] = k[6 + c];
        }
        for (int r = 0; r < 4; ++r) {  // (G g) G^T
          const float row[4] = {gk[r][0], 0.5f * (gk[r][0] + gk[r][1] + gk[r][2]),
                                0.5f * (gk[r][0] - gk[r][1] + gk[r][2]), gk[r][2]};
          for (int c = 0; c < 4; ++c) {
            if (!std::isfinite(row[c])) return {};
            const int64_t xi = r * 4 + c;
            u[size_t((((gi * 16 + xi) * (p.csg_pad / kTileRows) + o / kTileRows) * p.cbg + i) * kTileRows +
                     o % kTileRows)] = row[c];
          }
        }
      }
  return u;
}

// The first count of 16 lanes.
inline __attribute__((always_inline)) __mmask16 lanes(int64_t count) {
  return count >= 16 ? __mmask16(0xFFFF) : count <= 0 ? __mmask16(0) : __mmask16((1u << count) - 1);
}

// Tiles [t, t + count) of the block, one value each in x's lanes, into V[xi] row c:
// tile t sits in panel t / kTileCols at column t % kTileCols; the lanes may straddle
// two panels.
LUCID_TARGET_AVX512 inline __attribute__((always_inline)) void store_tiles(float* v_row, int64_t panel_step, int64_t t, int64_t count, __m512 x) {
  const int64_t q = t / kTileCols, l = t % kTileCols, first = std::min(count, kTileCols - l);
  _mm512_mask_storeu_ps(v_row + q * panel_step + l, lanes(first), x);
  if (first < count)  // lanes [first, count) go to the next panel's columns 0..
    _mm512_mask_storeu_ps(v_row + (q + 1) * panel_step - first, __mmask16(lanes(count) & ~lanes(first)), x);
}

// 16 floats of input row iy of plane img [H, W] at padded columns x .. x + 15 (input
// columns x - pad ..), zeros outside the image.
LUCID_TARGET_AVX512 inline __attribute__((always_inline)) __m512 padded_load(const float* img, int64_t iy, int64_t x, const ConvGeom& g) {
  const int64_t first = x - g.pad[2];  // input column of lane 0
  if (iy < 0 || iy >= g.big[1] || first >= g.big[2] || first + 16 <= 0) return _mm512_setzero_ps();
  const __mmask16 mask = __mmask16(lanes(g.big[2] - first) & ~lanes(std::max<int64_t>(0, -first)));
  // (the address of lane 0 may lie before the row: integer arithmetic, masked lanes
  // are not read)
  const auto at = reinterpret_cast<std::uintptr_t>(img) + std::uintptr_t((iy * g.big[2] + first) * 4);
  return _mm512_maskz_loadu_ps(mask, reinterpret_cast<const float*>(at));
}

// The even and odd padded columns x, x + 2, ..., x + 30 and x + 1, ..., x + 31 of
// the 4 rows of B^T d (the patch rows' transform) for the tile row starting at input
// row iy: e[k], o[k]. Sets bits of bad where an input was an inf or a NaN.
LUCID_TARGET_AVX512 inline __attribute__((always_inline)) void row_transform(const float* img, int64_t iy, int64_t x,
                                                                            const ConvGeom& g, __m512 e[4], __m512 o[4],
                                                                            __mmask16& bad) {
  const __m512i even = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
  const __m512i odd = _mm512_setr_epi32(1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31);
  __m512 half[2][4];
  for (int h = 0; h < 2; ++h) {
    const __m512 d0 = padded_load(img, iy, x + 16 * h, g), d1 = padded_load(img, iy + 1, x + 16 * h, g);
    const __m512 d2 = padded_load(img, iy + 2, x + 16 * h, g), d3 = padded_load(img, iy + 3, x + 16 * h, g);
    half[h][0] = _mm512_sub_ps(d0, d2);
    half[h][1] = _mm512_add_ps(d1, d2);
    half[h][2] = _mm512_sub_ps(d2, d1);
    half[h][3] = _mm512_sub_ps(d1, d3);
    // (0x99: NaN or inf; a non-finite input reaches row 0, 1 or 3)
    bad |= _mm512_fpclass_ps_mask(half[h][0], 0x99) | _mm512_fpclass_ps_mask(half[h][1], 0x99) |
           _mm512_fpclass_ps_mask(half[h][3], 0x99);
  }
  for (int k = 0; k < 4; ++k) {
    e[k] = _mm512_permutex2var_ps(half[0][k], even, half[1][k]);
    o[k] = _mm512_permutex2var_ps(half[0][k], odd, half[1][k]);
  }
}

// V of the block's tiles [t0, t0 + count) from plane img (one input channel, c):
// B^T d over the patch's 4 rows (read from the image, the padding as masked lanes),
// then the same over its columns, 16 tiles at a time, all in registers: tile j's
// columns are padded columns 2j .. 2j + 3, so the 16 tiles from j0 need the even and
// odd columns from 2 j0 (s0, s1) and the same shifted by one lane, whose last lane
// comes from the next 16 tiles' (s2, s3). (Storing the rows' transform and reading
// it back at a 2-column offset stalled every load on store forwarding.) Returns
// false when the plane's rows held an inf or a NaN.
LUCID_TARGET_AVX512 bool input_transform(const float* img, int64_t c, int64_t t0, int64_t count, const ConvGeom& g,
                                         const Plan& p, float* v) {
  const int64_t xi_step = p.v_step(), panel_step = p.cbg * kTileCols;
  // The next channel's rows under these tiles, fetched while this one's are
  // transformed: a block reads a few rows of each plane, planes ~H W floats apart,
  // and the hardware prefetchers stop at every jump (the loads stalled ~25% of the
  // transform's time).
  if (c + 1 < p.cbg) {
    const int64_t y0 = std::max<int64_t>(0, 2 * (t0 / p.tcols) - g.pad[1]);
    const int64_t y1 = std::min<int64_t>(g.big[1], 2 * ((t0 + count - 1) / p.tcols) + 4 - g.pad[1]);
    const char* next = reinterpret_cast<const char*>(img + g.big_numel());
    for (int64_t b = y0 * g.big[2] * 4; b < y1 * g.big[2] * 4; b += 64) _mm_prefetch(next + b, _MM_HINT_T0);
  }
  __mmask16 bad = 0;
  for (int64_t r = t0 / p.tcols; r * p.tcols < t0 + count; ++r) {
    const int64_t ja = std::max<int64_t>(0, t0 - r * p.tcols), jb = std::min(p.tcols, t0 + count - r * p.tcols);
    const int64_t iy = 2 * r - g.pad[1];
    __m512 e[4], o[4], e_next[4], o_next[4];
    row_transform(img, iy, 2 * ja, g, e, o, bad);
    for (int64_t j0 = ja; j0 < jb; j0 += 16) {
      const int64_t n = std::min<int64_t>(16, jb - j0), t = r * p.tcols + j0 - t0;
      row_transform(img, iy, 2 * j0 + 32, g, e_next, o_next, bad);
      for (int k = 0; k < 4; ++k) {
        const __m512 s0 = e[k], s1 = o[k];
        const __m512 s2 = _mm512_castsi512_ps(_mm512_maskz_alignr_epi32(__mmask16(0xffff), _mm512_castps_si512(e_next[k]), _mm512_castps_si512(s0), 1));
        const __m512 s3 = _mm512_castsi512_ps(_mm512_maskz_alignr_epi32(__mmask16(0xffff), _mm512_castps_si512(o_next[k]), _mm512_castps_si512(s1), 1));
        float* row = v + (4 * k) * xi_step + c * kTileCols;
        store_tiles(row, panel_step, t, n, _mm512_sub_ps(s0, s2));
        store_tiles(row + xi_step, panel_step, t, n, _mm512_add_ps(s1, s2));
        store_tiles(row + 2 * xi_step, panel_step, t, n, _mm512_sub_ps(s2, s1));
        store_tiles(row + 3 * xi_step, panel_step, t, n, _mm512_sub_ps(s1, s3));
        e[k] = e_next[k];
        o[k] = o_next[k];
      }
    }
  }
  return bad == 0;
}

// Output plane out [H, W] of one output channel at the block's tiles [t0, t0 + count)
// from m (M[0][o]; M[xi][o] is xi * xi_step further): A^T m A (+ bias), 16 tiles at
// a time, the two columns of each tile interleaved back by permutes.
LUCID_TARGET_AVX512 void output_transform(const float* m, int64_t xi_step, int64_t t0, int64_t count, float bias,
                                          const ConvGeom& g, const Plan& p, float* out) {
  const int64_t H = g.small[1], W = g.small[2];
  const __m512i first = _mm512_setr_epi32(0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23);
  const __m512i second = _mm512_setr_epi32(8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31);
  const __m512 vb = _mm512_set1_ps(bias);
  for (int64_t r = t0 / p.tcols; r * p.tcols < t0 + count; ++r) {
    const int64_t ja = std::max<int64_t>(0, t0 - r * p.tcols), jb = std::min(p.tcols, t0 + count - r * p.tcols);
    for (int64_t j0 = ja; j0 < jb; j0 += 16) {
      const int64_t n = std::min<int64_t>(16, jb - j0), t = r * p.tcols + j0 - t0;
      const __mmask16 mask = lanes(n);
      __m512 a[4], b[4];
      for (int l = 0; l < 4; ++l) {
        const __m512 m0 = _mm512_maskz_loadu_ps(mask, m + l * xi_step + t);
        const __m512 m1 = _mm512_maskz_loadu_ps(mask, m + (4 + l) * xi_step + t);
        const __m512 m2 = _mm512_maskz_loadu_ps(mask, m + (8 + l) * xi_step + t);
        const __m512 m3 = _mm512_maskz_loadu_ps(mask, m + (12 + l) * xi_step + t);
        a[l] = _mm512_add_ps(_mm512_add_ps(m0, m1), m2);
        b[l] = _mm512_sub_ps(_mm512_sub_ps(m1, m2), m3);
      }
      // Output columns 2 j0 .. 2 j0 + 2n, within the row.
      const int64_t cols = std::min(2 * n, W - 2 * j0);
      const __mmask16 lo = lanes(cols), hi = lanes(std::max<int64_t>(0, cols - 16));
      for (int half = 0; half < 2 && 2 * r + half < H; ++half) {
        const __m512* s = half ? b : a;
        const __m512 e = _mm512_add_ps(_mm512_add_ps(_mm512_add_ps(s[0], s[1]), s[2]), vb);
        const __m512 o = _mm512_add_ps(_mm512_sub_ps(_mm512_sub_ps(s[1], s[2]), s[3]), vb);
        float* dst = out + (2 * r + half) * W + 2 * j0;
        _mm512_mask_storeu_ps(dst, lo, _mm512_permutex2var_ps(e, first, o));
        _mm512_mask_storeu_ps(dst + 16, hi, _mm512_permutex2var_ps(e, second, o));
      }
    }
  }
}

// One piece: the tiles of block blk of one (sample, group). Returns false when its
// input held an inf or a NaN (its output is then recomputed by the caller).
bool winograd_piece(const float* img, const float* u, const float* bias, float* out, int64_t blk, const ConvGeom& g,
                    const Plan& p, float* scratch) {
  const int64_t t0 = blk * p.block, count = std::min(p.block, p.tiles() - t0);
  const int64_t panels = (count + kTileCols - 1) / kTileCols;
  float* V = scratch;                 // [16][panels()][cbg][kTileCols]
  float* M = V + 16 * p.v_step();     // [16][csg_pad][block], m_step() apart
  const int64_t xi_step = p.v_step(), plane = g.big_numel();
  // The last panel's columns past the block's tiles: zeros, not stale floats (which
  // could be denormals, slow in the products).
  if (count % kTileCols)
    for (int64_t xi = 0; xi < 16; ++xi) {
      float* last = V + xi * xi_step + (panels - 1) * p.cbg * kTileCols;
      std::fill(last, last + p.cbg * kTileCols, 0.0f);
    }
  for (int64_t c = 0; c < p.cbg; ++c)
    if (!input_transform(img + c * plane, c, t0, count, g, p, V)) return false;
  const int64_t row_panels = p.csg_pad / kTileRows;
  for (int64_t xi = 0; xi < 16; ++xi)
    for (int64_t q = 0; q < panels; ++q)
      for (int64_t i = 0; i < row_panels; ++i)
        sgemm_tile(p.cbg, u + (xi * row_panels + i) * p.cbg * kTileRows, V + xi * xi_step + q * p.cbg * kTileCols,
                   M + xi * p.m_step() + i * kTileRows * p.block + q * kTileCols, p.block);
  const int64_t L = g.small_numel();
  for (int64_t o = 0; o < p.csg; ++o)
    output_transform(M + o * p.block, p.m_step(), t0, count, bias ? bias[o] : 0.0f, g, p, out + o * L);
  return true;
}

#endif  // LUCID_X86_DISPATCH

}  // namespace

bool conv_winograd_suits(const ConvGeom& g, int64_t c_big, int64_t c_small) {
  if (!sgemm_tile_suits()) return false;
  if (g.big[0] != 1 || g.small[0] != 1 || g.k[0] != 1 || g.pad[0] != 0 || g.k[1] != 3 || g.k[2] != 3) return false;
  for (int d = 1; d < 3; ++d)
    if (g.stride[d] != 1 || g.dil[d] != 1 || g.pad[d] < 0 || g.small[d] < 1) return false;
  const Plan p = plan_of(g, c_big, c_small);
  return p.cbg >= kMinChannels && p.csg >= kMinChannels && p.tiles() >= kTileCols;
}

void conv_winograd_forward(const float* big, const float* w, const float* bias, float* small, int64_t n,
                           int64_t c_big, int64_t c_small, const ConvGeom& g) {
#if LUCID_X86_DISPATCH
  const Plan p = plan_of(g, c_big, c_small);
  const int64_t G = g.groups, B = g.big_numel(), L = g.small_numel();
  const std::vector<float> u = transform_weights(w, G, p);
  if (u.empty()) return conv_direct_forward(big, w, bias, small, n, c_big, c_small, g);
  const int64_t pieces = n * G * p.blocks, u_step = 16 * p.csg_pad * p.cbg;
  std::vector<std::atomic<bool>> non_finite(static_cast<size_t>(n));
  (void)get_num_threads();  // (sets the pool's size outside any parallel region: conv_scratch.h)
  parallel_for(pieces, 1, [&](int64_t i0, int64_t i1) {
    Buffer<float> scratch(p.scratch());
    for (int64_t i = i0; i < i1; ++i) {
      const int64_t b = i / (G * p.blocks), gi = i / p.blocks % G, blk = i % p.blocks;
      if (non_finite[size_t(b)].load(std::memory_order_relaxed)) continue;
      if (!winograd_piece(big + (b * c_big + gi * p.cbg) * B, u.data() + gi * u_step,
                          bias ? bias + gi * p.csg : nullptr, small + (b * c_small + gi * p.csg) * L, blk, g, p,
                          scratch.data()))
        non_finite[size_t(b)].store(true, std::memory_order_relaxed);
    }
  });
  for (int64_t b = 0; b < n; ++b)
    if (non_finite[size_t(b)].load())
      conv_direct_forward(big + b * c_big * B, w, bias, small + b * c_small * L, 1, c_big, c_small, g);
#else  // (conv_winograd_suits is false without the AVX-512 tile)
  conv_direct_forward(big, w, bias, small, n, c_big, c_small, g);
#endif
}

}  // namespace lucid::cpu
