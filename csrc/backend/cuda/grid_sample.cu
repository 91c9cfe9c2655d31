// CUDA kernels of grid_sample on 2-D images (ops/prims/spatial.h: GridSample,
// GridSampleBackward) with ATen's coordinate formulas, ported from the CPU kernels
// (backend/cpu/grid_sample.cpp). input [N, C, H, W], grid [N, P, 2] (x, y),
// out / grad_out [N, C, P]; all contiguous.
//
// Forward: one thread per sample point computes its corners once and writes every
// channel (coalesced along the points).
// Backward:
//   - grad_grid: one thread per point sums over the channels, in the CPU's order;
//   - grad_input: the CPU scatters grad_out * weight into each point's corners, in
//     point then corner order. Here the (point, corner) entries are grouped by the
//     pixel they write (group_by_key.h: a stable sort of N * P * 4 keys), then one
//     thread per element of grad_input gathers its entries in that same order:
//     deterministic, with no float atomics (PyTorch's kernel uses atomicAdd).
#include <cmath>

#include "backend/common/grid_coords.h"
#include "backend/cuda/caching_allocator.h"
#include "backend/cuda/elementwise_launch.cuh"
#include "backend/cuda/group_by_key.h"
#include "backend/cuda/pool_family.h"
#include "ops/prims/spatial.h"

