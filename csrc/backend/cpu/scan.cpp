// Cumulative sums and products along one dim of a contiguous [outer, n, inner]
// block, in place. The inner loop runs over `inner` so it walks memory in order.
#include <algorithm>
#include <complex>
#include <vector>

#include "backend/cpu/reduce.h"
#include "backend/cpu/reduce_fast.h"
#include "backend/cpu/reduce_simd.h"
#include "core/half_rows.h"
#include "core/parallel.h"

namespace lucid::cpu {

namespace {

using namespace simd;

template <typename T, bool kProd>
void scan(T* data, int64_t outer, int64_t n, int64_t inner) {
  for (int64_t o = 0; o < outer; ++o) {
    T* block = data + o * n * inner;
    for (int64_t k = 1; k < n; ++k) {
      const T* prev = block + (k - 1) * inner;
      T* cur = block + k * inner;
      for (int64_t i = 0; i < inner; ++i) {
        if constexpr (kProd) cur[i] = prev[i] * cur[i];
        else cur[i] = prev[i] + cur[i];
      }
    }
  }
}

// Float scans straight from the input to the output (no double copy), running
// totals in double as before. A long single row is cut into fixed blocks: their
// totals first (in parallel), then each block rescanned from its prefix, so the
// bits depend on the shape only, not on the thread count.
constexpr int64_t kScanBlock = 65536;

// Note [Vector scans]
// A running total is a chain of dependent additions, one double add (4 cycles) an
// element: a float32 cumsum of 4M ran at 1.85x torch's time on one thread. float32
// rows are summed 8 elements at a time instead: two vectors of 4 get their own prefix
// sums (two shift-and-add steps) and the first's total is added to the second, all off
// the chain; the chain is one add of the running total (in every lane) per 8 elements.
// Still double throughout, in another association: a float32 result differs from the
// element-by-element one only where a double rounding error of ~1e-16 straddles a
// float rounding boundary. float64 rows keep the element-by-element order (torch's
// bits, and no overflow that the order could change), as do products (a zero after an
// overflow gives NaN or 0 by the order).
LUCID_INLINE vd4 prefix4(vd4 v) {
  v += __builtin_shufflevector(vd4{}, v, 0, 4, 5, 6);
  return v + __builtin_shufflevector(vd4{}, v, 0, 1, 4, 5);
}
LUCID_INLINE vd4 last_lane(vd4 v) { return __builtin_shufflevector(v, v, 3, 3, 3, 3); }
LUCID_INLINE vd4 load_d4(const float* p) { return __builtin_convertvector(load<vf4>(p), vd4); }

LUCID_CLONES double cumsum_f32(const float* x, float* y, int64_t n, double acc) {
  vd4 total = vd4{} + acc;
  int64_t k = 0;
  for (; k + 8 <= n; k += 8) {
    const vd4 p0 = prefix4(load_d4(x + k));
    const vd4 p1 = prefix4(load_d4(x + k + 4)) + last_lane(p0);
    if (y) {
      store(y + k, __builtin_convertvector(p0 + total, vf4));
      store(y + k + 4, __builtin_convertvector(p1 + total, vf4));
    }
    total += last_lane(p1);
  }
  acc = total[0];
  for (; k < n; ++k) {
    acc += double(x[k]);
    if (y) y[k] = float(acc);
  }
  return acc;
}

// float16 / bfloat16 (Note [16-bit rows]) go through float windows: widened, scanned as
// float32, each total rounded to float and then to 16 bits (the float32 cast's
// cumsum, rounded), as 16-bit sums are.
template <typename T, bool kProd>
double scan_run(const T* x, T* y, int64_t n, double acc) {
  if constexpr (kIsHalfFloat<T>) {
    alignas(64) float in[kHalfWindow], out[kHalfWindow];
    for (int64_t k = 0; k < n; k += kHalfWindow) {
      const int64_t m = std::min(kHalfWindow, n - k);
      widen_rows(in, x + k, m);
      acc = scan_run<float, kProd>(in, y ? out : nullptr, m, acc);
      if (y) narrow_rows(y + k, out, m);
    }
    return acc;
  } else if constexpr (std::is_same_v<T, float> && !kProd) {
    return cumsum_f32(x, y, n, acc);
  } else {
    for (int64_t k = 0; k < n; ++k) {
      if constexpr (kProd) acc *= double(x[k]);
      else acc += double(x[k]);
      if (y) y[k] = T(acc);
    }
    return acc;
  }
}

// One row of a column chunk: the running totals acc[i] of len columns, in double.
template <bool kProd, typename T>
void scan_cols_row(double* acc, const T* x, T* y, int64_t len) {
  for (int64_t i = 0; i < len; ++i) {
    if constexpr (kProd) acc[i] *= double(x[i]);
    else acc[i] += double(x[i]);
    y[i] = T(acc[i]);
  }
}

template <typename T, bool kProd>
void scan_float(const T* x, T* y, int64_t outer, int64_t n, int64_t inner) {
  const double init = kProd ? 1.0 : 0.0;
  if (inner == 1 && outer < 4 && n >= 4 * kScanBlock) {
    const int64_t nb = (n + kScanBlock - 1) / kScanBlock;
    for (int64_t o = 0; o < outer; ++o) {
      const T* xr = x + o * n;
      T* yr = y + o * n;
      std::vector<double> total(static_cast<size_t>(nb));
      parallel_for(nb, 1, [&](int64_t b, int64_t e) {
        for (int64_t i = b; i < e; ++i)
          total[size_t(i)] = scan_run<T, kProd>(xr + i * kScanBlock, nullptr, std::min(kScanBlock, n - i * kScanBlock), init);
      });
      double acc = init;
      for (double& t : total) {
        const double before = acc;
        acc = kProd ? acc * t : acc + t;
        t = before;  // the prefix each block starts from
      }
      parallel_for(nb, 1, [&](int64_t b, int64_t e) {
        for (int64_t i = b; i < e; ++i)
          scan_run<T, kProd>(xr + i * kScanBlock, yr + i * kScanBlock, std::min(kScanBlock, n - i * kScanBlock),
                             total[size_t(i)]);
      });
    }
    return;
  }
  if (inner == 1) {
    parallel_for(outer, std::max<int64_t>(1, 32768 / std::max<int64_t>(n, 1)), [&](int64_t b, int64_t e) {
      for (int64_t o = b; o < e; ++o) scan_run<T, kProd>(x + o * n, y + o * n, n, init);
    });
    return;
  }
  // Columns: running totals of a chunk of columns in double, streaming the rows (16-bit
  // rows through float buffers, rounded as the rows above).
  constexpr int64_t kChunk = 1024;
  const int64_t nch = (inner + kChunk - 1) / kChunk;
  parallel_for(outer * nch, std::max<int64_t>(1, 32768 / std::max<int64_t>(n * std::min(inner, kChunk), 1)),
               [&](int64_t b, int64_t e) {
    double acc[kChunk];
    for (int64_t it = b; it < e; ++it) {
      const int64_t o = it / nch, i0 = (it % nch) * kChunk, len = std::min(kChunk, inner - i0);
      std::fill(acc, acc + len, init);
      for (int64_t k = 0; k < n; ++k) {
        const T* xr = x + (o * n + k) * inner + i0;
        T* yr = y + (o * n + k) * inner + i0;
        if constexpr (kIsHalfFloat<T>) {
          alignas(64) float in[kChunk], out[kChunk];
          widen_rows(in, xr, len);
          scan_cols_row<kProd>(acc, static_cast<const float*>(in), out, len);
          narrow_rows(yr, out, len);
        } else {
          scan_cols_row<kProd>(acc, xr, yr, len);
        }
      }
    }
  });
}

template <typename T>
void scan_float(const std::byte* in, std::byte* out, int64_t outer, int64_t n, int64_t inner, bool is_prod) {
  auto* x = reinterpret_cast<const T*>(in);
  auto* y = reinterpret_cast<T*>(out);
  is_prod ? scan_float<T, true>(x, y, outer, n, inner) : scan_float<T, false>(x, y, outer, n, inner);
}

}  // namespace

void scan_float(Dtype d, const std::byte* in, std::byte* out, int64_t outer, int64_t n, int64_t inner,
                bool is_prod) {
  switch (d) {
    case Dtype::F32: return scan_float<float>(in, out, outer, n, inner, is_prod);
    case Dtype::F64: return scan_float<double>(in, out, outer, n, inner, is_prod);
    case Dtype::F16: return scan_float<Half>(in, out, outer, n, inner, is_prod);
    case Dtype::BF16: return scan_float<BFloat16>(in, out, outer, n, inner, is_prod);
    default: fail<RuntimeError>("internal: scan_float on ", dtype_name(d));
  }
}

void scan_inplace(Dtype d, std::byte* data, int64_t outer, int64_t n, int64_t inner, bool is_prod) {
  switch (d) {
    case Dtype::I64: {
      auto* p = reinterpret_cast<int64_t*>(data);
      return is_prod ? scan<int64_t, true>(p, outer, n, inner) : scan<int64_t, false>(p, outer, n, inner);
    }
    case Dtype::F64: {
      auto* p = reinterpret_cast<double*>(data);
      return is_prod ? scan<double, true>(p, outer, n, inner) : scan<double, false>(p, outer, n, inner);
    }
    case Dtype::C128: {
      auto* p = reinterpret_cast<complex128*>(data);
      return is_prod ? scan<complex128, true>(p, outer, n, inner) : scan<complex128, false>(p, outer, n, inner);
    }
    default: fail<RuntimeError>("internal: scan_inplace on ", dtype_name(d));
  }
}

}  // namespace lucid::cpu
