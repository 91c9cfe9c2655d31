// Vectorised max/min/argmax/argmin of the float dtypes (Note [Fast reductions] in
// reduce_fast.cpp). Each lane keeps its best value and that value's first index;
// a lane that meets a NaN keeps it (and its index). Lanes, blocks and tiles are
// then combined with the same rule: NaN first, then the better value, then the
// smaller index, so the result is PyTorch's (first extremum, first NaN).
#include <algorithm>
#include <cstring>
#include <vector>

#include "backend/cpu/reduce_fast.h"
#include "backend/cpu/reduce_simd.h"
#include "core/error.h"
#include "core/half_rows.h"
#include "core/parallel.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#endif

namespace lucid::cpu {

namespace {

constexpr int64_t kRowBlock = 16384;
constexpr int64_t kColChunk = 1024;
constexpr int64_t kMaxRowTiles = 16;

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

template <typename T>
struct Best {
  T v;
  int64_t i;
};

// Whether (v, i) should replace the current best (rv, ri).
template <bool kMax, typename T>
LUCID_INLINE bool better(T v, int64_t i, T rv, int64_t ri) {
  const bool vn = v != v, rn = rv != rv;
  if (vn || rn) return vn && (!rn || i < ri);
  if (v == rv) return i < ri;
  return kMax ? v > rv : v < rv;
}

// Scalar versions (any ISA; also the tails of the vector ones).
template <bool kMax, typename T>
Best<T> row_block_scalar(const T* x, int64_t len) {
  Best<T> r{x[0], 0};
  for (int64_t k = 1; k < len; ++k)
    if (better<kMax>(x[k], k, r.v, r.i)) r = {x[k], k};
  return r;
}
template <bool kMax, typename T, typename IT>
void col_tile_scalar(T* bv, IT* bi, const T* x, int64_t rows, int64_t stride, int64_t i0, int64_t len) {
  for (int64_t i = i0; i < len; ++i) bv[i] = x[i], bi[i] = 0;
  for (int64_t k = 1; k < rows; ++k)
    for (int64_t i = i0; i < len; ++i)
      if (better<kMax>(x[k * stride + i], k, bv[i], int64_t(bi[i]))) bv[i] = x[k * stride + i], bi[i] = IT(k);
}

#if defined(__x86_64__) && defined(__GNUC__)
// AVX2 lanes (GCC's generic vector extensions scalarise these masked selects).
// Each lane takes v when it is better, or when it is the lane's first NaN.
#define LUCID_AVX2 __attribute__((target("avx2")))

struct F32x8 {
  using T = float;
  using IT = int32_t;
  static constexpr int L = 8;
  LUCID_AVX2 static __m256 load(const float* p) { return _mm256_loadu_ps(p); }
  template <bool kMax>
  LUCID_AVX2 static __m256 take(__m256 v, __m256 b) {
    __m256 c = _mm256_cmp_ps(v, b, kMax ? _CMP_GT_OQ : _CMP_LT_OQ);
    return _mm256_or_ps(c, _mm256_and_ps(_mm256_cmp_ps(v, v, _CMP_UNORD_Q), _mm256_cmp_ps(b, b, _CMP_ORD_Q)));
  }
  LUCID_AVX2 static __m256 blend(__m256 a, __m256 b, __m256 c) { return _mm256_blendv_ps(a, b, c); }
  LUCID_AVX2 static __m256i blendi(__m256i a, __m256i b, __m256 c) {
    return _mm256_castps_si256(_mm256_blendv_ps(_mm256_castsi256_ps(a), _mm256_castsi256_ps(b), c));
  }
  LUCID_AVX2 static __m256i iota() { return _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7); }
  LUCID_AVX2 static __m256i splat(int64_t k) { return _mm256_set1_epi32(int32_t(k)); }
  LUCID_AVX2 static __m256i add(__m256i a, __m256i b) { return _mm256_add_epi32(a, b); }
};
struct F64x4 {
  using T = double;
  using IT = int64_t;
  static constexpr int L = 4;
  LUCID_AVX2 static __m256d load(const double* p) { return _mm256_loadu_pd(p); }
  template <bool kMax>
  LUCID_AVX2 static __m256d take(__m256d v, __m256d b) {
    __m256d c = _mm256_cmp_pd(v, b, kMax ? _CMP_GT_OQ : _CMP_LT_OQ);
    return _mm256_or_pd(c, _mm256_and_pd(_mm256_cmp_pd(v, v, _CMP_UNORD_Q), _mm256_cmp_pd(b, b, _CMP_ORD_Q)));
  }
  LUCID_AVX2 static __m256d blend(__m256d a, __m256d b, __m256d c) { return _mm256_blendv_pd(a, b, c); }
  LUCID_AVX2 static __m256i blendi(__m256i a, __m256i b, __m256d c) {
    return _mm256_castpd_si256(_mm256_blendv_pd(_mm256_castsi256_pd(a), _mm256_castsi256_pd(b), c));
  }
  LUCID_AVX2 static __m256i iota() { return _mm256_setr_epi64x(0, 1, 2, 3); }
  LUCID_AVX2 static __m256i splat(int64_t k) { return _mm256_set1_epi64x(k); }
  LUCID_AVX2 static __m256i add(__m256i a, __m256i b) { return _mm256_add_epi64(a, b); }
};

template <bool kMax, typename S>
LUCID_AVX2 Best<typename S::T> row_block_avx2(const typename S::T* x, int64_t len) {
  using T = typename S::T;
  constexpr int L = S::L;
  if (len < 2 * L) return row_block_scalar<kMax>(x, len);
  // two independent lane sets (even / odd vectors) to hide the compare latency
  auto b0 = S::load(x), b1 = S::load(x + L);
  __m256i i0 = S::iota(), i1 = S::add(i0, S::splat(L)), c0 = i0, c1 = i1;
  const __m256i step = S::splat(2 * L);
  int64_t k = 2 * L;
  for (; k + 2 * L <= len; k += 2 * L) {
    c0 = S::add(c0, step), c1 = S::add(c1, step);
    auto v0 = S::load(x + k), v1 = S::load(x + k + L);
    auto m0 = S::template take<kMax>(v0, b0), m1 = S::template take<kMax>(v1, b1);
    b0 = S::blend(b0, v0, m0), b1 = S::blend(b1, v1, m1);
    i0 = S::blendi(i0, c0, m0), i1 = S::blendi(i1, c1, m1);
  }
  alignas(32) T bv[2 * L];
  alignas(32) typename S::IT bi[2 * L];
  std::memcpy(bv, &b0, sizeof b0), std::memcpy(bv + L, &b1, sizeof b1);
  std::memcpy(bi, &i0, sizeof i0), std::memcpy(bi + L, &i1, sizeof i1);
  Best<T> r{bv[0], int64_t(bi[0])};
  for (int j = 1; j < 2 * L; ++j)
    if (better<kMax>(bv[j], int64_t(bi[j]), r.v, r.i)) r = {bv[j], int64_t(bi[j])};
  for (; k < len; ++k)
    if (better<kMax>(x[k], k, r.v, r.i)) r = {x[k], k};
  return r;
}

// Values only (max/amax without indices): plain vector max/min, NaN noted aside.
template <bool kMax>
LUCID_AVX2 float row_value_avx2(const float* x, int64_t len) {
  if (len < 32) return row_block_scalar<kMax>(x, len).v;
  __m256 m[4], nan = _mm256_setzero_ps();
  for (int j = 0; j < 4; ++j) m[j] = _mm256_loadu_ps(x + 8 * j);
  int64_t k = 32;
  for (; k + 32 <= len; k += 32)
    for (int j = 0; j < 4; ++j) {
      __m256 v = _mm256_loadu_ps(x + k + 8 * j);
      nan = _mm256_or_ps(nan, _mm256_cmp_ps(v, v, _CMP_UNORD_Q));
      m[j] = kMax ? _mm256_max_ps(v, m[j]) : _mm256_min_ps(v, m[j]);
    }
  alignas(32) float lanes[32];
  for (int j = 0; j < 4; ++j) _mm256_store_ps(lanes + 8 * j, m[j]);
  if (_mm256_movemask_ps(nan)) return row_block_scalar<kMax>(x, len).v;  // rare: find the NaN exactly
  float r = lanes[0];
  for (int j = 1; j < 32; ++j) r = (kMax ? lanes[j] > r : lanes[j] < r) || lanes[j] != lanes[j] ? lanes[j] : r;
  for (; k < len; ++k) r = (kMax ? x[k] > r : x[k] < r) || x[k] != x[k] ? x[k] : r;
  return r;
}

template <bool kMax, typename S>
LUCID_AVX2 void col_tile_avx2(typename S::T* bv, typename S::IT* bi, const typename S::T* x, int64_t rows,
                              int64_t stride, int64_t len) {
  constexpr int L = S::L;
  const int64_t vl = len / L * L;
  // Stream the tile's rows (contiguous runs); the running best of each column lives in bv/bi (L1).
  std::memcpy(bv, x, size_t(vl) * sizeof(*bv));
  std::fill(bi, bi + vl, typename S::IT(0));
  for (int64_t k = 1; k < rows; ++k) {
    const __m256i kv = S::splat(k);
    const auto* r = x + k * stride;
    for (int64_t i = 0; i < vl; i += L) {
      auto v = S::load(r + i), b = S::load(bv + i);
      auto m = S::template take<kMax>(v, b);
      b = S::blend(b, v, m);
      __m256i bidx = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(bi + i));
      bidx = S::blendi(bidx, kv, m);
      std::memcpy(bv + i, &b, sizeof b);
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(bi + i), bidx);
    }
  }
  col_tile_scalar<kMax>(bv, bi, x, rows, stride, vl, len);
}

