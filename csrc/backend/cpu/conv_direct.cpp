// Note [Direct convolution]
// A stride-1 convolution of one (sample, group) is one product with no column
// matrix. The image is copied once into P [C, D0, D1, D2], zero-padded
// (D = big + 2 pad), and outputs are computed at the "wide" positions
//   q = o0 * D1 * D2 + o1 * D2 + o2
// of the padded grid. Window element (c, k0, k1, k2) of output q is then
//   P[off(c, k) + q],  off(c, k) = c * |P plane| + k0 dil0 D1 D2 + k1 dil1 D2 + k2 dil2,
// so row p = (c, k) of the implicit column matrix is P shifted by off[p]: contiguous
// in q, read in place by own_sgemm_ref (a B with row offsets). Wide positions
// past a row's valid outputs (o2 >= small2: dil2 (k2 - 1) of every D2, 2 of 58 for a
// 3x3 window over 56 columns; and o1 >= small1 between planes in 3-d) are computed
// and dropped when the valid ones are copied out.
// Against im2col + GEMM this skips writing the 9x column matrix (7 MiB per sample at
// 64 channels, 56x56, a round trip through memory) and packing it again: B's rows
// for one tile of outputs are a few image rows, which stay in L1.
// conv_transpose at stride 1 (and so a stride-1 conv's input gradient) is the same
// product: the convolution of its input padded by dil (k - 1) - pad, with the window
// flipped and the weight's two channel dims swapped.
#include "backend/cpu/conv_direct.h"

#include <algorithm>
#include <cstring>
#include <vector>

#include "backend/cpu/conv_scratch.h"
#include "backend/cpu/conv_winograd.h"
#include "backend/cpu/sgemm.h"
#include "core/parallel.h"

