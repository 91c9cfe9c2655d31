// Note [Fast reductions]
// Rows (inner == 1) are cut into blocks of kRowBlock elements; each (row, block)
// is one work item whose partial result is combined with the others of its row in
// block order. Columns (inner > 1) are cut into tiles of kColChunk columns by
// `tile_rows` rows (taller when a column would have more than kMaxRowTiles tiles);
// a tile streams its rows four at a time (contiguous runs of up to 16 KiB, so the
// prefetchers follow whole pages; accumulators in L1) and the tiles of one output
// are combined in row order. (1024-column tiles, one row per pass and no cap on
// the tiles ran sum(0) of [4096, 4096] at 2-3 ms against 1.2 ms for sum(1).)
// Block and tile sizes depend on the shape only, so the pool's thread count never
// changes the bits.
// Sums accumulate in double lanes: more precise than float cascade sums, and the
// conversion is free next to the memory traffic.
#include "backend/cpu/reduce_fast.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "core/half_rows.h"
#include "backend/cpu/reduce_simd.h"
#include "core/error.h"
#include "core/parallel.h"

namespace lucid::cpu {

namespace {

using namespace simd;

constexpr int64_t kRowBlock = 16384;
constexpr int64_t kColChunk = 4096;
constexpr int64_t kMaxRowTiles = 16;
constexpr int64_t kItemWork = 32768;  // elements below which an item is not worth a thread

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }
int64_t tile_rows(int64_t chunk) { return std::max<int64_t>(16, 262144 / std::max<int64_t>(chunk, 1)); }
int64_t grain_for(int64_t work_per_item) { return std::max<int64_t>(1, kItemWork / std::max<int64_t>(work_per_item, 1)); }

// ---- moments --------------------------------------------------------------

template <Moment M, typename V>
LUCID_INLINE V apply(V v, V m) {
  if constexpr (M == Moment::Sum) return v;
  else if constexpr (M == Moment::Abs) return select_gt(V{}, v, -v, v);  // (v < 0 ? -v : v)
  else if constexpr (M == Moment::Sq) return v * v;
  else return (v - m) * (v - m);
}
template <Moment M>
LUCID_INLINE double apply1(double v, double m) {
  if constexpr (M == Moment::Sum) return v;
  else if constexpr (M == Moment::Abs) return std::fabs(v);
  else if constexpr (M == Moment::Sq) return v * v;
  else return (v - m) * (v - m);
}

// Where the row loops read a block's elements: the row itself, or, for a 16-bit row (Note
// [16-bit rows]), a window of kHalfWindow elements widened (exactly) into a stack buffer
// that stays in L1. (Widening a whole 16K-element block first and reading it back from L2 ran
// sums at half torch's speed.) The loops ask for runs that start at a multiple of their
// step, a divisor of kHalfWindow, and stop before the next: a run never crosses a window.
template <typename T>
struct RowSource {
  const T* x;
  RowSource(const T* row, int64_t) : x(row) {}
  LUCID_INLINE const T* at(int64_t k) { return x + k; }
};
template <typename T>
  requires kIsHalfFloat<T>
struct RowSource<T> {
  const T* x;
  int64_t len, base = -kHalfWindow;
  alignas(64) float buf[kHalfWindow];
  RowSource(const T* row, int64_t n) : x(row), len(n) {}
  LUCID_INLINE const float* at(int64_t k) {  // k only grows
    if (k - base >= kHalfWindow) {
      base = k / kHalfWindow * kHalfWindow;
      widen_rows(buf, x + base, std::min(kHalfWindow, len - base));
    }
    return buf + (k - base);
  }
};

// float rows: each float lane adds up to 4 values of a 256-element chunk (exact to a few
// ulp of that small partial), then the chunk's lanes move into double lanes. Twice
// the throughput of converting every element, with double-like precision.
// (16 float lanes kept as two 8-lane halves, lo and hi: the same lanes and additions, but
// GCC 12 spills 64-byte accumulators through the stack and general registers in the
// AVX2 clone, which ran this loop at half the memory's speed.)
// (A 16-bit row gives the same floats, so its float32 cast's bits.)
template <Moment M, typename T>
LUCID_INLINE double row_block_f32(const T* row, int64_t len, double mean) {
  RowSource<T> src(row, len);
  vd8 d0{}, d1{};
  const vf8 mv = vf8{} + float(mean);
  int64_t k = 0;
  while (k + 64 <= len) {
    const int64_t chunk = std::min<int64_t>(256, (len - k) / 64 * 64);
    const float* x = src.at(k);
    vf8 lo[4] = {}, hi[4] = {};
    for (int64_t j = 0; j < chunk; j += 64)
      for (int q = 0; q < 4; ++q) {
        lo[q] += apply<M>(load<vf8>(x + j + 16 * q), mv);
        hi[q] += apply<M>(load<vf8>(x + j + 16 * q + 8), mv);
      }
    const vf8 slo = (lo[0] + lo[1]) + (lo[2] + lo[3]), shi = (hi[0] + hi[1]) + (hi[2] + hi[3]);
    d0 += __builtin_convertvector(slo, vd8);
    d1 += __builtin_convertvector(shi, vd8);
    k += chunk;
  }
  const vd8 md = vd8{} + mean;
  const float* x = src.at(k) - k;  // the tail, under 64 elements from a multiple of 64
  for (; k + 8 <= len; k += 8) d0 += apply<M>(load_d8(x + k), md);
  double r = hsum(d0 + d1);
  for (; k < len; ++k) r += apply1<M>(double(x[k]), mean);
  return r;
}

// 4 elements of a float or double array as 4 doubles.
LUCID_INLINE vd4 load_d4(const float* p) { return __builtin_convertvector(load<vf4>(p), vd4); }
LUCID_INLINE vd4 load_d4(const double* p) { return load<vd4>(p); }

// Rows in double lanes: four 8-lane accumulators over 32-element steps, each kept as two
// 4-lane halves (a[q][0]: lanes 0-3, a[q][1]: lanes 4-7), for the AVX2 clone's sake as
// in row_block_f32: the same lanes and additions, so the same bits (float64 sums ran at
// half torch's speed with 64-byte accumulators spilled through the stack).
template <Moment M, typename T>
LUCID_INLINE double row_block_t(const T* row, int64_t len, double mean) {
  if constexpr (std::is_same_v<T, float> || kIsHalfFloat<T>)
    if (M != Moment::SqDev) return row_block_f32<M>(row, len, mean);  // (deviations stay in double)
  RowSource<T> src(row, len);
  vd4 a[4][2] = {};
  const vd4 mv = vd4{} + mean;
  int64_t k = 0;
  for (; k + 32 <= len; k += 32) {
    const auto* x = src.at(k);
    for (int q = 0; q < 4; ++q)
      for (int h = 0; h < 2; ++h) a[q][h] += apply<M>(load_d4(x + 8 * q + 4 * h), mv);
  }
  const auto* x = src.at(k) - k;  // the tail, under 32 elements from a multiple of 32
  for (; k + 8 <= len; k += 8)
    for (int h = 0; h < 2; ++h) a[0][h] += apply<M>(load_d4(x + k + 4 * h), mv);
  vd8 sum;
  for (int h = 0; h < 2; ++h) {
    const vd4 half = (a[0][h] + a[1][h]) + (a[2][h] + a[3][h]);
    std::memcpy(reinterpret_cast<char*>(&sum) + 32 * h, &half, 32);
  }
  double r = hsum(sum);
  for (; k < len; ++k) r += apply1<M>(double(x[k]), mean);
  return r;
}

template <Moment M, typename T>
LUCID_INLINE void col_tile_t(double* acc, const T* x, int64_t rows, int64_t stride, int64_t len, const double* mean) {
  // Four rows per pass: a quarter of the accumulators' loads and stores.
  int64_t k = 0;
  for (; k + 4 <= rows; k += 4) {
    const T* r0 = x + k * stride;
    const T *r1 = r0 + stride, *r2 = r1 + stride, *r3 = r2 + stride;
    int64_t i = 0;
    for (; i + 8 <= len; i += 8) {
      vd8 m = M == Moment::SqDev ? load<vd8>(mean + i) : vd8{};
      const vd8 s = (apply<M>(load_d8(r0 + i), m) + apply<M>(load_d8(r1 + i), m)) +
                    (apply<M>(load_d8(r2 + i), m) + apply<M>(load_d8(r3 + i), m));
      store(acc + i, load<vd8>(acc + i) + s);
    }
    for (; i < len; ++i) {
      const double mi = M == Moment::SqDev ? mean[i] : 0.0;
      acc[i] += (apply1<M>(double(r0[i]), mi) + apply1<M>(double(r1[i]), mi)) +
                (apply1<M>(double(r2[i]), mi) + apply1<M>(double(r3[i]), mi));
    }
  }
  for (; k < rows; ++k) {
    const T* r = x + k * stride;
    int64_t i = 0;
    for (; i + 8 <= len; i += 8) {
      vd8 m = M == Moment::SqDev ? load<vd8>(mean + i) : vd8{};
      store(acc + i, load<vd8>(acc + i) + apply<M>(load_d8(r + i), m));
    }
    for (; i < len; ++i) acc[i] += apply1<M>(double(r[i]), M == Moment::SqDev ? mean[i] : 0.0);
  }
}

template <typename T>
LUCID_INLINE double row_block_any(Moment m, const T* x, int64_t len, double mean) {
  switch (m) {
    case Moment::Sum: return row_block_t<Moment::Sum>(x, len, mean);
    case Moment::SqDev: return row_block_t<Moment::SqDev>(x, len, mean);
    case Moment::Abs: return row_block_t<Moment::Abs>(x, len, mean);
    case Moment::Sq: return row_block_t<Moment::Sq>(x, len, mean);
  }
  return 0;
}
template <typename T>
LUCID_INLINE void col_tile_any(Moment m, double* acc, const T* x, int64_t rows, int64_t stride, int64_t len,
                               const double* mean) {
  switch (m) {
    case Moment::Sum: return col_tile_t<Moment::Sum>(acc, x, rows, stride, len, mean);
    case Moment::SqDev: return col_tile_t<Moment::SqDev>(acc, x, rows, stride, len, mean);
    case Moment::Abs: return col_tile_t<Moment::Abs>(acc, x, rows, stride, len, mean);
    case Moment::Sq: return col_tile_t<Moment::Sq>(acc, x, rows, stride, len, mean);
  }
}

LUCID_CLONES double row_block(Moment m, const float* x, int64_t len, double mean) {
  return row_block_any(m, x, len, mean);
}
LUCID_CLONES double row_block(Moment m, const double* x, int64_t len, double mean) {
  return row_block_any(m, x, len, mean);
}
LUCID_CLONES double row_block(Moment m, const Half* x, int64_t len, double mean) {
  return row_block_any(m, x, len, mean);
}
LUCID_CLONES double row_block(Moment m, const BFloat16* x, int64_t len, double mean) {
  return row_block_any(m, x, len, mean);
}
LUCID_CLONES void col_tile(Moment m, double* acc, const float* x, int64_t rows, int64_t stride, int64_t len,
                           const double* mean) {
  col_tile_any(m, acc, x, rows, stride, len, mean);
}
LUCID_CLONES void col_tile(Moment m, double* acc, const double* x, int64_t rows, int64_t stride, int64_t len,
                           const double* mean) {
  col_tile_any(m, acc, x, rows, stride, len, mean);
}

// float16 / bfloat16 columns (Note [16-bit rows]): kHalfWindow / 4 columns of four rows
// of a tile at a time widened into a stack buffer in L1 (exact), then the float32 loop: each
// column's additions in the order of the whole tile's.
template <typename T>
void col_tile(Moment m, double* acc, const T* x, int64_t rows, int64_t stride, int64_t len, const double* mean) {
  constexpr int64_t kCols = kHalfWindow / 4;
  alignas(64) float f[kHalfWindow];
  for (int64_t c0 = 0; c0 < len; c0 += kCols) {
    const int64_t w = std::min(kCols, len - c0);
    for (int64_t k = 0; k < rows; k += 4) {
      const int64_t r = std::min<int64_t>(4, rows - k);
      for (int64_t j = 0; j < r; ++j) widen_rows(f + j * w, x + (k + j) * stride + c0, w);
      col_tile(m, acc + c0, static_cast<const float*>(f), r, w, w, mean ? mean + c0 : nullptr);
    }
  }
}

template <typename T>
void moments(const T* x, int64_t outer, int64_t n, int64_t inner, Moment m, const double* mean, double* out) {
  if (outer * inner == 0) return;  // no outputs
  if (inner == 1) {
    const int64_t nb = std::max<int64_t>(1, ceil_div(n, kRowBlock));
    std::vector<double> partial(nb > 1 ? size_t(outer * nb) : 0);
    double* dest = nb > 1 ? partial.data() : out;
    parallel_for(outer * nb, grain_for(std::min(n, kRowBlock)), [&](int64_t b, int64_t e) {
      for (int64_t it = b; it < e; ++it) {
        const int64_t o = it / nb, k0 = (it % nb) * kRowBlock;
        dest[it] = row_block(m, x + o * n + k0, std::min(kRowBlock, n - k0), mean ? mean[o] : 0.0);
      }
    });
    if (nb > 1)
      for (int64_t o = 0; o < outer; ++o) {
        double s = 0;
        for (int64_t kb = 0; kb < nb; ++kb) s += partial[size_t(o * nb + kb)];
        out[o] = s;
      }
    return;
  }
  const int64_t chunk = std::min(inner, kColChunk), nch = ceil_div(inner, chunk);
  // At most kMaxRowTiles tiles down a column: their partials (and the final pass that
  // adds them) stay small.
  const int64_t trows = std::max(tile_rows(chunk), ceil_div(n, kMaxRowTiles));
  const int64_t nkb = std::max<int64_t>(1, ceil_div(n, trows));
  std::vector<double> partial(nkb > 1 ? size_t(outer * nkb * inner) : 0, 0.0);
  double* dest = nkb > 1 ? partial.data() : out;
  if (nkb == 1) std::fill(out, out + outer * inner, 0.0);
  parallel_for(outer * nch * nkb, grain_for(trows * chunk), [&](int64_t b, int64_t e) {
    for (int64_t it = b; it < e; ++it) {
      const int64_t o = it / (nch * nkb), c = (it / nkb) % nch, kb = it % nkb;
      const int64_t i0 = c * chunk, len = std::min(chunk, inner - i0), k0 = kb * trows;
      const int64_t rows = std::min(trows, n - k0);
      if (rows <= 0) continue;
      col_tile(m, dest + (o * nkb + kb) * inner + i0, x + (o * n + k0) * inner + i0, rows, inner, len,
               mean ? mean + o * inner + i0 : nullptr);
    }
  });
  if (nkb > 1)
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t i = 0; i < inner; ++i) {
        double s = 0;
        for (int64_t kb = 0; kb < nkb; ++kb) s += partial[size_t((o * nkb + kb) * inner + i)];
        out[o * inner + i] = s;
      }
}

}  // namespace