// Values only (amax/amin): the same walk without the indices.
template <bool kMax, typename S>
LUCID_AVX2 void col_values_avx2(typename S::T* bv, const typename S::T* x, int64_t rows, int64_t stride,
                                int64_t len) {
  constexpr int L = S::L;
  const int64_t vl = len / L * L;
  std::memcpy(bv, x, size_t(len) * sizeof(*bv));
  int64_t k = 1;
  // Two rows per pass (values have no order to keep: any NaN wins, ties are equal).
  for (; k + 2 <= rows; k += 2) {
    const auto *r0 = x + k * stride, *r1 = r0 + stride;
    for (int64_t i = 0; i < vl; i += L) {
      auto v0 = S::load(r0 + i), v1 = S::load(r1 + i), b = S::load(bv + i);
      v0 = S::blend(v0, v1, S::template take<kMax>(v1, v0));
      b = S::blend(b, v0, S::template take<kMax>(v0, b));
      std::memcpy(bv + i, &b, sizeof b);
    }
  }
  for (; k < rows; ++k) {
    const auto* r = x + k * stride;
    for (int64_t i = 0; i < vl; i += L) {
      auto v = S::load(r + i), b = S::load(bv + i);
      b = S::blend(b, v, S::template take<kMax>(v, b));
      std::memcpy(bv + i, &b, sizeof b);
    }
  }
  for (int64_t r = 1; r < rows; ++r)  // the columns past the last whole vector
    for (int64_t i = vl; i < len; ++i)
      if (better<kMax>(x[r * stride + i], 1, bv[i], 0)) bv[i] = x[r * stride + i];
}

