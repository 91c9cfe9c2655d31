// The CUDA kernels of the normalisation primitives (ops/prims/norm.h, and NormRows /
// NormRowsBackward of ops/prims/seq.h), split over three files so that each compiles
// quickly: norm_units.cu (the unit passes of batch_norm and group_norm),
// norm_stats.cu (the float64 per-channel / per-group arithmetic between them) and
// norm_rows.cu (layer_norm / rms_norm). register_norm.cpp puts them in the table.
#pragma once

#include <algorithm>
#include <cstdint>

#include "backend/cuda/norm_rows_forward.cuh"
#include "ops/primitive.h"

namespace lucid::cuda {

void norm_moments_kernel(const ops::Primitive& p, ops::Outputs outs, ops::Inputs ins);
void norm_affine_kernel(const ops::Primitive& p, ops::Outputs outs, ops::Inputs ins);
void norm_grad_sums_kernel(const ops::Primitive& p, ops::Outputs outs, ops::Inputs ins);
void norm_affine2_kernel(const ops::Primitive& p, ops::Outputs outs, ops::Inputs ins);

void batch_norm_stats_kernel(const ops::Primitive& p, ops::Outputs outs, ops::Inputs ins);
void batch_norm_grad_coeffs_kernel(const ops::Primitive& p, ops::Outputs outs, ops::Inputs ins);
void group_norm_stats_kernel(const ops::Primitive& p, ops::Outputs outs, ops::Inputs ins);
void group_norm_grad_coeffs_kernel(const ops::Primitive& p, ops::Outputs outs, ops::Inputs ins);

void norm_rows_kernel(const ops::Primitive& p, ops::Outputs outs, ops::Inputs ins);
// softmax / log_softmax of rows of n contiguous elements of any floating dtype, in the
// forward's layout below (softmax_rows.cu; SoftmaxDim's rows, and the text of the fused
// softmax).
void softmax_rows(const TensorImpl& x, TensorImpl& y, int64_t rows, int64_t n, bool log);

// How the rows kernels of layer_norm / rms_norm (norm_rows_forward.cuh,
// norm_rows_backward.cuh) and of softmax (softmax_rows_forward.cuh) are launched, shared
// by the unfused kernels and the fused ones (fused_rows.cpp).
//
// The forward's layout (Note [Forward rows in registers]): threads a row and the
// elements each keeps in registers, or kNormStaged / kNormReread for longer rows.
struct NormForwardLayout {
  int threads, kept;
};
// Threads a block of the forward: 8 rows of a warp each, or one row of more threads.
constexpr int norm_forward_block(int threads) { return threads == 32 ? kNormRowBlock : threads; }
inline NormForwardLayout norm_forward_layout(int64_t n, int64_t itemsize) {
  if (n <= 256) return {32, 8};
  if (n <= 1024) return {128, 8};
  if (n <= 2048) return {kNormRowBlock, 8};
  if (n <= 4096) return {kNormRowBlock, 16};
  // staged where the row fits the 48 KB a block may take without opting in
  return {kNormRowBlock, n * itemsize <= (48 << 10) ? kNormStaged : kNormReread};
}
inline unsigned norm_forward_grid(int64_t rows, NormForwardLayout layout) {
  const int64_t per_block = norm_forward_block(layout.threads) / layout.threads;
  return unsigned(std::min<int64_t>((rows + per_block - 1) / per_block, int64_t(1) << 20));
}
// softmax's (Note [Softmax rows]): the norm's up to 2048 elements, but for rows of 513
// to 1024 a block of 256 threads each keeping 4; then the row staged where it fits.
inline NormForwardLayout softmax_forward_layout(int64_t n, int64_t itemsize) {
  if (n > 512 && n <= 1024) return {kNormRowBlock, 4};
  if (n <= 2048) return norm_forward_layout(n, itemsize);
  return {kNormRowBlock, n * itemsize <= (48 << 10) ? kNormStaged : kNormReread};
}

// The backward's: a warp a row up to kNormWarpRowsUpTo elements (8 rows a block), the
// whole block beyond.
inline int norm_row_threads(int64_t n) { return n <= kNormWarpRowsUpTo ? 32 : kNormRowBlock; }
inline unsigned norm_rows_grid(int64_t rows, int64_t n) {
  const int64_t per_block = kNormRowBlock / norm_row_threads(n);
  return unsigned(std::min<int64_t>((rows + per_block - 1) / per_block, int64_t(1) << 20));
}
// The backward keeps kCached elements of each thread's share of g and x in registers
// (norm_rows_backward.cuh): 8 where the share is no longer (and for double, whose 32
// would take 64 registers an array), 32 otherwise.
inline int norm_backward_cached(int64_t n, int64_t itemsize) {
  return (n + norm_row_threads(n) - 1) / norm_row_threads(n) <= 8 || itemsize == 8 ? 8 : 32;
}
void norm_rows_backward_kernel(const ops::Primitive& p, ops::Outputs outs, ops::Inputs ins);
// d weight and d bias of NormRowsBackward (either may be null): column sums over the
// rows, after dx (the fused backward launches them after its generated kernel).
void norm_rows_affine_grads(const TensorImpl* dy, const TensorImpl* x, const TensorImpl* mean, const TensorImpl* rstd,
                            TensorImpl* dweight, TensorImpl* dbias, int64_t rows, int64_t n, int device);

}  // namespace lucid::cuda
