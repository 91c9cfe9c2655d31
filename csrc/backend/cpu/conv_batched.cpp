// Note [Batched small images]
// The other convolution paths run one product per image (and group): for an image
// of L output positions, [C_small, C_big * K] @ [C_big * K, L]. The deep layers of
// ResNets and VGGs have images of 1x1 to 7x7, so L is 1-49 and each product is
// (nearly) a matrix-vector product: it streams the whole weight matrix - 9.4 MB for
// a 3x3 512->512 layer - from memory for a handful of columns, and a batch of 64
// streams it 64 times, at memory speed rather than at the product kernel's.
//
// Here the column matrices of a chunk of images sit side by side in one matrix
// [C_big * K, count * L] (im2col_batch), so each chunk and group is one product of
// about kBatchColumns columns that reads the weights once, at the kernel's speed:
//   forward:        out [Cs, count*L] = W [Cs, Cb*K] @ col;   scattered to [N, Cs, L]
//   transpose:      col = W^T @ dy [Cs, count*L] (gathered);  col2im_batch
//   weight grad:    gW (+)= dy [Cs, count*L] @ col^T,         chunk by chunk in order
// The gather and scatter move C_small * count * L values, which is little next to
// the product's C_small * C_big * K * count * L multiply-adds. The weight gradient
// sums the chunks in batch order, so its result does not depend on threading.
#include "backend/cpu/conv_batched.h"

#include <algorithm>
#include <cstring>

#include "backend/cpu/blas.h"
#include "backend/cpu/conv_scratch.h"

