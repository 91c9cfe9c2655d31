// Cumulative sums and products along one dim of a contiguous [outer, n, inner]
// block, in place. The inner loop runs over `inner` so it walks memory in order.
#include <algorithm>
#include <complex>
#include <vector>

#include "core/parallel.h"
#include "backend/cpu/reduce.h"
#include "backend/cpu/reduce_fast.h"

namespace lucid::cpu {

namespace {

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

template <typename T, bool kProd>
double scan_run(const T* x, T* y, int64_t n, int64_t step, double acc) {
  for (int64_t k = 0; k < n; ++k) {
    if constexpr (kProd) acc *= double(x[k * step]);
    else acc += double(x[k * step]);
    if (y) y[k * step] = T(acc);
  }
  return acc;
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
          total[size_t(i)] = scan_run<T, kProd>(xr + i * kScanBlock, nullptr, std::min(kScanBlock, n - i * kScanBlock), 1, init);
      });
      double acc = init;
      for (double& t : total) {
        const double before = acc;
        acc = kProd ? acc * t : acc + t;
        t = before;  // the prefix each block starts from
      }
      parallel_for(nb, 1, [&](int64_t b, int64_t e) {
        for (int64_t i = b; i < e; ++i)
          scan_run<T, kProd>(xr + i * kScanBlock, yr + i * kScanBlock, std::min(kScanBlock, n - i * kScanBlock), 1,
                             total[size_t(i)]);
      });
    }
    return;
  }
  if (inner == 1) {
    parallel_for(outer, std::max<int64_t>(1, 32768 / std::max<int64_t>(n, 1)), [&](int64_t b, int64_t e) {
      for (int64_t o = b; o < e; ++o) scan_run<T, kProd>(x + o * n, y + o * n, n, 1, init);
    });
    return;
  }
  // Columns: running totals of a chunk of columns in double, streaming the rows.
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
        for (int64_t i = 0; i < len; ++i) {
          if constexpr (kProd) acc[i] *= double(xr[i]);
          else acc[i] += double(xr[i]);
          yr[i] = T(acc[i]);
        }
      }
    }
  });
}

}  // namespace

void scan_float(Dtype d, const std::byte* in, std::byte* out, int64_t outer, int64_t n, int64_t inner,
                bool is_prod) {
  if (d == Dtype::F32) {
    auto* x = reinterpret_cast<const float*>(in);
    auto* y = reinterpret_cast<float*>(out);
    return is_prod ? scan_float<float, true>(x, y, outer, n, inner) : scan_float<float, false>(x, y, outer, n, inner);
  }
  auto* x = reinterpret_cast<const double*>(in);
  auto* y = reinterpret_cast<double*>(out);
  is_prod ? scan_float<double, true>(x, y, outer, n, inner) : scan_float<double, false>(x, y, outer, n, inner);
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