namespace lucid::cuda {

namespace {

using ops::Inputs;
using ops::Outputs;

using backend::GridSampleArgs;
using backend::grid_args;
using backend::source_index;

// One point's sampling: nearest uses corner 0 only. Per corner: whether it is inside
// the image, its offset in the plane, its weight, and d weight / d ix, d iy.
template <typename T>
struct Sample {
  T mx, my;  // d source coordinate / d grid value
  bool on[4];
  int64_t at[4];
  T weight[4], dx[4], dy[4];
};

__device__ __forceinline__ bool inside(int64_t y, int64_t x, int64_t h, int64_t w) {
  return y >= 0 && y < h && x >= 0 && x < w;
}

template <typename T>
__device__ Sample<T> sample_point(const T* g, const GridSampleArgs& a) {
  Sample<T> s;
  const T ix = source_index(g[0], a.w, a.padding, a.align_corners, &s.mx);
  const T iy = source_index(g[1], a.h, a.padding, a.align_corners, &s.my);
  if (a.mode == 1) {
    const int64_t x = static_cast<int64_t>(nearbyint(ix)), y = static_cast<int64_t>(nearbyint(iy));
    s.on[0] = inside(y, x, a.h, a.w);
    s.at[0] = y * a.w + x;
    s.weight[0] = 1;
    s.on[1] = s.on[2] = s.on[3] = false;
    return s;
  }
  const int64_t x0 = static_cast<int64_t>(floor(ix)), y0 = static_cast<int64_t>(floor(iy));
  const int64_t x1 = x0 + 1, y1 = y0 + 1;
  const int64_t xs[4] = {x0, x1, x0, x1}, ys[4] = {y0, y0, y1, y1};
  s.weight[0] = (x1 - ix) * (y1 - iy);
  s.weight[1] = (ix - x0) * (y1 - iy);
  s.weight[2] = (x1 - ix) * (iy - y0);
  s.weight[3] = (ix - x0) * (iy - y0);
  s.dx[0] = -(y1 - iy);
  s.dx[1] = y1 - iy;
  s.dx[2] = -(iy - y0);
  s.dx[3] = iy - y0;
  s.dy[0] = -(x1 - ix);
  s.dy[1] = -(ix - x0);
  s.dy[2] = x1 - ix;
  s.dy[3] = ix - x0;
  for (int q = 0; q < 4; ++q) {
    s.on[q] = inside(ys[q], xs[q], a.h, a.w);
    s.at[q] = ys[q] * a.w + xs[q];
  }
  return s;
}

template <typename T>
__global__ void __launch_bounds__(kEwThreads) forward_kernel(T* __restrict__ out, const T* __restrict__ input,
                                                               const T* __restrict__ grid, GridSampleArgs a) {
  const int64_t hw = a.h * a.w, points = a.n * a.p;
  for (int64_t e = int64_t(blockIdx.x) * kEwThreads + threadIdx.x; e < points; e += int64_t(gridDim.x) * kEwThreads) {
    const int64_t n = e / a.p, p = e - n * a.p;
    const Sample<T> s = sample_point(grid + 2 * e, a);
    for (int64_t c = 0; c < a.c; ++c) {
      const T* src = input + (n * a.c + c) * hw;
      T v = 0;
      if (a.mode == 1) {
        v = s.on[0] ? src[s.at[0]] : T(0);
      } else {
#pragma unroll
        for (int q = 0; q < 4; ++q)
          if (s.on[q]) v += src[s.at[q]] * s.weight[q];
      }
      out[(n * a.c + c) * a.p + p] = v;
    }
  }
}

// Per point: grad_grid, and the keys (the pixel n * H * W + at written, or N * H * W
// for none) and weights of its E corner entries v = point * E + q.
template <typename T, int E>
__global__ void __launch_bounds__(kEwThreads) point_kernel(T* __restrict__ grad_grid, uint64_t* __restrict__ keys,
                                                             T* __restrict__ weights, const T* __restrict__ grad_out,
                                                             const T* __restrict__ input, const T* __restrict__ grid,
                                                             GridSampleArgs a) {
  const int64_t hw = a.h * a.w, points = a.n * a.p;
  for (int64_t e = int64_t(blockIdx.x) * kEwThreads + threadIdx.x; e < points; e += int64_t(gridDim.x) * kEwThreads) {
    const int64_t n = e / a.p, p = e - n * a.p;
    const Sample<T> s = sample_point(grid + 2 * e, a);
#pragma unroll
    for (int q = 0; q < E; ++q) {
      keys[e * E + q] = s.on[q] ? uint64_t(n * hw + s.at[q]) : uint64_t(a.n * hw);
      weights[e * E + q] = s.weight[q];
    }
    if (E == 1) {  // nearest: no gradient for the grid
      grad_grid[2 * e] = 0;
      grad_grid[2 * e + 1] = 0;
      continue;
    }
    T gx = 0, gy = 0;
    for (int64_t c = 0; c < a.c; ++c) {
      const T* src = input + (n * a.c + c) * hw;
      const T go = grad_out[(n * a.c + c) * a.p + p];
      T sx = 0, sy = 0;
#pragma unroll
      for (int q = 0; q < E; ++q)
        if (s.on[q]) {
          const T v = src[s.at[q]];
          sx += v * s.dx[q];
          sy += v * s.dy[q];
        }
      gx += sx * go;
      gy += sy * go;
    }
    grad_grid[2 * e] = s.mx * gx;
    grad_grid[2 * e + 1] = s.my * gy;
  }
}

// grad_input[n, c, pixel] = the sum over the entries writing (n, pixel), in increasing
// entry order, of weight * grad_out[n, c, point].
template <typename T, int E>
__global__ void __launch_bounds__(kEwThreads) input_grad_kernel(T* __restrict__ grad_input,
                                                                  const T* __restrict__ grad_out,
                                                                  const T* __restrict__ weights,
                                                                  const uint32_t* __restrict__ entry,
                                                                  const int64_t* __restrict__ offset, GridSampleArgs a) {
  const int64_t hw = a.h * a.w, total = a.n * a.c * hw;
  for (int64_t e = int64_t(blockIdx.x) * kEwThreads + threadIdx.x; e < total; e += int64_t(gridDim.x) * kEwThreads) {
    const int64_t plane = e / hw, pixel = e - plane * hw, n = plane / a.c;
    const int64_t bucket = n * hw + pixel;
    const T* go = grad_out + plane * a.p - n * a.p;  // go[point index over all n] = grad_out[n, c, p]
    T acc = 0;
    for (int64_t j = offset[bucket], end = offset[bucket + 1]; j < end; ++j) {
      const int64_t v = entry[j];
      acc += weights[v] * go[v / E];
    }
    grad_input[e] = acc;
  }
}

void grid_sample_prim(const ops::Primitive& p, Outputs outs, Inputs ins) {
  const TensorImpl &input = *ins[0], &grid = *ins[1];
  const GridSampleArgs a = grid_args(ops::prim_cast<ops::GridSample>(p).options, input, grid);
  const int64_t points = a.n * a.p;
  if (points == 0 || a.c == 0) return;
  const int device = input.device().index;
  DeviceGuard guard(device);
  visit_float32_or_64(input.dtype(), [&](auto z) {
    using T = decltype(z);
    forward_kernel<T><<<ew_grid(points), kEwThreads, 0, stream(device)>>>(
        reinterpret_cast<T*>(outs[0]->data_ptr()), reinterpret_cast<const T*>(input.data_ptr()),
        reinterpret_cast<const T*>(grid.data_ptr()), a);
  });
  LUCID_CUDA_CHECK(cudaGetLastError());
}

template <typename T, int E>
void backward(TensorImpl& grad_input, TensorImpl& grad_grid, const TensorImpl& grad_out, const TensorImpl& input,
              const TensorImpl& grid, const GridSampleArgs& a) {
  const int device = input.device().index;
  const int64_t entries = a.n * a.p * E;
  LUCID_CHECK(entries < (int64_t(1) << 32), NotImplementedError, "grid_sampler_2d_backward: ", a.n * a.p,
              " sample points are more than it supports on the GPU (2^32 / ", E, ")");
  CachingAllocator& alloc = CachingAllocator::instance();
  GpuStorage keys = alloc.allocate(size_t(entries) * sizeof(uint64_t), device);
  GpuStorage weights = alloc.allocate(size_t(entries) * sizeof(T), device);
  auto* kp = reinterpret_cast<uint64_t*>(keys.ptr());
  auto* wp = reinterpret_cast<T*>(weights.ptr());
  const T* go = reinterpret_cast<const T*>(grad_out.data_ptr());
  DeviceGuard guard(device);
  cudaStream_t s = stream(device);
  point_kernel<T, E><<<ew_grid(a.n * a.p), kEwThreads, 0, s>>>(
      reinterpret_cast<T*>(grad_grid.data_ptr()), kp, wp, go, reinterpret_cast<const T*>(input.data_ptr()),
      reinterpret_cast<const T*>(grid.data_ptr()), a);
  LUCID_CUDA_CHECK(cudaGetLastError());
  if (grad_input.numel() == 0) return;
  const KeyGroups groups = group_by_key(kp, entries, a.n * a.h * a.w, device);
  input_grad_kernel<T, E><<<ew_grid(grad_input.numel()), kEwThreads, 0, s>>>(
      reinterpret_cast<T*>(grad_input.data_ptr()), go, wp, groups.entries(), groups.offsets(), a);
  LUCID_CUDA_CHECK(cudaGetLastError());
}

void grid_sample_backward_prim(const ops::Primitive& p, Outputs outs, Inputs ins) {
  const TensorImpl &grad_out = *ins[0], &input = *ins[1], &grid = *ins[2];
  const GridSampleArgs a = grid_args(ops::prim_cast<ops::GridSampleBackward>(p).options, input, grid);
  if (a.n * a.p == 0) return;  // grad_input stays zero, grad_grid is empty
  visit_float32_or_64(input.dtype(), [&](auto z) {
    using T = decltype(z);
    if (a.mode == 1) backward<T, 1>(*outs[0], *outs[1], grad_out, input, grid, a);
    else backward<T, 4>(*outs[0], *outs[1], grad_out, input, grid, a);
  });
}

}  // namespace

void register_grid_sample_kernels() {
  ops::register_kernel(ops::Prim::GridSample, DeviceType::GPU, grid_sample_prim);
  ops::register_kernel(ops::Prim::GridSampleBackward, DeviceType::GPU, grid_sample_backward_prim);
}

}  // namespace lucid::cuda
