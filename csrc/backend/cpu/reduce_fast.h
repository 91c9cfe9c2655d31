// Fast float reductions over a contiguous block viewed as [outer, n, inner]
// (n reduced; inner == 1 is a reduction of rows, inner > 1 of columns, streamed a
// row at a time). Vectorised (reduce_simd.h) and split over the thread pool in
// pieces whose boundaries depend on the shape only, combined in a fixed order:
// the same input gives the same bits for any thread count.
#pragma once

#include "core/tensor_impl.h"
#include "ops/prims/reduce.h"

namespace lucid::cpu {

// What is summed per element, in double lanes.
enum class Moment { Sum, SqDev, Abs, Sq };

// out[o * inner + i] = sum_k f(x[o, k, i]) in double, with f from `m`; SqDev uses
// mean[o * inner + i]. d is a float dtype (F16, BF16, F32 or F64).
void moment_reduce(Dtype d, const std::byte* x, int64_t outer, int64_t n, int64_t inner, Moment m,
                   const double* mean, double* out);

// Extremum (and first index along n) of each [o, :, i]; a NaN wins (its first
// occurrence), as in PyTorch. d is a float dtype; either output may be null. n >= 1.
void extremum_reduce(Dtype d, const std::byte* x, int64_t outer, int64_t n, int64_t inner, bool is_max,
                     std::byte* values, int64_t* indices);

// softmax.cpp: softmax / log-softmax of float32 (or float16 / bfloat16, on float
// copies: Note [16-bit softmax on the CPU]) along n of a contiguous [outer, n, inner]
// block, with a vectorised exp (max-subtracted, like the double one).
template <typename T>
void softmax_dim_f32(const T* in, T* out, int64_t outer, int64_t n, int64_t inner, bool log);

// cross_entropy.cpp: the CrossEntropy primitives on T = float or double logits (their
// weights, loss, lse, stats and gradients in T; partial null for Reduction::None).
template <typename T>
void cross_entropy_forward(const ops::CrossEntropyParams& p, const T* x, const int64_t* t, const T* w, T* loss, T* lse,
                           T* stats, double* partial);
template <typename T>
void cross_entropy_backward(const ops::CrossEntropyParams& p, const T* x, const int64_t* t, const T* w, const T* lse,
                            const T* stats, const T* g, T* gx);

// scan.cpp: cumsum / cumprod of a float dtype (float32/64, float16, bfloat16) along n of
// a contiguous [outer, n, inner] block, from `in` to `out` (same dtype), with running
// totals in double.
void scan_float(Dtype d, const std::byte* in, std::byte* out, int64_t outer, int64_t n, int64_t inner,
                bool is_prod);

// y[i] = x[i] * scale as d (a float dtype).
void store_scaled(Dtype d, const double* x, int64_t count, double scale, std::byte* y);

}  // namespace lucid::cpu
