// Kernels of backend/cpu/grid_sample.h: blocks of sample points (their coordinates and
// corner weights computed once, then applied channel by channel), threaded over blocks
// in the forward pass and over the batch in the backward pass (whose scatter into
// grad_input stays within one batch element).
#include "backend/cpu/grid_sample.h"

#include <algorithm>
#include <cmath>

#include <type_traits>

#include "core/isa.h"
#include "core/parallel.h"

#if LUCID_X86_DISPATCH
#include <immintrin.h>
#endif

namespace lucid::cpu {

namespace {

using backend::source_index;

inline bool inside(int64_t y, int64_t x, int64_t h, int64_t w) { return y >= 0 && y < h && x >= 0 && x < w; }

// The four pixels around (ix, iy), their bilinear weights, and which are inside the
// image: shared by the forward and the backward kernels.
template <typename T>
struct Corners {
  int64_t x0, y0, x1, y1;
  T nw, ne, sw, se;
  bool b_nw, b_ne, b_sw, b_se;
};

template <typename T>
Corners<T> corners(T ix, T iy, int64_t h, int64_t w) {
  const int64_t x0 = static_cast<int64_t>(std::floor(ix)), y0 = static_cast<int64_t>(std::floor(iy));
  const int64_t x1 = x0 + 1, y1 = y0 + 1;
  return {x0, y0, x1, y1,
          (x1 - ix) * (y1 - iy), (ix - x0) * (y1 - iy), (x1 - ix) * (iy - y0), (ix - x0) * (iy - y0),
          inside(y0, x0, h, w), inside(y0, x1, h, w), inside(y1, x0, h, w), inside(y1, x1, h, w)};
}

}  // namespace

namespace {

// Points are handled kBlock at a time: their coordinates and corner weights first, then
// channel by channel, so that each channel's plane is read (and, backward, written) while
// it is in cache and the output row is written contiguously. (One point at a time through
// every channel touched a plane 16 KiB apart per channel: 2.4x torch's forward time.)
constexpr int64_t kBlock = 128;

// One block's points: nearest (the pixel's offset in the plane, or -1 outside) or
// bilinear, the corners as four index / mask / weight arrays (an outside corner at
// index 0, masked off, so they vectorise as gathers), with d source / d grid and the
// weights' derivatives for the backward pass (a few stores per point, next to the
// channels' work: the forward pass computes them too rather than keep two layouts).
template <typename T>
struct Points {
  using M = std::conditional_t<sizeof(T) == 4, int32_t, int64_t>;  // a mask lane per value lane
  int64_t len = 0;
  int64_t pixel[kBlock];
  T mx[kBlock], my[kBlock];
  M at[4][kBlock], on[4][kBlock];
  // Per corner: its weight, and d weight / d ix, d iy (the backward pass's grid gradient).
  T weight[4][kBlock], dx[4][kBlock], dy[4][kBlock];

