// Primitives of the spatial ops: convolution and unfold/fold (ops/conv.cpp), pooling
// (ops/pool.cpp), separable resampling (ops/resample.cpp) and grid_sample
// (ops/grid_sample.cpp).
//
// Every tensor a spatial kernel reads or writes is contiguous; the ops make the
// staging copies (in the compute dtype) before they launch.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "ops/primitive.h"

namespace lucid::ops {

// ---- convolution ----------------------------------------------------------------------

// A convolution's geometry. Every spatial rank (1-3) runs as 3-d with size-1 leading
// dims. The "big" image is the one the kernel slides over (conv's input,
// conv_transpose's output), the "small" one has one value per window (conv's output).
// The weight is [C_small, C_big / groups, *k] for conv and conv_transpose alike.
struct ConvGeometry {
  std::array<int64_t, 3> big{1, 1, 1}, small{1, 1, 1}, k{1, 1, 1};
  std::array<int64_t, 3> stride{1, 1, 1}, pad{0, 0, 0}, dil{1, 1, 1};
  int64_t groups = 1;
  int64_t big_numel() const { return big[0] * big[1] * big[2]; }
  int64_t small_numel() const { return small[0] * small[1] * small[2]; }
  int64_t kernel_numel() const { return k[0] * k[1] * k[2]; }
};

// Convolution's tensors are float32 or float64, one dtype per launch. allow_tf32:
// float32 convolutions may use TF32 tensor cores (GPU only):
// lucid.backends.cudnn.allow_tf32 (default False: exact), read when the op is called.
// deterministic: only algorithms that give the same bits every run (GPU only; the CPU's
// always do): ops::conv_deterministic() when the op is called.

// small = conv(big, w) (+ bias). ins: {big [N, Cb, *big], w [Cs, Cb/groups, *k], bias
// [Cs] when there is one}; outs: {small [N, Cs, *small]}.
struct ConvForward : PrimitiveOf<Prim::ConvForward, ConvForward> {
  ConvGeometry geom;
  bool allow_tf32 = false, deterministic = false;
  const char* name() const override { return "convolution"; }
};

// big = conv_transpose(small, w) (+ bias), the adjoint of ConvForward in its image.
// ins: {small [N, Cs, *small], w [Cs, Cb/groups, *k], bias [Cb] when there is one};
// outs: {big [N, Cb, *big]}.
struct ConvTranspose : PrimitiveOf<Prim::ConvTranspose, ConvTranspose> {
  ConvGeometry geom;
  bool allow_tf32 = false, deterministic = false;
  const char* name() const override { return "conv_transpose"; }
};

// The weight gradient: gw = sum over the batch of small @ im2col(big)^T.
// ins: {big [N, Cb, *big], small [N, Cs, *small]}; outs: {gw [Cs, Cb/groups, *k]}.
struct ConvWeightGrad : PrimitiveOf<Prim::ConvWeightGrad, ConvWeightGrad> {
  ConvGeometry geom;
  bool allow_tf32 = false, deterministic = false;
  const char* name() const override { return "convolution_backward"; }
};

// F.unfold: the windows of each image as columns. ins: {x [N, C, *big]}; outs:
// {col [N, C * K, L]} (K taps per window, L = the small image's size).
struct Im2Col : PrimitiveOf<Prim::Im2Col, Im2Col> {
  ConvGeometry geom;
  const char* name() const override { return "im2col"; }
};

// F.fold, the adjoint of Im2Col: overlapping windows summed back into images.
// ins: {col [N, C * K, L]}; outs: {img [N, C, *big]} (overwritten).
struct Col2Im : PrimitiveOf<Prim::Col2Im, Col2Im> {
  ConvGeometry geom;
  const char* name() const override { return "col2im"; }
};

// ---- pooling ----------------------------------------------------------------------------

// The windows of one spatial dim of a pool (every rank runs as 3-d, size-1 leading
// dims): for output index o, the input positions start[o] + j * step for
// 0 <= j < len[o] that lie inside [0, in) take part.
struct PoolWindows {
  int64_t in = 1, out = 1, step = 1;
  std::vector<int64_t> start, len;
  std::vector<double> size;  // avg pools: this dim's factor of the divisor
};
using PoolDims = std::array<PoolWindows, 3>;

// The max of each window and its flat spatial position (NaN wins, as in PyTorch).
// ins: {x [*lead, *in]}, float32, float64 or int64; outs: {values [*lead, *out] of x's
// dtype, indices [*lead, *out] int64}.
struct MaxPool : PrimitiveOf<Prim::MaxPool, MaxPool> {
  PoolDims dims;
  const char* name() const override { return "max_pool"; }
};

// The average pool (adjoint false): out [*lead, *out] = each window's sum / divisor of
// x [*lead, *in]; or its adjoint (true): out [*lead, *in] from x [*lead, *out],
// overwritten. The divisor is the product of the dims' sizes, or `divisor` when > 0.
// ins: {x}; outs: {out}; float32 or float64, and dims' outputs all non-empty.
struct AvgPool : PrimitiveOf<Prim::AvgPool, AvgPool> {
  PoolDims dims;
  double divisor = 0.0;
  bool adjoint = false;
  const char* name() const override { return adjoint ? "avg_pool_backward" : "avg_pool"; }
};

// ---- resampling ---------------------------------------------------------------------------

// interpolate's separable resampling along `dim`, K taps per output position:
//   forward:  out[.., o, ..] = sum_k weight[k, o] * src[.., index[k, o], ..]
//   adjoint:  out[.., index[k, o], ..] += weight[k, o] * src[.., o, ..]  (out zeroed)
// ins: {src, index [K, O] int64, weight [K, O] of src's dtype (float32 or float64)};
// outs: {out}, src's shape but for `dim`. Every index must lie in [0, size of the
// resampled side along dim): the kernel checks before writing and raises IndexError
// "<name>(): tap index i is out of range for size n".
struct ResampleTaps : PrimitiveOf<Prim::ResampleTaps, ResampleTaps> {
  int64_t dim = 0;
  bool adjoint = false;
  const char* name() const override { return adjoint ? "resample_taps_adjoint" : "resample_taps"; }
};

// ---- grid_sample --------------------------------------------------------------------------

struct GridSampleOptions {
  int mode = 0;     // 0 bilinear, 1 nearest
  int padding = 0;  // 0 zeros, 1 border, 2 reflection
  bool align_corners = false;
};

// grid_sample on 2-D images with ATen's coordinate formulas. ins: {input [N, C, H, W],
// grid [N, Ho, Wo, 2]}; outs: {out [N, C, Ho, Wo]}; float32 or float64.
struct GridSample : PrimitiveOf<Prim::GridSample, GridSample> {
  GridSampleOptions options;
  const char* name() const override { return "grid_sampler_2d"; }
};

// GridSample's gradients. ins: {grad_out [N, C, Ho, Wo], input, grid}; outs:
// {grad_input (zeroed by the op, accumulated into), grad_grid (written)}.
struct GridSampleBackward : PrimitiveOf<Prim::GridSampleBackward, GridSampleBackward> {
  GridSampleOptions options;
  const char* name() const override { return "grid_sampler_2d_backward"; }
};

}  // namespace lucid::ops