void store_scaled(Dtype d, const double* x, int64_t count, double scale, std::byte* y) {
  if (d == Dtype::F16 || d == Dtype::BF16) {  // (float(x * scale), then rounded once more: SumLastDims' bits)
    for (int64_t i = 0; i < count; ++i) {
      const float v = float(x[i] * scale);
      if (d == Dtype::F16) reinterpret_cast<Half*>(y)[i] = Half(v);
      else reinterpret_cast<BFloat16*>(y)[i] = BFloat16(v);
    }
  } else if (d == Dtype::F32) {
    auto* o = reinterpret_cast<float*>(y);
    for (int64_t i = 0; i < count; ++i) o[i] = float(x[i] * scale);
  } else {
    auto* o = reinterpret_cast<double*>(y);
    for (int64_t i = 0; i < count; ++i) o[i] = x[i] * scale;
  }
}

void moment_reduce(Dtype d, const std::byte* x, int64_t outer, int64_t n, int64_t inner, Moment m,
                   const double* mean, double* out) {
  switch (d) {
    case Dtype::F32: return moments(reinterpret_cast<const float*>(x), outer, n, inner, m, mean, out);
    case Dtype::F64: return moments(reinterpret_cast<const double*>(x), outer, n, inner, m, mean, out);
    case Dtype::F16: return moments(reinterpret_cast<const Half*>(x), outer, n, inner, m, mean, out);
    case Dtype::BF16: return moments(reinterpret_cast<const BFloat16*>(x), outer, n, inner, m, mean, out);
    default: LUCID_CHECK(false, RuntimeError, "internal: moment_reduce given ", dtype_name(d));
  }
}

}  // namespace lucid::cpu