bool have_avx2() {
  static const bool yes = __builtin_cpu_supports("avx2");
  return yes;
}
#else
bool have_avx2() { return false; }
#endif

template <typename T> struct Avx2Of;
#if defined(__x86_64__) && defined(__GNUC__)
template <> struct Avx2Of<float> { using S = F32x8; };
template <> struct Avx2Of<double> { using S = F64x4; };
#endif

template <typename T>
Best<T> row_block(bool is_max, const T* x, int64_t len, bool need_index = true) {
#if defined(__x86_64__) && defined(__GNUC__)
  using S = typename Avx2Of<T>::S;
  if constexpr (std::is_same_v<T, float>)
    if (!need_index && have_avx2()) return {is_max ? row_value_avx2<true>(x, len) : row_value_avx2<false>(x, len), 0};
  if (have_avx2()) return is_max ? row_block_avx2<true, S>(x, len) : row_block_avx2<false, S>(x, len);
#endif
  return is_max ? row_block_scalar<true>(x, len) : row_block_scalar<false>(x, len);
}

template <typename T, typename IT>
void col_tile(bool is_max, T* bv, IT* bi, const T* x, int64_t rows, int64_t stride, int64_t len) {
#if defined(__x86_64__) && defined(__GNUC__)
  using S = typename Avx2Of<T>::S;
  if (have_avx2()) {
    if (is_max) col_tile_avx2<true, S>(bv, bi, x, rows, stride, len);
    else col_tile_avx2<false, S>(bv, bi, x, rows, stride, len);
    return;
  }
#endif
  if (is_max) col_tile_scalar<true>(bv, bi, x, rows, stride, 0, len);
  else col_tile_scalar<false>(bv, bi, x, rows, stride, 0, len);
}

