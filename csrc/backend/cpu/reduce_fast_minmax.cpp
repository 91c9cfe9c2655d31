// Vectorised max/min/argmax/argmin of float32/float64 (Note [Fast reductions] in
// reduce_fast.cpp). Each lane keeps its best value and that value's first index;
// a lane that meets a NaN keeps it (and its index). Lanes, blocks and tiles are
// then combined with the same rule: NaN first, then the better value, then the
// smaller index, so the result is PyTorch's (first extremum, first NaN).
#include <algorithm>
#include <vector>

#include "backend/cpu/parallel.h"
#include "backend/cpu/reduce_fast.h"
#include "backend/cpu/reduce_simd.h"

namespace lucid::cpu {

namespace {

using namespace simd;

constexpr int64_t kRowBlock = 16384;
constexpr int64_t kColChunk = 1024;

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

// Lane types: values V of T and an index lane type I of the same width.
template <typename T> struct Lanes;
template <> struct Lanes<float> { using V = vf16; using I = vi16; using IT = int32_t; static constexpr int L = 16; };
template <> struct Lanes<double> { using V = vd8; using I = vl8; using IT = int64_t; static constexpr int L = 8; };

template <bool kMax, typename V>
LUCID_INLINE auto take(V v, V best) {
  if constexpr (kMax) return (v > best) | ((v != v) & (best == best));
  else return (v < best) | ((v != v) & (best == best));
}

template <bool kMax, typename T>
LUCID_INLINE Best<T> row_block_t(const T* x, int64_t len) {
  using V = typename Lanes<T>::V;
  using I = typename Lanes<T>::I;
  constexpr int L = Lanes<T>::L;
  Best<T> r{x[0], 0};
  int64_t k = 1;
  if (len >= L) {
    V best = load<V>(x);
    I bi, cur;
    for (int j = 0; j < L; ++j) bi[j] = j;
    cur = bi;
    for (k = L; k + L <= len; k += L) {
      cur += L;
      V v = load<V>(x + k);
      auto c = take<kMax>(v, best);
      best = c ? v : best;
      bi = c ? cur : bi;
    }
    r = {best[0], int64_t(bi[0])};
    for (int j = 1; j < L; ++j)
      if (better<kMax>(T(best[j]), int64_t(bi[j]), r.v, r.i)) r = {T(best[j]), int64_t(bi[j])};
  }
  for (; k < len; ++k)
    if (better<kMax>(x[k], k, r.v, r.i)) r = {x[k], k};
  return r;
}

// acc values / indices (relative to the tile) of `len` columns over `rows` rows.
template <bool kMax, typename T>
LUCID_INLINE void col_tile_t(T* bv, typename Lanes<T>::IT* bi, const T* x, int64_t rows, int64_t stride,
                             int64_t len) {
  using V = typename Lanes<T>::V;
  using I = typename Lanes<T>::I;
  using IT = typename Lanes<T>::IT;
  constexpr int L = Lanes<T>::L;
  std::copy(x, x + len, bv);
  std::fill(bi, bi + len, IT(0));
  for (int64_t k = 1; k < rows; ++k) {
    const T* r = x + k * stride;
    const I kv = I{} + IT(k);
    int64_t i = 0;
    for (; i + L <= len; i += L) {
      V v = load<V>(r + i), best = load<V>(bv + i);
      auto c = take<kMax>(v, best);
      store(bv + i, c ? v : best);
      store(bi + i, c ? kv : load<I>(bi + i));
    }
    for (; i < len; ++i)
      if (better<kMax>(r[i], k, bv[i], int64_t(bi[i]))) bv[i] = r[i], bi[i] = IT(k);
  }
}

LUCID_CLONES Best<float> row_block(bool is_max, const float* x, int64_t len) {
  return is_max ? row_block_t<true>(x, len) : row_block_t<false>(x, len);
}
LUCID_CLONES Best<double> row_block(bool is_max, const double* x, int64_t len) {
  return is_max ? row_block_t<true>(x, len) : row_block_t<false>(x, len);
}
LUCID_CLONES void col_tile(bool is_max, float* bv, int32_t* bi, const float* x, int64_t rows, int64_t stride,
                           int64_t len) {
  is_max ? col_tile_t<true>(bv, bi, x, rows, stride, len) : col_tile_t<false>(bv, bi, x, rows, stride, len);
}
LUCID_CLONES void col_tile(bool is_max, double* bv, int64_t* bi, const double* x, int64_t rows, int64_t stride,
                           int64_t len) {
  is_max ? col_tile_t<true>(bv, bi, x, rows, stride, len) : col_tile_t<false>(bv, bi, x, rows, stride, len);
}

template <typename T>
bool better_rt(bool is_max, T v, int64_t i, T rv, int64_t ri) {
  return is_max ? better<true>(v, i, rv, ri) : better<false>(v, i, rv, ri);
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
        Best<T> r = row_block(is_max, x + o * n + k0, std::min(kRowBlock, n - k0));
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
  using IT = typename Lanes<T>::IT;
  const int64_t chunk = std::min(inner, kColChunk), nch = ceil_div(inner, chunk);
  const int64_t trows = std::max<int64_t>(16, 262144 / chunk), nkb = ceil_div(n, trows);
  std::vector<T> pv(size_t(outer * nkb * inner));
  std::vector<IT> pi(size_t(outer * nkb * inner));
  parallel_for(outer * nch * nkb, std::max<int64_t>(1, 32768 / (trows * chunk)), [&](int64_t b, int64_t e) {
    for (int64_t it = b; it < e; ++it) {
      const int64_t o = it / (nch * nkb), c = (it / nkb) % nch, kb = it % nkb;
      const int64_t i0 = c * chunk, len = std::min(chunk, inner - i0), k0 = kb * trows;
      const size_t at = size_t((o * nkb + kb) * inner + i0);
      col_tile(is_max, pv.data() + at, pi.data() + at, x + (o * n + k0) * inner + i0, std::min(trows, n - k0),
               inner, len);
    }
  });
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      size_t at = size_t(o * nkb * inner + i);
      Best<T> r{pv[at], int64_t(pi[at])};
      for (int64_t kb = 1; kb < nkb; ++kb) {
        at = size_t((o * nkb + kb) * inner + i);
        const int64_t ci = int64_t(pi[at]) + kb * trows;
        if (better_rt(is_max, pv[at], ci, r.v, r.i)) r = {pv[at], ci};
      }
      emit(o * inner + i, r);
    }
}

}  // namespace

void extremum_reduce(Dtype d, const std::byte* x, int64_t outer, int64_t n, int64_t inner, bool is_max,
                     std::byte* values, int64_t* indices) {
  if (d == Dtype::F32)
    extremum(reinterpret_cast<const float*>(x), outer, n, inner, is_max, reinterpret_cast<float*>(values), indices);
  else
    extremum(reinterpret_cast<const double*>(x), outer, n, inner, is_max, reinterpret_cast<double*>(values),
             indices);
}

}  // namespace lucid::cpu