namespace lucid::cpu {

namespace {

// The columns one product aims at: enough for the product kernel to run at speed
// (and to read the weights once per kBatchColumns columns, not once per image).
constexpr int64_t kBatchColumns = 1024;
// Images of more output positions than this keep their image-by-image paths: from
// 10x10 on, the per-image direct products (conv_direct.cpp, which write no column
// matrix) are faster than one im2col product over the batch; up to 8x8 the batched
// product is (3x3, 64-512 channels, batch 32-64: docs/PERFORMANCE.md, issue 18).
constexpr int64_t kMaxPositions = 64;
// Weight matrices per group below this many elements are cheap to stream per image:
// the image-by-image paths (threaded over images) handle those.
constexpr int64_t kMinWeights = int64_t(1) << 14;
// The column matrix of one chunk stays below this (it is per-thread scratch).
constexpr int64_t kMaxColumnBytes = int64_t(32) << 20;

struct Plan {
  int64_t groups, cbg, csg, rows, L, B, per_chunk;
};

template <typename T>
Plan plan_of(const ConvGeom& g, int64_t n, int64_t c_big, int64_t c_small) {
  Plan p;
  p.groups = g.groups;
  p.cbg = c_big / g.groups;
  p.csg = c_small / g.groups;
  p.rows = p.cbg * g.kernel_numel();
  p.L = g.small_numel();
  p.B = g.big_numel();
  const int64_t by_columns = (kBatchColumns + p.L - 1) / p.L;
  const int64_t by_memory = kMaxColumnBytes / int64_t(sizeof(T)) / std::max<int64_t>(1, p.rows * p.L);
  p.per_chunk = std::clamp<int64_t>(std::min(by_columns, by_memory), 1, n);
  return p;
}

// dst [csg, count * L] <- the csg channels starting at `src` of `count` images
// img_stride apart (each channel's L values contiguous): image i's at columns i * L.
template <typename T>
void gather_images(const T* src, int64_t img_stride, int64_t count, int64_t csg, int64_t L, T* dst) {
  const int64_t ld = count * L;
  for (int64_t c = 0; c < csg; ++c)
    for (int64_t i = 0; i < count; ++i)
      std::memcpy(dst + c * ld + i * L, src + i * img_stride + c * L, size_t(L) * sizeof(T));
}

// The adjoint layout move: images' channels <- src [csg, count * L], plus bias [csg].
template <typename T>
void scatter_images(const T* src, int64_t count, int64_t csg, int64_t L, const T* bias, T* dst,
                    int64_t img_stride) {
  const int64_t ld = count * L;
  for (int64_t i = 0; i < count; ++i)
    for (int64_t c = 0; c < csg; ++c) {
      const T* s = src + c * ld + i * L;
      T* d = dst + i * img_stride + c * L;
      if (bias) {
        const T v = bias[c];
        for (int64_t l = 0; l < L; ++l) d[l] = s[l] + v;
      } else {
        std::memcpy(d, s, size_t(L) * sizeof(T));
      }
    }
}

}  // namespace

bool conv_batched_suits(const ConvGeom& g, int64_t n, int64_t c_big, int64_t c_small) {
  const int64_t L = g.small_numel(), csg = c_small / g.groups, rows = c_big / g.groups * g.kernel_numel();
  return n > 1 && L > 0 && g.big_numel() > 0 && L <= kMaxPositions && csg * rows >= kMinWeights;
}

namespace {

// Runs step(b0, count, gi, col, small_cols) for each chunk [b0, b0 + count) of the
// batch and each group gi, with one scratch buffer for the chunk's column matrix
// col [rows, count * L] and its small-image matrix small_cols [csg, count * L].
template <typename T, typename Step>
void for_each_chunk(const Plan& p, int64_t n, Step&& step) {
  const int64_t max_cols = p.per_chunk * p.L;
  (void)get_num_threads();  // (sets the pool's size outside any parallel region: conv_scratch.h)
  Buffer<T> scratch(p.rows * max_cols + p.csg * max_cols);
  T* col = scratch.data();
  T* small_cols = col + p.rows * max_cols;
  for (int64_t b0 = 0; b0 < n; b0 += p.per_chunk)
    for (int64_t gi = 0; gi < p.groups; ++gi) step(b0, std::min(p.per_chunk, n - b0), gi, col, small_cols);
}

}  // namespace

template <typename T>
void conv_batched_forward(const T* big, const T* w, const T* bias, T* small, int64_t n, int64_t c_big,
                          int64_t c_small, const ConvGeom& g) {
  const Plan p = plan_of<T>(g, n, c_big, c_small);
  for_each_chunk<T>(p, n, [&](int64_t b0, int64_t count, int64_t gi, T* col, T* out) {
    const int64_t cols = count * p.L;
    im2col_batch(big + (b0 * c_big + gi * p.cbg) * p.B, c_big * p.B, count, col, p.cbg, g);
    gemm_raw<T>(false, false, p.csg, cols, p.rows, T(1), w + gi * p.csg * p.rows, p.rows, col, cols, T(0), out,
                cols);
    scatter_images(out, count, p.csg, p.L, bias ? bias + gi * p.csg : nullptr,
                   small + (b0 * c_small + gi * p.csg) * p.L, c_small * p.L);
  });
}

template <typename T>
void conv_batched_transpose(const T* small, const T* w, const T* bias, T* big, int64_t n, int64_t c_big,
                            int64_t c_small, const ConvGeom& g) {
  const Plan p = plan_of<T>(g, n, c_big, c_small);
  for_each_chunk<T>(p, n, [&](int64_t b0, int64_t count, int64_t gi, T* col, T* dy) {
    const int64_t cols = count * p.L;
    gather_images(small + (b0 * c_small + gi * p.csg) * p.L, c_small * p.L, count, p.csg, p.L, dy);
    gemm_raw<T>(true, false, p.rows, cols, p.csg, T(1), w + gi * p.csg * p.rows, p.rows, dy, cols, T(0), col,
                cols);
    T* img = big + (b0 * c_big + gi * p.cbg) * p.B;
    col2im_batch(col, count, img, c_big * p.B, p.cbg, g, /*overwrite=*/true);
    if (bias)
      for (int64_t i = 0; i < count; ++i) add_channel_bias(img + i * c_big * p.B, bias + gi * p.cbg, p.cbg, p.B);
  });
}

template <typename T>
void conv_batched_weight_grad(const T* big, const T* small, T* gw, int64_t n, int64_t c_big, int64_t c_small,
                              const ConvGeom& g) {
  const Plan p = plan_of<T>(g, n, c_big, c_small);
  for_each_chunk<T>(p, n, [&](int64_t b0, int64_t count, int64_t gi, T* col, T* dy) {
    const int64_t cols = count * p.L;
    gather_images(small + (b0 * c_small + gi * p.csg) * p.L, c_small * p.L, count, p.csg, p.L, dy);
    im2col_batch(big + (b0 * c_big + gi * p.cbg) * p.B, c_big * p.B, count, col, p.cbg, g);
    gemm_raw<T>(false, true, p.csg, p.rows, cols, T(1), dy, cols, col, cols, b0 == 0 ? T(0) : T(1),
                gw + gi * p.csg * p.rows, p.rows);
  });
}

#define LUCID_CONV_BATCHED_INSTANTIATE(T)                                                                    \
  template void conv_batched_forward<T>(const T*, const T*, const T*, T*, int64_t, int64_t, int64_t,          \
                                        const ConvGeom&);                                                   \
  template void conv_batched_transpose<T>(const T*, const T*, const T*, T*, int64_t, int64_t, int64_t,        \
                                          const ConvGeom&);                                                 \
  template void conv_batched_weight_grad<T>(const T*, const T*, T*, int64_t, int64_t, int64_t, const ConvGeom&);

LUCID_CONV_BATCHED_INSTANTIATE(float)
LUCID_CONV_BATCHED_INSTANTIATE(double)

}  // namespace lucid::cpu