// The values-only column tile (amax/amin): no indices to carry.
template <bool kMax, typename T>
void col_values_scalar(T* bv, const T* x, int64_t rows, int64_t stride, int64_t len) {
  std::memcpy(bv, x, size_t(len) * sizeof(*bv));
  for (int64_t k = 1; k < rows; ++k)
    for (int64_t i = 0; i < len; ++i)
      if (better<kMax>(x[k * stride + i], 1, bv[i], 0)) bv[i] = x[k * stride + i];
}

template <typename T>
void col_values(bool is_max, T* bv, const T* x, int64_t rows, int64_t stride, int64_t len) {
#if defined(__x86_64__) && defined(__GNUC__)
  using S = typename Avx2Of<T>::S;
  if (have_avx2()) {
    if (is_max) col_values_avx2<true, S>(bv, x, rows, stride, len);
    else col_values_avx2<false, S>(bv, x, rows, stride, len);
    return;
  }
#endif
  if (is_max) col_values_scalar<true>(bv, x, rows, stride, len);
  else col_values_scalar<false>(bv, x, rows, stride, len);
}

template <typename T>
bool better_rt(bool is_max, T v, int64_t i, T rv, int64_t ri) {
  return is_max ? better<true>(v, i, rv, ri) : better<false>(v, i, rv, ri);
}

// float16 / bfloat16 (Note [16-bit rows]): a row block kHalfWindow elements at a time
// (a stack buffer that stays in L1), or kHalfGroup rows of a column tile at a time,
// widened into a float buffer (exact, and so is the order of the values) and walked by
// the float kernels; the pieces' results merge in order, the earlier winning a tie, as
// one walk would.
constexpr int64_t kHalfGroup = 16;
template <typename T>
  requires kIsHalfFloat<T>
Best<T> row_block(bool is_max, const T* x, int64_t len, bool need_index = true) {
  alignas(64) float f[kHalfWindow];
  Best<float> best{0.f, 0};
  for (int64_t k = 0; k < len; k += kHalfWindow) {
    const int64_t m = std::min(kHalfWindow, len - k);
    widen_rows(f, x + k, m);
    Best<float> r = row_block(is_max, static_cast<const float*>(f), m, need_index);
    r.i += k;
    if (k == 0 || better_rt(is_max, r.v, r.i, best.v, best.i)) best = r;
  }
  return {T(best.v), best.i};
}
// The tile's best of each column (indices: bi) into bv, through float groups; a null bi
// walks the values alone.
template <typename T, typename IT>
  requires kIsHalfFloat<T>
void half_col_tile(bool is_max, T* bv, IT* bi, const T* x, int64_t rows, int64_t stride, int64_t len) {
  float* f = thread_buffer<float>((kHalfGroup + 2) * len);
  float *best = f + kHalfGroup * len, *group = best + len;
  IT* idx = bi ? thread_buffer<IT>(2 * len) : nullptr;
  IT* group_idx = bi ? idx + len : nullptr;
  for (int64_t k0 = 0; k0 < rows; k0 += kHalfGroup) {
    const int64_t g = std::min(kHalfGroup, rows - k0);
    for (int64_t j = 0; j < g; ++j) widen_rows(f + j * len, x + (k0 + j) * stride, len);
    float* gv = k0 == 0 ? best : group;
    IT* gi = k0 == 0 ? idx : group_idx;
    if (bi) col_tile(is_max, gv, gi, static_cast<const float*>(f), g, len, len);
    else col_values(is_max, gv, static_cast<const float*>(f), g, len, len);
    if (k0 == 0) continue;
    for (int64_t i = 0; i < len; ++i) {
      const int64_t at = bi ? int64_t(gi[i]) + k0 : 1, current = bi ? int64_t(idx[i]) : 0;
      if (better_rt(is_max, gv[i], at, best[i], current)) {
        best[i] = gv[i];
        if (bi) idx[i] = IT(at);
      }
    }
  }
  narrow_rows(bv, best, len);
  if (bi) std::copy(idx, idx + len, bi);
}
template <typename T, typename IT>
  requires kIsHalfFloat<T>
void col_tile(bool is_max, T* bv, IT* bi, const T* x, int64_t rows, int64_t stride, int64_t len) {
  half_col_tile(is_max, bv, bi, x, rows, stride, len);
}
template <typename T>
  requires kIsHalfFloat<T>
void col_values(bool is_max, T* bv, const T* x, int64_t rows, int64_t stride, int64_t len) {
  half_col_tile(is_max, bv, static_cast<int32_t*>(nullptr), x, rows, stride, len);
}

