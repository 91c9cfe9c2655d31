// im2col / col2im and the GEMM-based convolution loops (conv_kernels.h). Threading:
//  - large products (per sample and group, m * n * k > kSmallProduct): samples and
//    groups run one after another, each product threaded inside BLAS, im2col /
//    col2im split over lucid's pool (OpenBLAS cannot be told to use one thread for
//    one call, so samples cannot run side by side with threaded products);
//  - small products (depthwise, few channels): (sample, group) pairs are split among
//    lucid's threads; OpenBLAS runs products that small on the calling thread.
#include "backend/cpu/conv_kernels.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <memory>
#include <type_traits>
#include <vector>

#include "backend/cpu/blas.h"
#include "backend/cpu/conv_batched.h"
#include "backend/cpu/conv_direct.h"
#include "backend/cpu/conv_winograd.h"
#include "backend/cpu/conv_scratch.h"
#include "core/parallel.h"
#include "core/isa.h"


namespace lucid::cpu {

bool ConvGeom::is_pointwise() const {
  for (int d = 0; d < 3; ++d)
    if (k[d] != 1 || stride[d] != 1 || pad[d] != 0 || big[d] != small[d]) return false;
  return true;
}

namespace {

// The output positions o in [0, n_out) whose input position o * s - p + off lies in
// [0, n_in): a contiguous range [lo, hi).
inline void valid_range(int64_t n_out, int64_t n_in, int64_t s, int64_t p, int64_t off, int64_t& lo, int64_t& hi) {
  // o * s >= p - off  and  o * s < n_in + p - off
  const int64_t a = p - off, b = n_in + p - off;
  lo = a <= 0 ? 0 : (a + s - 1) / s;
  hi = b <= 0 ? 0 : (b + s - 1) / s;
  lo = std::min(lo, n_out);
  hi = std::clamp(hi, lo, n_out);
}


// Row r (channel r / K, tap r % K) of one image's column matrix: dst [L].
template <typename T>
void im2col_row(const T* img, T* dst, int64_t r, const ConvGeom& g) {
  const int64_t K = g.kernel_numel(), B = g.big_numel();
  const int64_t c = r / K, kk = r % K;
  const int64_t k0 = kk / (g.k[1] * g.k[2]), k1 = (kk / g.k[2]) % g.k[1], k2 = kk % g.k[2];
  const T* src = img + c * B;
  int64_t lo2, hi2;
  valid_range(g.small[2], g.big[2], g.stride[2], g.pad[2], k2 * g.dil[2], lo2, hi2);
  for (int64_t o0 = 0; o0 < g.small[0]; ++o0) {
    const int64_t i0 = o0 * g.stride[0] - g.pad[0] + k0 * g.dil[0];
    for (int64_t o1 = 0; o1 < g.small[1]; ++o1) {
      const int64_t i1 = o1 * g.stride[1] - g.pad[1] + k1 * g.dil[1];
      T* d = dst + (o0 * g.small[1] + o1) * g.small[2];
      if (i0 < 0 || i0 >= g.big[0] || i1 < 0 || i1 >= g.big[1]) {
        std::fill(d, d + g.small[2], T(0));
        continue;
      }
      const T* s = src + (i0 * g.big[1] + i1) * g.big[2] - g.pad[2] + k2 * g.dil[2];
      std::fill(d, d + lo2, T(0));
      if (g.stride[2] == 1) {
        std::memcpy(d + lo2, s + lo2, size_t(hi2 - lo2) * sizeof(T));
      } else {
        for (int64_t o2 = lo2; o2 < hi2; ++o2) d[o2] = s[o2 * g.stride[2]];
      }
      std::fill(d + hi2, d + g.small[2], T(0));
    }
  }
}

// One image's plane dst [B] of channel c (+)= the windows of its column rows, which
// start at col (channel c's first row) and lie ld apart.
template <typename T>
void col2im_plane(const T* col, int64_t ld, T* dst, const ConvGeom& g, bool overwrite) {
  const int64_t K = g.kernel_numel(), B = g.big_numel();
  // (zeroing one plane right before accumulating into it keeps it in cache)
  if (overwrite) std::fill(dst, dst + B, T(0));
  for (int64_t kk = 0; kk < K; ++kk) {
    const int64_t k0 = kk / (g.k[1] * g.k[2]), k1 = (kk / g.k[2]) % g.k[1], k2 = kk % g.k[2];
    const T* src = col + kk * ld;
    int64_t lo2, hi2;
    valid_range(g.small[2], g.big[2], g.stride[2], g.pad[2], k2 * g.dil[2], lo2, hi2);
    for (int64_t o0 = 0; o0 < g.small[0]; ++o0) {
      const int64_t i0 = o0 * g.stride[0] - g.pad[0] + k0 * g.dil[0];
      if (i0 < 0 || i0 >= g.big[0]) continue;
      for (int64_t o1 = 0; o1 < g.small[1]; ++o1) {
        const int64_t i1 = o1 * g.stride[1] - g.pad[1] + k1 * g.dil[1];
        if (i1 < 0 || i1 >= g.big[1]) continue;
        const T* s = src + (o0 * g.small[1] + o1) * g.small[2];
        T* d = dst + (i0 * g.big[1] + i1) * g.big[2] - g.pad[2] + k2 * g.dil[2];
        if (g.stride[2] == 1) {
          for (int64_t o2 = lo2; o2 < hi2; ++o2) d[o2] += s[o2];
        } else {
          for (int64_t o2 = lo2; o2 < hi2; ++o2) d[o2 * g.stride[2]] += s[o2];
        }
      }
    }
  }
}

}  // namespace

namespace {

// Windows of small images (K * L up to kWindowTable entries) move through a table
// of source offsets: window position (kk, l) reads plane[table[kk * L + l]], or
// the padding's zero where the entry is -1. The row walk below pays its index
// arithmetic per row of L values, which for a 2x2 image is more than the copy.
constexpr int64_t kWindowTable = 4096;

std::vector<int64_t> window_table(const ConvGeom& g) {
  const int64_t K = g.kernel_numel(), L = g.small_numel();
  std::vector<int64_t> table(size_t(K * L));
  for (int64_t kk = 0; kk < K; ++kk) {
    const int64_t k0 = kk / (g.k[1] * g.k[2]), k1 = (kk / g.k[2]) % g.k[1], k2 = kk % g.k[2];
    for (int64_t l = 0; l < L; ++l) {
      const int64_t o0 = l / (g.small[1] * g.small[2]), o1 = (l / g.small[2]) % g.small[1], o2 = l % g.small[2];
      const int64_t i0 = o0 * g.stride[0] - g.pad[0] + k0 * g.dil[0];
      const int64_t i1 = o1 * g.stride[1] - g.pad[1] + k1 * g.dil[1];
      const int64_t i2 = o2 * g.stride[2] - g.pad[2] + k2 * g.dil[2];
      const bool inside = i0 >= 0 && i0 < g.big[0] && i1 >= 0 && i1 < g.big[1] && i2 >= 0 && i2 < g.big[2];
      table[size_t(kk * L + l)] = inside ? (i0 * g.big[1] + i1) * g.big[2] + i2 : -1;
    }
  }
  return table;
}

}  // namespace

template <typename T>
void im2col_batch(const T* img, int64_t img_stride, int64_t count, T* col, int64_t channels, const ConvGeom& g) {
  const int64_t K = g.kernel_numel(), L = g.small_numel(), B = g.big_numel();
  const int64_t rows = channels * K, ld = count * L;
  if (K * L <= kWindowTable) {
    const std::vector<int64_t> table = window_table(g);
    // Item c * count + i is channel c of image i: its K rows' columns [i * L, (i+1) * L).
    parallel_for(channels * count, std::max<int64_t>(1, 4096 / (K * L)), [&](int64_t i0, int64_t i1) {
      for (int64_t it = i0; it < i1; ++it) {
        const int64_t c = it / count, i = it % count;
        const T* plane = img + i * img_stride + c * B;
        for (int64_t kk = 0; kk < K; ++kk) {
          const int64_t* t = table.data() + kk * L;
          T* dst = col + (c * K + kk) * ld + i * L;
          for (int64_t l = 0; l < L; ++l) dst[l] = t[l] >= 0 ? plane[t[l]] : T(0);
        }
      }
    });
    return;
  }
  // Item r * count + i is row r of image i: consecutive items write consecutive memory.
  parallel_for(rows * count, std::max<int64_t>(1, 4096 / std::max<int64_t>(1, L)), [&](int64_t i0, int64_t i1) {
    for (int64_t it = i0; it < i1; ++it) {
      const int64_t r = it / count, i = it % count;
      im2col_row(img + i * img_stride, col + r * ld + i * L, r, g);
    }
  });
}

template <typename T>
void col2im_batch(const T* col, int64_t count, T* img, int64_t img_stride, int64_t channels, const ConvGeom& g,
                  bool overwrite) {
  const int64_t K = g.kernel_numel(), L = g.small_numel(), B = g.big_numel(), ld = count * L;
  const std::vector<int64_t> table = K * L <= kWindowTable ? window_table(g) : std::vector<int64_t>();
  // (image, channel) planes are disjoint, so they split among threads without races.
  parallel_for(count * channels, std::max<int64_t>(1, 4096 / std::max<int64_t>(1, K * L)),
               [&](int64_t p0, int64_t p1) {
    for (int64_t p = p0; p < p1; ++p) {
      const int64_t i = p / channels, c = p % channels;
      const T* src = col + c * K * ld + i * L;
      T* plane = img + i * img_stride + c * B;
      if (table.empty()) {
        col2im_plane(src, ld, plane, g, overwrite);
        continue;
      }
      if (overwrite) std::fill(plane, plane + B, T(0));
      for (int64_t kk = 0; kk < K; ++kk) {
        const int64_t* t = table.data() + kk * L;
        const T* s = src + kk * ld;
        for (int64_t l = 0; l < L; ++l)
          if (t[l] >= 0) plane[t[l]] += s[l];
      }
    }
  });
}

template <typename T>
void im2col(const T* img, T* col, int64_t channels, const ConvGeom& g) {
  im2col_batch(img, 0, 1, col, channels, g);
}

template <typename T>
void col2im(const T* col, T* img, int64_t channels, const ConvGeom& g, bool overwrite) {
  col2im_batch(col, 1, img, 0, channels, g, overwrite);
}

namespace {

// A serial product for the small per-(sample, group) matrices of depthwise and
// few-channel convolutions, where a BLAS call (and its threading) costs more than
// the arithmetic. C = alpha * op(A) @ op(B) + beta * C, as gemm_raw. Compiled for
// AVX-512 / AVX2 (with FMA, as BLAS products round) and picked at run time.
template <typename T>
[[gnu::always_inline]] inline void small_gemm_body(bool ta, bool tb, int64_t m, int64_t n, int64_t k, T alpha,
                                                   const T* A, int64_t lda, const T* B, int64_t ldb, T beta, T* C,
                                                   int64_t ldc) {
  for (int64_t i = 0; i < m; ++i) {
    T* __restrict c = C + i * ldc;
    if (tb) {  // rows of A and B are both contiguous along k: dot products
      for (int64_t j = 0; j < n; ++j) {
        const T* __restrict ar = A + i * lda;
        const T* __restrict br = B + j * ldb;
        // 16 partial sums, so the loop vectorises (a single sum would have to add in order)
        T part[16] = {};
        int64_t p = 0;
        for (; p + 16 <= k; p += 16)
          for (int q = 0; q < 16; ++q) part[q] += ar[p + q] * br[p + q];
        T acc = 0;
        for (; p < k; ++p) acc += ar[p] * br[p];
        for (int q = 0; q < 16; ++q) acc += part[q];
        c[j] = (beta == T(0) ? T(0) : T(beta * c[j])) + alpha * acc;
      }
      continue;
    }
    if (beta == T(0)) std::fill(c, c + n, T(0));
    else for (int64_t j = 0; j < n; ++j) c[j] = T(beta * c[j]);
    for (int64_t p = 0; p < k; ++p) {
      const T av = alpha * (ta ? A[p * lda + i] : A[i * lda + p]);
      const T* __restrict br = B + p * ldb;
      for (int64_t j = 0; j < n; ++j) c[j] += av * br[j];
    }
  }
}

#if LUCID_X86_DISPATCH
template <typename T>
__attribute__((target("avx512f,avx512bw,avx512dq,avx512vl,avx2,fma"))) void small_gemm_avx512(
    bool ta, bool tb, int64_t m, int64_t n, int64_t k, T alpha, const T* A, int64_t lda, const T* B, int64_t ldb,
    T beta, T* C, int64_t ldc) {
  small_gemm_body<T>(ta, tb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
}
template <typename T>
__attribute__((target("avx2,fma"))) void small_gemm_avx2(bool ta, bool tb, int64_t m, int64_t n, int64_t k, T alpha,
                                                          const T* A, int64_t lda, const T* B, int64_t ldb, T beta,
                                                          T* C, int64_t ldc) {
  small_gemm_body<T>(ta, tb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
}
#endif

template <typename T>
void small_gemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, T alpha, const T* A, int64_t lda, const T* B,
                int64_t ldb, T beta, T* C, int64_t ldc) {
#if LUCID_X86_DISPATCH
  static const Isa isa = cpu_isa();
  if (isa == Isa::Avx512) return small_gemm_avx512<T>(ta, tb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
  if (isa == Isa::Avx2) return small_gemm_avx2<T>(ta, tb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
#endif
  small_gemm_body<T>(ta, tb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
}

// One product of a convolution. `serial`: called from several of lucid's threads at
// once, where gemm_raw runs on the calling thread (OpenBLAS is single-threaded:
// Note [One pool for products] in blas.cpp); without BLAS, small_gemm.
template <typename T>
void product(bool serial, bool ta, bool tb, int64_t m, int64_t n, int64_t k, T alpha, const T* A, int64_t lda,
             const T* B, int64_t ldb, T beta, T* C, int64_t ldc) {
#ifndef LUCID_HAVE_OPENBLAS
  if (serial) return small_gemm<T>(ta, tb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
#endif
  (void)serial;
  gemm_raw<T>(ta, tb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
}

// Below this many multiply-adds per (sample, group) product, (sample, group) pairs
// are split among lucid's threads, each running serial products; above, they run
// one after another and gemm_raw splits each product over the pool.
constexpr int64_t kSmallProduct = int64_t(1) << 17;

}  // namespace

template <typename T>
void conv_forward(const T* big, const T* w, const T* bias, T* small, int64_t n, int64_t c_big, int64_t c_small,
                  const ConvGeom& g) {
  const int64_t G = g.groups, cbg = c_big / G, csg = c_small / G, K = g.kernel_numel();
  const int64_t L = g.small_numel(), B = g.big_numel(), rows = cbg * K;
  if (conv_batched_suits(g, n, c_big, c_small)) return conv_batched_forward(big, w, bias, small, n, c_big, c_small, g);
  const bool direct = g.is_pointwise();
  if constexpr (std::is_same_v<T, float>)
    if (!direct) {
      if (conv_winograd_suits(g, c_big, c_small)) return conv_winograd_forward(big, w, bias, small, n, c_big, c_small, g);
      if (conv_direct_suits(g, c_small)) return conv_direct_forward(big, w, bias, small, n, c_big, c_small, g);
    }
  const bool split = csg * rows * L <= kSmallProduct;
  for_each_item<T>(n * G, split, direct ? 0 : rows * L, [&](int64_t item, T* col) {
    const int64_t b = item / G, gi = item % G;
    const T* img = big + (b * c_big + gi * cbg) * B;
    const T* cm = img;
    if (!direct) {
      im2col(img, col, cbg, g);
      cm = col;
    }
    T* out = small + (b * c_small + gi * csg) * L;
    product<T>(split, false, false, csg, L, rows, T(1), w + gi * csg * rows, rows, cm, L, T(0), out, L);
    if (bias) add_channel_bias(out, bias + gi * csg, csg, L);
  });
}

template <typename T>
void conv_transpose_forward(const T* small, const T* w, const T* bias, T* big, int64_t n, int64_t c_big,
                            int64_t c_small, const ConvGeom& g) {
  const int64_t G = g.groups, cbg = c_big / G, csg = c_small / G, K = g.kernel_numel();
  const int64_t L = g.small_numel(), B = g.big_numel(), rows = cbg * K;
  if (conv_batched_suits(g, n, c_big, c_small))
    return conv_batched_transpose(small, w, bias, big, n, c_big, c_small, g);
  const bool direct = g.is_pointwise();
  if constexpr (std::is_same_v<T, float>)
    if (!direct && conv_direct_transpose_suits(g, c_big))
      return conv_direct_transpose(small, w, bias, big, n, c_big, c_small, g);
  const bool split = csg * rows * L <= kSmallProduct;
  for_each_item<T>(n * G, split, direct ? 0 : rows * L, [&](int64_t item, T* col) {
    const int64_t b = item / G, gi = item % G;
    T* img = big + (b * c_big + gi * cbg) * B;
    const T* src = small + (b * c_small + gi * csg) * L;
    const T* wg = w + gi * csg * rows;
    if (direct) {  // img [cbg, L] = wg^T [cbg, csg] @ src [csg, L]
      product<T>(split, true, false, rows, L, csg, T(1), wg, rows, src, L, T(0), img, L);
    } else {
      product<T>(split, true, false, rows, L, csg, T(1), wg, rows, src, L, T(0), col, L);
      col2im(col, img, cbg, g, /*overwrite=*/true);
    }
    if (bias) add_channel_bias(img, bias + gi * cbg, cbg, B);
  });
}

template <typename T>
void conv_weight_grad(const T* big, const T* small, T* gw, int64_t n, int64_t c_big, int64_t c_small,
                      const ConvGeom& g) {
  const int64_t G = g.groups, cbg = c_big / G, csg = c_small / G, K = g.kernel_numel();
  const int64_t L = g.small_numel(), B = g.big_numel(), rows = cbg * K;
  if (conv_batched_suits(g, n, c_big, c_small)) return conv_batched_weight_grad(big, small, gw, n, c_big, c_small, g);
  const bool direct = g.is_pointwise();
  if constexpr (std::is_same_v<T, float>)
    if (!direct && conv_direct_weight_grad_suits(g, c_big, c_small))
      return conv_direct_weight_grad(big, small, gw, n, c_big, c_small, g);
  const bool split = csg * rows * L <= kSmallProduct;
  // gw_g [csg, rows] (+)= dy [csg, L] @ col^T [L, rows] for samples [b0, b1) of group gi.
  auto accumulate = [&](int64_t gi, int64_t b0, int64_t b1, T* dst, T* col, bool serial) {
    for (int64_t b = b0; b < b1; ++b) {
      const T* img = big + (b * c_big + gi * cbg) * B;
      const T* cm = img;
      if (!direct) {
        im2col(img, col, cbg, g);
        cm = col;
      }
      const T* dy = small + (b * c_small + gi * csg) * L;
      product<T>(serial, false, true, csg, rows, L, T(1), dy, L, cm, L, b == b0 ? T(0) : T(1), dst, rows);
    }
  };
  const int64_t col_size = direct ? 0 : rows * L;
  (void)get_num_threads();  // (as in for_each_item: before any parallel_for)
  if (n == 0) {
    std::fill(gw, gw + c_small * rows, T(0));
  } else if (split && G > 1) {  // groups write disjoint slices of gw
    for_each_item<T>(G, true, col_size, [&](int64_t gi, T* col) {
      accumulate(gi, 0, n, gw + gi * csg * rows, col, true);
    });
  } else if (split && n > 1) {
    // One group, small products: fixed chunks of the batch (so the sum's order does
    // not depend on scheduling), each into its own partial sum, added in order.
    const int64_t chunks = std::min<int64_t>(n, pool_threads());
    const int64_t per = csg * rows;
    std::vector<T> partial(size_t(chunks * per));
    parallel_for(chunks, 1, [&](int64_t c0, int64_t c1) {
      Buffer<T> col(col_size);
      for (int64_t c = c0; c < c1; ++c) accumulate(0, n * c / chunks, n * (c + 1) / chunks, &partial[c * per],
                                                   col.data(), true);
    });
    std::copy(partial.begin(), partial.begin() + per, gw);
    for (int64_t c = 1; c < chunks; ++c)
      for (int64_t i = 0; i < per; ++i) gw[i] += partial[c * per + i];
  } else {
    Buffer<T> col(col_size);
    for (int64_t gi = 0; gi < G; ++gi) accumulate(gi, 0, n, gw + gi * csg * rows, col.data(), split);
  }
}

#define LUCID_CONV_INSTANTIATE(T)                                                                                  \
  template void im2col_batch<T>(const T*, int64_t, int64_t, T*, int64_t, const ConvGeom&);                         \
  template void col2im_batch<T>(const T*, int64_t, T*, int64_t, int64_t, const ConvGeom&, bool);                   \
  template void im2col<T>(const T*, T*, int64_t, const ConvGeom&);                                                \
  template void col2im<T>(const T*, T*, int64_t, const ConvGeom&, bool);                                                \
  template void conv_forward<T>(const T*, const T*, const T*, T*, int64_t, int64_t, int64_t, const ConvGeom&);     \
  template void conv_transpose_forward<T>(const T*, const T*, const T*, T*, int64_t, int64_t, int64_t,             \
                                          const ConvGeom&);                                                        \
  template void conv_weight_grad<T>(const T*, const T*, T*, int64_t, int64_t, int64_t, const ConvGeom&);

LUCID_CONV_INSTANTIATE(float)
LUCID_CONV_INSTANTIATE(double)

}  // namespace lucid::cpu