namespace lucid::cpu {

namespace {

// The padded image's extents and the wide output positions (see the Note).
struct Wide {
  int64_t dim[3];        // big + 2 pad
  int64_t step0, step1;  // the wide index's step per o0 and per o1: D1 * D2, D2
  int64_t plane;         // D0 * D1 * D2
  int64_t n;             // wide positions up to the last valid output
};

Wide wide_of(const ConvGeom& g) {
  Wide w{};
  for (int d = 0; d < 3; ++d) w.dim[d] = g.big[d] + 2 * g.pad[d];
  w.step1 = w.dim[2];
  w.step0 = w.dim[1] * w.dim[2];
  w.plane = w.dim[0] * w.step0;
  w.n = (g.small[0] - 1) * w.step0 + (g.small[1] - 1) * w.step1 + g.small[2];
  return w;
}

bool stride_one(const ConvGeom& g) {
  return g.stride[0] == 1 && g.stride[1] == 1 && g.stride[2] == 1;
}

// off[c * K + kk]: where row (c, window element kk) of the column matrix starts in P.
std::vector<int64_t> row_offsets(const ConvGeom& g, const Wide& w, int64_t channels) {
  std::vector<int64_t> off;
  off.reserve(size_t(channels * g.kernel_numel()));
  for (int64_t c = 0; c < channels; ++c)
    for (int64_t k0 = 0; k0 < g.k[0]; ++k0)
      for (int64_t k1 = 0; k1 < g.k[1]; ++k1)
        for (int64_t k2 = 0; k2 < g.k[2]; ++k2)
          off.push_back(c * w.plane + k0 * g.dil[0] * w.step0 + k1 * g.dil[1] * w.step1 + k2 * g.dil[2]);
  return off;
}

// P [channels, D0, D1, D2] <- img [channels, big] with zero borders, then zeros for
// the product's overread past the end.
void pad_image(const float* img, float* P, int64_t channels, const ConvGeom& g, const Wide& w) {
  const int64_t lines = w.dim[0] * w.dim[1];
  parallel_for(channels * lines, std::max<int64_t>(1, 8192 / w.dim[2]), [&](int64_t l0, int64_t l1) {
    for (int64_t l = l0; l < l1; ++l) {
      const int64_t c = l / lines, i0 = l % lines / w.dim[1] - g.pad[0], i1 = l % w.dim[1] - g.pad[1];
      float* d = P + l * w.dim[2];
      if (i0 < 0 || i0 >= g.big[0] || i1 < 0 || i1 >= g.big[1]) {
        std::fill(d, d + w.dim[2], 0.0f);
        continue;
      }
      std::fill(d, d + g.pad[2], 0.0f);
      std::memcpy(d + g.pad[2], img + ((c * g.big[0] + i0) * g.big[1] + i1) * g.big[2], size_t(g.big[2]) * 4);
      std::fill(d + g.pad[2] + g.big[2], d + w.dim[2], 0.0f);
    }
  });
  std::fill(P + channels * w.plane, P + channels * w.plane + kRowsAtOverread, 0.0f);
}

// out [channels, small] <- the valid positions of wide [channels, w.n] (+ bias).
void keep_valid(const float* wide, const float* bias, float* out, int64_t channels, const ConvGeom& g,
                const Wide& w) {
  const int64_t lines = g.small[0] * g.small[1], L = g.small_numel();
  parallel_for(channels * lines, std::max<int64_t>(1, 8192 / g.small[2]), [&](int64_t l0, int64_t l1) {
    for (int64_t l = l0; l < l1; ++l) {
      const int64_t c = l / lines, o0 = l % lines / g.small[1], o1 = l % g.small[1];
      const float* s = wide + c * w.n + o0 * w.step0 + o1 * w.step1;
      float* d = out + c * L + l % lines * g.small[2];
      if (!bias) {
        std::memcpy(d, s, size_t(g.small[2]) * 4);
        continue;
      }
      const float b = bias[c];
      for (int64_t i = 0; i < g.small[2]; ++i) d[i] = s[i] + b;
    }
  });
}

// Below this many multiply-adds a (sample, group) product runs on one thread, the
// pairs split among threads (as conv_kernels.cpp's kSmallProduct).
constexpr int64_t kSmallProduct = int64_t(1) << 17;
// Below this many multiply-adds a weight gradient's per-sample product runs on one
// thread when there are samples for every thread (conv_direct_weight_grad).
constexpr int64_t kThreadedProduct = int64_t(32) << 20;
// Scratch for the padded images and outputs of samples processed together (floats).
constexpr int64_t kBatchFloats = int64_t(8) << 20;

}  // namespace

bool conv_direct_suits(const ConvGeom& g, int64_t c_small) {
  if (!stride_one(g) || g.small_numel() <= 0 || g.big_numel() <= 0) return false;
  return own_sgemm_suits(c_small / g.groups, wide_of(g).n);
}

void conv_direct_forward(const float* big, const float* w, const float* bias, float* small, int64_t n,
                         int64_t c_big, int64_t c_small, const ConvGeom& g) {
  const int64_t G = g.groups, cbg = c_big / G, csg = c_small / G, rows = cbg * g.kernel_numel();
  const int64_t B = g.big_numel(), L = g.small_numel();
  const Wide wide = wide_of(g);
  const std::vector<int64_t> off = row_offsets(g, wide, cbg);
  const int64_t padded = cbg * wide.plane + kRowsAtOverread;
  const int64_t items = n * G, threads = get_num_threads(), per_item = padded + csg * wide.n;
  // Whole samples per thread when they divide evenly (no shared image between the
  // threads' caches).
  if (csg * rows * wide.n <= kSmallProduct || (items >= threads && items % threads == 0)) {
    for_each_item<float>(items, true, per_item, [&](int64_t item, float* scratch) {
      const int64_t b = item / G, gi = item % G;
      float* P = scratch;
      float* out_wide = scratch + padded;
      pad_image(big + (b * c_big + gi * cbg) * B, P, cbg, g, wide);
      own_sgemm_ref(csg, wide.n, rows, MatrixRef{w + gi * csg * rows, rows, 1}, MatrixRef{P, 0, 1, off.data()},
                    0.0f, out_wide, wide.n);
      keep_valid(out_wide, bias ? bias + gi * csg : nullptr, small + (b * c_small + gi * csg) * L, csg, g, wide);
    });
    return;
  }
  // Else (fewer samples than threads, on many cores) a group's samples at a time, each
  // step one pool dispatch for all of them: the products share the threads (one
  // threaded product per sample ran 24 dispatches per call; at 16 threads and batch 8
  // the forward took as long as at 8).
  const int64_t chunk = std::clamp<int64_t>(kBatchFloats / per_item, 1, n);
  Buffer<float> scratch(chunk * per_item);
  for (int64_t gi = 0; gi < G; ++gi)
    for (int64_t b0 = 0; b0 < n; b0 += chunk) {
      const int64_t count = std::min(chunk, n - b0);
      float* P = scratch.data();
      float* out_wide = P + count * padded;
      parallel_for(count, 1, [&](int64_t i0, int64_t i1) {
        for (int64_t i = i0; i < i1; ++i) pad_image(big + ((b0 + i) * c_big + gi * cbg) * B, P + i * padded, cbg, g, wide);
      });
      own_sgemm_ref_batch(count, csg, wide.n, rows, MatrixRef{w + gi * csg * rows, rows, 1},
                          MatrixRef{P, 0, 1, off.data()}, padded, out_wide, csg * wide.n, wide.n);
      parallel_for(count, 1, [&](int64_t i0, int64_t i1) {
        for (int64_t i = i0; i < i1; ++i)
          keep_valid(out_wide + i * csg * wide.n, bias ? bias + gi * csg : nullptr,
                     small + ((b0 + i) * c_small + gi * csg) * L, csg, g, wide);
      });
    }
}

namespace {

// wide [channels, w.n] <- small [channels, small] at the valid positions, zeros
// between them (keep_valid's adjoint).
void widen(const float* small, float* wide, int64_t channels, const ConvGeom& g, const Wide& w) {
  const int64_t lines = g.small[0] * g.small[1], L = g.small_numel();
  parallel_for(channels, std::max<int64_t>(1, 16384 / w.n), [&](int64_t c0, int64_t c1) {
    for (int64_t c = c0; c < c1; ++c) {
      float* d = wide + c * w.n;
      std::fill(d, d + w.n, 0.0f);
      for (int64_t l = 0; l < lines; ++l)
        std::memcpy(d + l / g.small[1] * w.step0 + l % g.small[1] * w.step1, small + c * L + l * g.small[2],
                    size_t(g.small[2]) * 4);
    }
  });
}

}  // namespace

bool conv_direct_weight_grad_suits(const ConvGeom& g, int64_t c_big, int64_t c_small) {
  return conv_direct_suits(g, c_small) && own_sgemm_suits(c_big / g.groups * g.kernel_numel(), c_small / g.groups);
}

void conv_direct_weight_grad(const float* big, const float* small, float* gw, int64_t n, int64_t c_big,
                             int64_t c_small, const ConvGeom& g) {
  const int64_t G = g.groups, cbg = c_big / G, csg = c_small / G, rows = cbg * g.kernel_numel();
  const int64_t B = g.big_numel(), L = g.small_numel();
  const Wide wide = wide_of(g);
  const std::vector<int64_t> off = row_offsets(g, wide, cbg);
  // (pad_image zeroes the overread a B at offsets needs; as A the windows need none)
  const int64_t padded = cbg * wide.plane + kRowsAtOverread, per = rows * csg;
  // gw_g^T [rows, csg] = sum over samples of windows [rows, w.n] @ dy_wide^T [w.n, csg]:
  // the windows are the A operand, rows at offsets into the padded image (read in
  // place), and the sum over samples [b0, b1) is the product's beta.
  auto accumulate = [&](int64_t gi, int64_t b0, int64_t b1, float* gw_t, float* scratch) {
    float* P = scratch;
    float* dy_wide = P + padded;
    for (int64_t b = b0; b < b1; ++b) {
      pad_image(big + (b * c_big + gi * cbg) * B, P, cbg, g, wide);
      widen(small + (b * c_small + gi * csg) * L, dy_wide, csg, g, wide);
      own_sgemm_ref(rows, csg, wide.n, MatrixRef{P, 0, 1, off.data()}, MatrixRef{dy_wide, 1, wide.n},
                    b == b0 ? 0.0f : 1.0f, gw_t, csg);
    }
  };
  // Products up to kThreadedProduct run whole on one thread each: (group, chunk of the
  // batch) items, each summing its chunk into its own partial, the chunks added in
  // batch order. Larger ones run one after another, each threaded inside. (A 32->64
  // channel 14x14 layer, 4M multiply-adds a sample, spent more time dispatching 128
  // threaded products than computing them; a 64->64 56x56 one, 120M, is faster
  // threaded inside.)
  const int64_t threads = get_num_threads();
  const int64_t macs = rows * csg * wide.n;
  const int64_t chunks = macs <= kSmallProduct || (macs <= kThreadedProduct && n >= threads)
                             ? std::clamp<int64_t>(n, 1, threads)
                             : 1;
  std::vector<float> partial(size_t(G * chunks * per));
  for_each_item<float>(G * chunks, chunks > 1 || G >= threads, padded + csg * wide.n, [&](int64_t item, float* scratch) {
    const int64_t gi = item / chunks, c = item % chunks;
    accumulate(gi, n * c / chunks, n * (c + 1) / chunks, partial.data() + item * per, scratch);
  });
  for (int64_t gi = 0; gi < G; ++gi) {
    float* dst = gw + gi * per;
    for (int64_t s = 0; s < csg; ++s)
      for (int64_t p = 0; p < rows; ++p) {
        float sum = 0.0f;
        for (int64_t c = 0; c < chunks; ++c)
          if (n * c / chunks < n * (c + 1) / chunks) sum += partial[size_t((gi * chunks + c) * per + p * csg + s)];
        dst[s * rows + p] = sum;
      }
  }
}

namespace {

// The forward convolution that computes a stride-1 conv_transpose (see the Note).
ConvGeom transpose_as_conv(const ConvGeom& g) {
  ConvGeom t = g;
  for (int d = 0; d < 3; ++d) {
    t.big[d] = g.small[d];
    t.small[d] = g.big[d];
    t.pad[d] = g.dil[d] * (g.k[d] - 1) - g.pad[d];
  }
  return t;
}

}  // namespace

bool conv_direct_transpose_suits(const ConvGeom& g, int64_t c_big) {
  if (!stride_one(g)) return false;
  for (int d = 0; d < 3; ++d)
    if (g.pad[d] > g.dil[d] * (g.k[d] - 1)) return false;
  return conv_direct_suits(transpose_as_conv(g), c_big);
}

void conv_direct_transpose(const float* small, const float* w, const float* bias, float* big, int64_t n,
                           int64_t c_big, int64_t c_small, const ConvGeom& g) {
  const int64_t G = g.groups, cbg = c_big / G, csg = c_small / G, K = g.kernel_numel();
  // w [G, csg, cbg, K] -> flipped [G, cbg, csg, K]
  std::vector<float> flipped(size_t(c_big * csg * K));
  for (int64_t gi = 0; gi < G; ++gi)
    for (int64_t s = 0; s < csg; ++s)
      for (int64_t b = 0; b < cbg; ++b) {
        const float* src = w + ((gi * csg + s) * cbg + b) * K;
        float* dst = flipped.data() + ((gi * cbg + b) * csg + s) * K;
        for (int64_t kk = 0; kk < K; ++kk) dst[kk] = src[K - 1 - kk];
      }
  const ConvGeom t = transpose_as_conv(g);
  if (conv_winograd_suits(t, c_small, c_big)) return conv_winograd_forward(small, flipped.data(), bias, big, n, c_small, c_big, t);
  conv_direct_forward(small, flipped.data(), bias, big, n, c_small, c_big, t);
}

}  // namespace lucid::cpu