  Points(const T* grid, int64_t len_, const GridSampleArgs& a) : len(len_) {
    for (int64_t j = 0; j < len; ++j) {
      const T ix = source_index(grid[2 * j], a.w, a.padding, a.align_corners, &mx[j]);
      const T iy = source_index(grid[2 * j + 1], a.h, a.padding, a.align_corners, &my[j]);
      if (a.mode == 1) {
        const int64_t x = static_cast<int64_t>(std::nearbyint(ix)), y = static_cast<int64_t>(std::nearbyint(iy));
        pixel[j] = inside(y, x, a.h, a.w) ? y * a.w + x : -1;
        continue;
      }
      const Corners<T> k = corners(ix, iy, a.h, a.w);
      const int64_t offset[4] = {k.y0 * a.w + k.x0, k.y0 * a.w + k.x1, k.y1 * a.w + k.x0, k.y1 * a.w + k.x1};
      const bool in[4] = {k.b_nw, k.b_ne, k.b_sw, k.b_se};
      const T w[4] = {k.nw, k.ne, k.sw, k.se};
      const T ddx[4] = {-(k.y1 - iy), k.y1 - iy, -(iy - k.y0), iy - k.y0};
      const T ddy[4] = {-(k.x1 - ix), -(ix - k.x0), k.x1 - ix, ix - k.x0};
      for (int q = 0; q < 4; ++q) {
        at[q][j] = in[q] ? M(offset[q]) : M(0);
        on[q][j] = in[q] ? M(-1) : M(0);
        weight[q][j] = w[q];
        dx[q][j] = ddx[q];
        dy[q][j] = ddy[q];
      }
    }
  }
};

// dst[j] = the masked, weighted sum of the four corners of point j in one plane, from
// j = j0 on.
template <typename T, typename M>
void bilinear_plane_loop(T* dst, const T* src, const M (*at)[kBlock], const M (*on)[kBlock],
                         const T (*weight)[kBlock], int64_t j0, int64_t len) {
  for (int64_t j = j0; j < len; ++j) {
    T v = 0;
    for (int q = 0; q < 4; ++q)
      if (on[q][j]) v += src[at[q][j]] * weight[q][j];
    dst[j] = v;
  }
}

#if LUCID_X86_DISPATCH
// The same, 16 points at a time with masked gathers (GCC does not vectorise the loop
// into gathers itself). Masked-off lanes leave the sum as it is, as the loop does.
__attribute__((target("avx512f"))) void bilinear_plane_avx512(float* dst, const float* src,
                                                               const int32_t (*at)[kBlock],
                                                               const int32_t (*on)[kBlock],
                                                               const float (*weight)[kBlock], int64_t len) {
  int64_t j = 0;
  for (; j + 16 <= len; j += 16) {
    __m512 v = _mm512_setzero_ps();
    for (int q = 0; q < 4; ++q) {
      const __m512i on_q = _mm512_loadu_si512(on[q] + j);
      const __mmask16 m = _mm512_test_epi32_mask(on_q, on_q);
      const __m512 c = _mm512_mask_i32gather_ps(_mm512_setzero_ps(), m, _mm512_loadu_si512(at[q] + j), src, 4);
      v = _mm512_mask_add_ps(v, m, v, _mm512_mul_ps(c, _mm512_loadu_ps(weight[q] + j)));
    }
    _mm512_storeu_ps(dst + j, v);
  }
  bilinear_plane_loop(dst, src, at, on, weight, j, len);
}
#endif

template <typename T, typename M>
void bilinear_plane(T* dst, const T* src, const M (*at)[kBlock], const M (*on)[kBlock], const T (*weight)[kBlock],
                    int64_t len) {
#if LUCID_X86_DISPATCH
  if constexpr (std::is_same_v<T, float>) {
    static const bool avx512 = cpu_isa() == Isa::Avx512;
    if (avx512) return bilinear_plane_avx512(dst, src, at, on, weight, len);
  }
#endif
  bilinear_plane_loop(dst, src, at, on, weight, 0, len);
}

// gx[j] += go[j] * (the sum over in-range corners of value * dx), gy likewise, for
// one channel's plane; from j = j0 on.
template <typename T>
void grid_grad_plane_loop(T* gx, T* gy, const T* go, const T* src, const Points<T>& pts, int64_t j0, int64_t len) {
  for (int64_t j = j0; j < len; ++j) {
    T sx = 0, sy = 0;
    for (int q = 0; q < 4; ++q)
      if (pts.on[q][j]) {
        const T v = src[pts.at[q][j]];
        sx += v * pts.dx[q][j];
        sy += v * pts.dy[q][j];
      }
    gx[j] += sx * go[j];
    gy[j] += sy * go[j];
  }
}

#if LUCID_X86_DISPATCH
__attribute__((target("avx512f"))) void grid_grad_plane_avx512(float* gx, float* gy, const float* go,
                                                                const float* src, const Points<float>& pts,
                                                                int64_t len) {
  int64_t j = 0;
  for (; j + 16 <= len; j += 16) {
    __m512 sx = _mm512_setzero_ps(), sy = _mm512_setzero_ps();
    for (int q = 0; q < 4; ++q) {
      const __m512i on_q = _mm512_loadu_si512(pts.on[q] + j);
      const __mmask16 m = _mm512_test_epi32_mask(on_q, on_q);
      const __m512 v = _mm512_mask_i32gather_ps(_mm512_setzero_ps(), m, _mm512_loadu_si512(pts.at[q] + j), src, 4);
      sx = _mm512_mask_add_ps(sx, m, sx, _mm512_mul_ps(v, _mm512_loadu_ps(pts.dx[q] + j)));
      sy = _mm512_mask_add_ps(sy, m, sy, _mm512_mul_ps(v, _mm512_loadu_ps(pts.dy[q] + j)));
    }
    const __m512 g = _mm512_loadu_ps(go + j);
    _mm512_storeu_ps(gx + j, _mm512_add_ps(_mm512_loadu_ps(gx + j), _mm512_mul_ps(sx, g)));
    _mm512_storeu_ps(gy + j, _mm512_add_ps(_mm512_loadu_ps(gy + j), _mm512_mul_ps(sy, g)));
  }
  grid_grad_plane_loop(gx, gy, go, src, pts, j, len);
}
#endif

template <typename T>
void grid_grad_plane(T* gx, T* gy, const T* go, const T* src, const Points<T>& pts, int64_t len) {
#if LUCID_X86_DISPATCH
  if constexpr (std::is_same_v<T, float>) {
    static const bool avx512 = cpu_isa() == Isa::Avx512;
    if (avx512) return grid_grad_plane_avx512(gx, gy, go, src, pts, len);
  }
#endif
  grid_grad_plane_loop(gx, gy, go, src, pts, 0, len);
}

}  // namespace

template <typename T>
void grid_sample2d_forward(T* out, const T* input, const T* grid, const GridSampleArgs& a) {
  const int64_t hw = a.h * a.w, blocks = (a.p + kBlock - 1) / kBlock;
  parallel_for(a.n * blocks, std::max<int64_t>(1, kParallelGrain / (8 * kBlock * std::max<int64_t>(a.c, 1))),
               [&](int64_t i0, int64_t i1) {
    for (int64_t item = i0; item < i1; ++item) {
      const int64_t n = item / blocks, p0 = item % blocks * kBlock;
      const Points<T> pts(grid + 2 * (n * a.p + p0), std::min(kBlock, a.p - p0), a);
      for (int64_t c = 0; c < a.c; ++c) {
        const T* src = input + (n * a.c + c) * hw;
        T* dst = out + (n * a.c + c) * a.p + p0;
        if (a.mode == 1) {
          for (int64_t j = 0; j < pts.len; ++j) dst[j] = pts.pixel[j] >= 0 ? src[pts.pixel[j]] : T(0);
          continue;
        }
        bilinear_plane(dst, src, pts.at, pts.on, pts.weight, pts.len);
      }
    }
  });
}

template <typename T>
void grid_sample2d_backward(T* grad_input, T* grad_grid, const T* grad_out, const T* input, const T* grid,
                            const GridSampleArgs& a) {
  const int64_t hw = a.h * a.w;
  // Threads take whole batch elements: the scatter into grad_input stays in one.
  parallel_for(a.n, 1, [&](int64_t n0, int64_t n1) {
    for (int64_t n = n0; n < n1; ++n) {
      for (int64_t p0 = 0; p0 < a.p; p0 += kBlock) {
        const Points<T> pts(grid + 2 * (n * a.p + p0), std::min(kBlock, a.p - p0), a);
        T gx[kBlock] = {}, gy[kBlock] = {};
        for (int64_t c = 0; c < a.c; ++c) {
          const T* go = grad_out + (n * a.c + c) * a.p + p0;
          const T* src = input + (n * a.c + c) * hw;
          T* dst = grad_input + (n * a.c + c) * hw;
          if (a.mode == 1) {
            for (int64_t j = 0; j < pts.len; ++j)
              if (pts.pixel[j] >= 0) dst[pts.pixel[j]] += go[j];
            continue;
          }
          // grad_input: each corner gets its weight times the output's gradient (one at
          // a time: points may share corners). The grid's gradient: the corners' values
          // against d weight / d (ix, iy), summed over channels.
          for (int64_t j = 0; j < pts.len; ++j)
            for (int q = 0; q < 4; ++q)
              if (pts.on[q][j]) dst[pts.at[q][j]] += pts.weight[q][j] * go[j];
          grid_grad_plane(gx, gy, go, src, pts, pts.len);
        }
        T* gg = grad_grid + 2 * (n * a.p + p0);
        for (int64_t j = 0; j < pts.len; ++j) {
          gg[2 * j] = a.mode == 1 ? T(0) : pts.mx[j] * gx[j];
          gg[2 * j + 1] = a.mode == 1 ? T(0) : pts.my[j] * gy[j];
        }
      }
    }
  });
}

template void grid_sample2d_forward<float>(float*, const float*, const float*, const GridSampleArgs&);
template void grid_sample2d_forward<double>(double*, const double*, const double*, const GridSampleArgs&);
template void grid_sample2d_backward<float>(float*, float*, const float*, const float*, const float*,
                                            const GridSampleArgs&);
template void grid_sample2d_backward<double>(double*, double*, const double*, const double*, const double*,
                                             const GridSampleArgs&);

}  // namespace lucid::cpu
