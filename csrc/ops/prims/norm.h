// Primitives of batch_norm and group_norm (ops/norm.cpp).
//
// Both ops see the input, as float32 or float64 and contiguous, as units: the rows of
// [n, k] (one per (sample, channel)), or, for batch norm over a short spatial size,
// the columns of [n, k] = [N, C * L] (one per (channel, position)). Four passes run
// over the units (NormMoments, NormAffine, NormGradSums, NormAffine2). Between them,
// the per-channel or per-group arithmetic (Chan's combination of unit moments, the
// running statistics, the backward's coefficients) is a primitive of its own on
// float64 vectors, so no op reads statistics back to the host.
//
// Per-unit and per-channel values travel as float64 tables [k, count], one row per
// quantity (mean and m2, scale and shift, ...), so a pass allocates one tensor for
// them. Optional tensors (weight, bias, running statistics) are listed in `ins` /
// `outs` only when present; the has_* flags say which are.
#pragma once

#include "ops/primitive.h"

namespace lucid::ops {

// The units of an [n, k] input: its n rows, or (columns) its k columns.
struct NormUnits {
  bool columns = false;
  int64_t n = 0, k = 0;
  int64_t count() const { return columns ? k : n; }
  int64_t size() const { return columns ? n : k; }  // elements per unit
};

// The mean and m2 = sum (x - mean)^2 of each unit. ins: {x}; outs: {moments [2, units]}.
struct NormMoments : PrimitiveOf<Prim::NormMoments, NormMoments> {
  NormUnits units;
};

// y = x * scale[u] + shift[u] in x's dtype (the float64 coefficients rounded to it
// first). ins: {x, coefficients [2, units] (scale, shift)}; outs: {y}.
struct NormAffine : PrimitiveOf<Prim::NormAffine, NormAffine> {
  NormUnits units;
};

// The sums of dy and of dy * x over each unit. ins: {dy, x}; outs: {sums [2, units]}.
struct NormGradSums : PrimitiveOf<Prim::NormGradSums, NormGradSums> {
  NormUnits units;
};

// dx = a[u] dy + b[u] x + d[u] in x's dtype. ins: {dy, x, coefficients [3, units]
// (a, b, d)}; outs: {dx}.
struct NormAffine2 : PrimitiveOf<Prim::NormAffine2, NormAffine2> {
  NormUnits units;
};

// Batch norm's per-channel statistics and the per-unit affine coefficients.
// Training: ins {moments [2, units], [running_mean], [running_var], [weight], [bias]}
// (the vectors float64 [C]); the unit moments of channel c combine with Chan's
// formula, and the running statistics given (update_* set) come back updated,
// r' = (1 - momentum) r + momentum s with the unbiased variance.
// Evaluation: ins {running_mean, running_var, [weight], [bias]}.
// outs: {stats [2, C] (mean, invstd), coefficients [2, units] (scale, shift),
// [running [2, C] (mean', var'; a row not updated is left as it is)]}.
struct BatchNormStats : PrimitiveOf<Prim::BatchNormStats, BatchNormStats> {
  int64_t channels = 0;
  NormUnits units;
  double eps = 0, momentum = 0;
  bool training = false, update_mean = false, update_var = false, has_weight = false, has_bias = false;
  const char* name() const override { return "batch_norm"; }
};

// Batch norm's fused backward coefficients. ins: {sums [2, units], stats [2, C],
// [weight]}; outs: {dweight_dbias [2, C], coefficients [3, units] (NormAffine2's)}.
struct BatchNormGradCoeffs : PrimitiveOf<Prim::BatchNormGradCoeffs, BatchNormGradCoeffs> {
  int64_t channels = 0;
  NormUnits units;
  bool training = false, has_weight = false;
  const char* name() const override { return "batch_norm_backward"; }
};

// Group norm's statistics: the C / groups consecutive rows of group q = n * groups + g
// combine into its mean and rstd; then the per-row scale and shift.
// ins: {moments [2, N * C], [weight], [bias]}; outs: {stats [2, N * groups] (mean,
// rstd), coefficients [2, N * C] (scale, shift)}.
struct GroupNormStats : PrimitiveOf<Prim::GroupNormStats, GroupNormStats> {
  int64_t batch = 0, channels = 0, groups = 0, len = 0;  // len: elements per row
  double eps = 0;
  bool has_weight = false, has_bias = false;
  const char* name() const override { return "group_norm"; }
};

// Group norm's fused backward coefficients. ins: {sums [2, N * C], stats
// [2, N * groups], [weight]}; outs: {dweight_dbias [2, C], coefficients [3, N * C]}.
struct GroupNormGradCoeffs : PrimitiveOf<Prim::GroupNormGradCoeffs, GroupNormGradCoeffs> {
  int64_t batch = 0, channels = 0, groups = 0, len = 0;
  bool has_weight = false;
  const char* name() const override { return "group_norm_backward"; }
};

}  // namespace lucid::ops
