// Kernels of backend/cpu/grid_sample.h: one sample point at a time (its coordinates and
// corner weights computed once, then applied to every channel), threaded over points
// in the forward pass and over the batch in the backward pass (whose scatter into
// grad_input stays within one batch element).
#include "backend/cpu/grid_sample.h"

#include <algorithm>
#include <cmath>

#include "core/parallel.h"

namespace lucid::cpu {

namespace {

template <typename T>
T unnormalize(T coord, int64_t size, bool align, T* grad) {
  if (align) {
    *grad = static_cast<T>(size - 1) / 2;
    return ((coord + 1) / 2) * (size - 1);
  }
  *grad = static_cast<T>(size) / 2;
  return ((coord + 1) * size - 1) / 2;
}

// Borders count as out of range for the gradient, as ATen's clip_coordinates_set_grad.
template <typename T>
T clip(T in, int64_t limit, T* grad) {
  if (in <= T(0)) {
    *grad = 0;
    return 0;
  }
  T mx = static_cast<T>(limit - 1);
  if (in >= mx) {
    *grad = 0;
    return mx;
  }
  *grad = 1;
  return in;
}

template <typename T>
T reflect(T in, int64_t twice_low, int64_t twice_high, T* grad) {
  if (twice_low == twice_high) {
    *grad = 0;
    return 0;
  }
  T mn = static_cast<T>(twice_low) / 2;
  T span = static_cast<T>(twice_high - twice_low) / 2;
  in = in - mn;
  int sign = 1;
  if (in < T(0)) {
    sign = -1;
    in = -in;
  }
  T extra = std::fmod(in, span);
  int flips = static_cast<int>(std::floor(in / span));
  if (flips % 2 == 0) {
    *grad = static_cast<T>(sign);
    return extra + mn;
  }
  *grad = static_cast<T>(-sign);
  return span - extra + mn;
}

// grid_sampler_compute_source_index(_set_grad): the source coordinate and d coord / d grid.
template <typename T>
T source_index(T coord, int64_t size, int padding, bool align, T* grad) {
  T g_un, g_clip, g_refl;
  coord = unnormalize(coord, size, align, &g_un);
  if (padding == 1) {
    coord = clip(coord, size, &g_clip);
    *grad = g_un * g_clip;
  } else if (padding == 2) {
    coord = align ? reflect(coord, 0, 2 * (size - 1), &g_refl) : reflect(coord, -1, 2 * size - 1, &g_refl);
    coord = clip(coord, size, &g_clip);
    *grad = g_un * g_refl * g_clip;
  } else {
    *grad = g_un;
  }
  return coord;
}

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

template <typename T>
void grid_sample2d_forward(T* out, const T* input, const T* grid, const GridSampleArgs& a) {
  const int64_t hw = a.h * a.w;
  parallel_for(a.n * a.p, std::max<int64_t>(1, kParallelGrain / (8 * std::max<int64_t>(a.c, 1))),
               [&](int64_t q0, int64_t q1) {
    for (int64_t q = q0; q < q1; ++q) {
      const int64_t n = q / a.p, p = q % a.p;
      T gdummy;
      const T ix = source_index(grid[2 * q], a.w, a.padding, a.align_corners, &gdummy);
      const T iy = source_index(grid[2 * q + 1], a.h, a.padding, a.align_corners, &gdummy);
      const T* in_n = input + n * a.c * hw;
      T* out_n = out + n * a.c * a.p + p;
      if (a.mode == 1) {
        const int64_t x = static_cast<int64_t>(std::nearbyint(ix)), y = static_cast<int64_t>(std::nearbyint(iy));
        const bool ok = inside(y, x, a.h, a.w);
        for (int64_t c = 0; c < a.c; ++c) out_n[c * a.p] = ok ? in_n[c * hw + y * a.w + x] : T(0);
        continue;
      }
      const auto [x0, y0, x1, y1, nw, ne, sw, se, b_nw, b_ne, b_sw, b_se] = corners(ix, iy, a.h, a.w);
      for (int64_t c = 0; c < a.c; ++c) {
        const T* src = in_n + c * hw;
        T v = 0;
        if (b_nw) v += src[y0 * a.w + x0] * nw;
        if (b_ne) v += src[y0 * a.w + x1] * ne;
        if (b_sw) v += src[y1 * a.w + x0] * sw;
        if (b_se) v += src[y1 * a.w + x1] * se;
        out_n[c * a.p] = v;
      }
    }
  });
}

template <typename T>
void grid_sample2d_backward(T* grad_input, T* grad_grid, const T* grad_out, const T* input, const T* grid,
                            const GridSampleArgs& a) {
  const int64_t hw = a.h * a.w;
  parallel_for(a.n, 1, [&](int64_t n0, int64_t n1) {
    for (int64_t n = n0; n < n1; ++n) {
      const T* in_n = input + n * a.c * hw;
      T* gin_n = grad_input + n * a.c * hw;
      const T* go_n = grad_out + n * a.c * a.p;
      for (int64_t p = 0; p < a.p; ++p) {
        const int64_t q = n * a.p + p;
        T mx, my;
        const T ix = source_index(grid[2 * q], a.w, a.padding, a.align_corners, &mx);
        const T iy = source_index(grid[2 * q + 1], a.h, a.padding, a.align_corners, &my);
        if (a.mode == 1) {
          const int64_t x = static_cast<int64_t>(std::nearbyint(ix)), y = static_cast<int64_t>(std::nearbyint(iy));
          if (inside(y, x, a.h, a.w))
            for (int64_t c = 0; c < a.c; ++c) gin_n[c * hw + y * a.w + x] += go_n[c * a.p + p];
          grad_grid[2 * q] = 0;
          grad_grid[2 * q + 1] = 0;
          continue;
        }
        const auto [x0, y0, x1, y1, nw, ne, sw, se, b_nw, b_ne, b_sw, b_se] = corners(ix, iy, a.h, a.w);
        T gx = 0, gy = 0;
        for (int64_t c = 0; c < a.c; ++c) {
          const T go = go_n[c * a.p + p];
          const T* src = in_n + c * hw;
          T* dst = gin_n + c * hw;
          if (b_nw) {
            dst[y0 * a.w + x0] += nw * go;
            const T v = src[y0 * a.w + x0];
            gx -= v * (y1 - iy) * go;
            gy -= v * (x1 - ix) * go;
          }
          if (b_ne) {
            dst[y0 * a.w + x1] += ne * go;
            const T v = src[y0 * a.w + x1];
            gx += v * (y1 - iy) * go;
            gy -= v * (ix - x0) * go;
          }
          if (b_sw) {
            dst[y1 * a.w + x0] += sw * go;
            const T v = src[y1 * a.w + x0];
            gx -= v * (iy - y0) * go;
            gy += v * (x1 - ix) * go;
          }
          if (b_se) {
            dst[y1 * a.w + x1] += se * go;
            const T v = src[y1 * a.w + x1];
            gx += v * (iy - y0) * go;
            gy += v * (ix - x0) * go;
          }
        }
        grad_grid[2 * q] = mx * gx;
        grad_grid[2 * q + 1] = my * gy;
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