template <typename T>
void extremum(const T* x, int64_t outer, int64_t n, int64_t inner, bool is_max, T* values, int64_t* indices) {
  if (outer * inner == 0 || n == 0) return;  // no outputs (n == 0 is an error upstream)
  auto emit = [&](int64_t at, Best<T> b) {
    if (values) values[at] = b.v;
    if (indices) indices[at] = b.i;
  };
  if (inner == 1) {
    const int64_t nb = ceil_div(n, kRowBlock);
    std::vector<Best<T>> part(size_t(outer * nb));
    parallel_for(outer * nb, std::max<int64_t>(1, 32768 / std::min(n, kRowBlock)), [&](int64_t b, int64_t e) {
      for (int64_t it = b; it < e; ++it) {
        const int64_t o = it / nb, k0 = (it % nb) * kRowBlock;
        Best<T> r = row_block(is_max, x + o * n + k0, std::min(kRowBlock, n - k0), indices != nullptr);
        part[size_t(it)] = {r.v, r.i + k0};
      }
    });
    for (int64_t o = 0; o < outer; ++o) {
      Best<T> r = part[size_t(o * nb)];
      for (int64_t kb = 1; kb < nb; ++kb) {
        const Best<T>& c = part[size_t(o * nb + kb)];
        if (better_rt(is_max, c.v, c.i, r.v, r.i)) r = c;
      }
      emit(o, r);
    }
    return;
  }
  using IT = std::conditional_t<std::is_same_v<T, double>, int64_t, int32_t>;
  const int64_t chunk = std::min(inner, kColChunk), nch = ceil_div(inner, chunk);
  // At most kMaxRowTiles tiles down a column, so that their partials and the serial
  // pass that combines them stay small.
  const int64_t trows = std::max({int64_t(16), 262144 / chunk, ceil_div(n, kMaxRowTiles)}), nkb = ceil_div(n, trows);
  // Tiles' partial results; indices only when asked for (amax/amin walk the values
  // alone, without carrying an index per column).
  std::vector<T> pv(size_t(outer * nkb * inner));
  std::vector<IT> pi(indices ? size_t(outer * nkb * inner) : 0);
  parallel_for(outer * nch * nkb, std::max<int64_t>(1, 32768 / (trows * chunk)), [&](int64_t b, int64_t e) {
    for (int64_t it = b; it < e; ++it) {
      const int64_t o = it / (nch * nkb), c = (it / nkb) % nch, kb = it % nkb;
      const int64_t i0 = c * chunk, len = std::min(chunk, inner - i0), k0 = kb * trows;
      const size_t at = size_t((o * nkb + kb) * inner + i0);
      const T* src = x + (o * n + k0) * inner + i0;
      if (indices) col_tile(is_max, pv.data() + at, pi.data() + at, src, std::min(trows, n - k0), inner, len);
      else col_values(is_max, pv.data() + at, src, std::min(trows, n - k0), inner, len);
    }
  });
  // Tiles combine in row order (a value-only tile stands at its first row).
  auto index_at = [&](size_t at) { return indices ? int64_t(pi[at]) : int64_t(0); };
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      size_t at = size_t(o * nkb * inner + i);
      Best<T> r{pv[at], index_at(at)};
      for (int64_t kb = 1; kb < nkb; ++kb) {
        at = size_t((o * nkb + kb) * inner + i);
        const int64_t ci = index_at(at) + kb * trows;
        if (better_rt(is_max, pv[at], ci, r.v, r.i)) r = {pv[at], ci};
      }
      emit(o * inner + i, r);
    }
}

}  // namespace

void extremum_reduce(Dtype d, const std::byte* x, int64_t outer, int64_t n, int64_t inner, bool is_max,
                     std::byte* values, int64_t* indices) {
  auto run = [&]<typename T>() {
    extremum(reinterpret_cast<const T*>(x), outer, n, inner, is_max, reinterpret_cast<T*>(values), indices);
  };
  switch (d) {
    case Dtype::F32: return run.template operator()<float>();
    case Dtype::F64: return run.template operator()<double>();
    case Dtype::F16: return run.template operator()<Half>();
    case Dtype::BF16: return run.template operator()<BFloat16>();
    default: LUCID_CHECK(false, RuntimeError, "internal: extremum_reduce given ", dtype_name(d));
  }
}

}  // namespace lucid::cpu
