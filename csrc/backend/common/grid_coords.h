// grid_sample's geometry and coordinate formulas (ATen/native/GridSampler.h), shared by
// the CPU and CUDA kernels so both devices sample the same points: a grid value's source
// coordinate under each padding mode, and d coordinate / d grid value for the backward.
#pragma once

#include <cmath>
#include <cstdint>

#include "core/half.h"
#include "core/tensor_impl.h"
#include "ops/prims/spatial.h"

namespace lucid::backend {

// input [N, C, H, W], grid [N, P, 2] (x, y) with P points a batch element.
struct GridSampleArgs {
  int64_t n, c, h, w, p;
  int mode;     // 0 bilinear, 1 nearest
  int padding;  // 0 zeros, 1 border, 2 reflection
  bool align_corners;
};

inline GridSampleArgs grid_args(const ops::GridSampleOptions& o, const TensorImpl& input, const TensorImpl& grid) {
  const Shape& s = input.shape();
  return {s[0], s[1], s[2], s[3], grid.shape()[1] * grid.shape()[2], o.mode, o.padding, o.align_corners};
}

template <typename T>
LUCID_HD T unnormalize(T coord, int64_t size, bool align, T* grad) {
  if (align) {
    *grad = static_cast<T>(size - 1) / 2;
    return ((coord + 1) / 2) * (size - 1);
  }
  *grad = static_cast<T>(size) / 2;
  return ((coord + 1) * size - 1) / 2;
}

// Borders count as out of range for the gradient, as ATen's clip_coordinates_set_grad.
template <typename T>
LUCID_HD T clip(T in, int64_t limit, T* grad) {
  if (in <= T(0)) {
    *grad = 0;
    return 0;
  }
  const T mx = static_cast<T>(limit - 1);
  if (in >= mx) {
    *grad = 0;
    return mx;
  }
  *grad = 1;
  return in;
}

template <typename T>
LUCID_HD T reflect(T in, int64_t twice_low, int64_t twice_high, T* grad) {
  if (twice_low == twice_high) {
    *grad = 0;
    return 0;
  }
  const T mn = static_cast<T>(twice_low) / 2, span = static_cast<T>(twice_high - twice_low) / 2;
  in = in - mn;
  int sign = 1;
  if (in < T(0)) {
    sign = -1;
    in = -in;
  }
  const T extra = std::fmod(in, span);
  const int flips = static_cast<int>(std::floor(in / span));
  if (flips % 2 == 0) {
    *grad = static_cast<T>(sign);
    return extra + mn;
  }
  *grad = static_cast<T>(-sign);
  return span - extra + mn;
}

// grid_sampler_compute_source_index(_set_grad): the source coordinate and d coord / d grid.
template <typename T>
LUCID_HD T source_index(T coord, int64_t size, int padding, bool align, T* grad) {
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

}  // namespace lucid::backend
