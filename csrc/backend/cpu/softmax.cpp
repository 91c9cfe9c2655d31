// Softmax / log-softmax along one dim of a contiguous [outer, n, inner] block,
// max-subtracted so large inputs do not overflow. float32 runs in float lanes with
// a polynomial exp (reduce_simd.h, chosen per ISA at run time); other dtypes in
// double. Both split over the pool by rows (or column chunks): each output element
// is computed by one thread, so results never depend on the thread count.
#include <cmath>
#include <limits>
#include <type_traits>
#include <vector>

#include "core/half_rows.h"
#include "core/parallel.h"
#include "backend/cpu/reduce.h"
#include "backend/cpu/reduce_fast.h"
#include "backend/cpu/reduce_simd.h"
#include "backend/cpu/softmax_exp.h"

namespace lucid::cpu {

namespace {

using namespace simd;

constexpr float kInf = std::numeric_limits<float>::infinity();

// 16 lanes of sums, held as 8-lane halves (s[0], s[1]: elements k..k+15 of each
// 32-element step; s[2], s[3]: k+16..k+31), as the 16-lane form added them.
LUCID_CLONES void softmax_row_f32(const float* x, float* y, int64_t n, bool log) {
  const float mx = row_shift_f32(x, n);
  vf8 s[4] = {};
  int64_t k = 0;
  for (; k + 32 <= n; k += 32)
    for (int h = 0; h < 4; ++h) {
      const vf8 e = exp_v(load<vf8>(x + k + 8 * h) - mx);
      s[h] += e;
      if (!log) store(y + k + 8 * h, e);
    }
  for (; k + 16 <= n; k += 16)
    for (int h = 0; h < 2; ++h) {
      const vf8 e = exp_v(load<vf8>(x + k + 8 * h) - mx);
      s[h] += e;
      if (!log) store(y + k + 8 * h, e);
    }
  if (k < n) {  // the last < 16: one vector exp, padded with -inf (exp -> 0)
    alignas(64) float tail[16];
    for (int j = 0; j < 16; ++j) tail[j] = k + j < n ? x[k + j] : -kInf;
    for (int h = 0; h < 2; ++h) {
      const vf8 e = exp_v(load<vf8>(tail + 8 * h) - mx);
      s[h] += e;
      if (!log)
        for (int64_t j = 0; j < 8 && k + 8 * h + j < n; ++j) y[k + 8 * h + j] = e[j];
    }
  }
  const vf8 lo = s[0] + s[2], hi = s[1] + s[3];
  double sum = 0;
  for (int j = 0; j < 8; ++j) sum += lo[j];
  for (int j = 0; j < 8; ++j) sum += hi[j];
  k = 0;
  if (log) {
    const float shift = float(double(mx) + std::log(sum));
    for (; k + 8 <= n; k += 8) store(y + k, load<vf8>(x + k) - shift);
    for (; k < n; ++k) y[k] = x[k] - shift;
  } else {
    const float inv = float(1.0 / sum);
    for (; k + 8 <= n; k += 8) store(y + k, load<vf8>(y + k) * inv);
    for (; k < n; ++k) y[k] *= inv;
  }
}

// `len` columns (len <= kChunk) of one [n, inner] block, streaming its rows.
constexpr int64_t kChunk = 512;
LUCID_CLONES void softmax_cols_f32(const float* x, float* y, int64_t n, int64_t inner, int64_t len, bool log) {
  alignas(64) float mx[kChunk], sum[kChunk];
  for (int64_t i = 0; i < len; ++i) mx[i] = -kInf, sum[i] = 0;
  for (int64_t k = 0; k < n; ++k)
    for (int64_t i = 0; i < len; ++i) mx[i] = x[k * inner + i] > mx[i] ? x[k * inner + i] : mx[i];
  for (int64_t i = 0; i < len; ++i) mx[i] = mx[i] == -kInf ? 0.0f : mx[i];
  const int64_t vl = len / 8 * 8;
  for (int64_t k = 0; k < n; ++k) {
    const float* r = x + k * inner;
    float* o = y + k * inner;
    for (int64_t i = 0; i < vl; i += 8) {
      vf8 e = exp_v(load<vf8>(r + i) - load<vf8>(mx + i));
      store(sum + i, load<vf8>(sum + i) + e);
      if (!log) store(o + i, e);
    }
    for (int64_t i = vl; i < len; ++i) {
      float e = exp1(r[i] - mx[i]);
      sum[i] += e;
      if (!log) o[i] = e;
    }
  }
  for (int64_t i = 0; i < len; ++i) sum[i] = log ? mx[i] + std::log(sum[i]) : 1.0f / sum[i];
  for (int64_t k = 0; k < n; ++k)
    for (int64_t i = 0; i < len; ++i) {
      if (log) y[k * inner + i] = x[k * inner + i] - sum[i];
      else y[k * inner + i] *= sum[i];
    }
}

// The double version, one contiguous row.
void softmax_row_f64(const double* x, double* y, int64_t n, bool log) {
  double mx = -std::numeric_limits<double>::infinity();
  bool nan = false;
  for (int64_t k = 0; k < n; ++k) {
    mx = x[k] > mx ? x[k] : mx;
    nan |= std::isnan(x[k]);
  }
  if (nan) mx = std::numeric_limits<double>::quiet_NaN();
  else if (std::isinf(mx) && mx < 0) mx = 0;  // all -inf: nan below, as PyTorch
  double sum = 0;
  for (int64_t k = 0; k < n; ++k) {
    double e = std::exp(x[k] - mx);
    sum += e;
    y[k] = e;
  }
  if (log) {
    const double shift = mx + std::log(sum);
    for (int64_t k = 0; k < n; ++k) y[k] = x[k] - shift;
  } else {
    const double inv = 1.0 / sum;
    for (int64_t k = 0; k < n; ++k) y[k] *= inv;
  }
}

// The double version, one [n, inner] block.
void softmax_block_f64(const double* x, double* y, int64_t n, int64_t inner, bool log) {
  std::vector<double> mx(static_cast<size_t>(inner), -std::numeric_limits<double>::infinity());
  std::vector<double> sum(static_cast<size_t>(inner), 0.0);
  for (int64_t k = 0; k < n; ++k)
    for (int64_t i = 0; i < inner; ++i) {
      double v = x[k * inner + i];
      if (v > mx[i] || std::isnan(v)) mx[i] = std::isnan(mx[i]) ? mx[i] : v;
    }
  // A row of -inf has max -inf: shift by 0 instead, giving nan like PyTorch (0/0).
  for (int64_t i = 0; i < inner; ++i)
    if (std::isinf(mx[i]) && mx[i] < 0) mx[i] = 0;
  for (int64_t k = 0; k < n; ++k)
    for (int64_t i = 0; i < inner; ++i) {
      double e = std::exp(x[k * inner + i] - mx[i]);
      sum[i] += e;
      if (!log) y[k * inner + i] = e;
    }
  for (int64_t k = 0; k < n; ++k)
    for (int64_t i = 0; i < inner; ++i) {
      if (log) y[k * inner + i] = x[k * inner + i] - mx[i] - std::log(sum[i]);
      else y[k * inner + i] /= sum[i];
    }
}

// ~8K exp-heavy elements per piece (~4 us of work): with the pool's workers spinning
// between jobs a split costs well under a microsecond, so the float functions' grain
// (elementwise_loops.h: unary_grain) serves here too.
int64_t rows_grain(int64_t work_per_item) { return std::max<int64_t>(1, 8192 / std::max<int64_t>(work_per_item, 1)); }

// Note [16-bit softmax on the CPU]
// float16 / bfloat16 softmax runs the float32 kernels on float copies of a row, or of a
// [n, 512] column chunk, made by the task that uses them (half_rows.h's conversions:
// exact in, rounded once out). The bits are those of float32 copies of the whole
// tensor in and out, which the op layer made before, at three times the memory traffic
// (the 16-bit forward took 1.2-1.4x torch's time).
template <typename T>
void widen_slab(float* dst, const T* src, int64_t rows, int64_t stride, int64_t len) {
  for (int64_t k = 0; k < rows; ++k) widen_rows(dst + k * len, src + k * stride, len);
}
template <typename T>
void narrow_slab(T* dst, const float* src, int64_t rows, int64_t stride, int64_t len) {
  for (int64_t k = 0; k < rows; ++k) narrow_rows(dst + k * stride, src + k * len, len);
}

}  // namespace

template <typename T>
void softmax_dim_f32(const T* in, T* out, int64_t outer, int64_t n, int64_t inner, bool log) {
  if (inner == 1) {
    parallel_for(outer, rows_grain(n), [&](int64_t b, int64_t e) {
      std::vector<float> buf(kIsHalfFloat<T> ? size_t(n) : 0);
      for (int64_t o = b; o < e; ++o) {
        if constexpr (kIsHalfFloat<T>) {  // in place in the row's float copy
          widen_rows(buf.data(), in + o * n, n);
          softmax_row_f32(buf.data(), buf.data(), n, log);
          narrow_rows(out + o * n, buf.data(), n);
        } else {
          softmax_row_f32(in + o * n, out + o * n, n, log);
        }
      }
    });
    return;
  }
  const int64_t nch = (inner + kChunk - 1) / kChunk;
  parallel_for(outer * nch, rows_grain(n * std::min(inner, kChunk)), [&](int64_t b, int64_t e) {
    std::vector<float> buf(kIsHalfFloat<T> ? size_t(n * std::min(inner, kChunk)) : 0);
    for (int64_t it = b; it < e; ++it) {
      const int64_t o = it / nch, i0 = (it % nch) * kChunk, len = std::min(kChunk, inner - i0);
      const int64_t off = o * n * inner + i0;
      if constexpr (kIsHalfFloat<T>) {  // a dense [n, len] float copy of the chunk, in place
        widen_slab(buf.data(), in + off, n, inner, len);
        softmax_cols_f32(buf.data(), buf.data(), n, len, len, log);
        narrow_slab(out + off, buf.data(), n, inner, len);
      } else {
        softmax_cols_f32(in + off, out + off, n, inner, len, log);
      }
    }
  });
}
template void softmax_dim_f32<float>(const float*, float*, int64_t, int64_t, int64_t, bool);
template void softmax_dim_f32<Half>(const Half*, Half*, int64_t, int64_t, int64_t, bool);
template void softmax_dim_f32<BFloat16>(const BFloat16*, BFloat16*, int64_t, int64_t, int64_t, bool);

void softmax_dim(const double* in, double* out, int64_t outer, int64_t n, int64_t inner, bool log) {
  parallel_for(outer, rows_grain(n * inner), [&](int64_t b, int64_t e) {
    for (int64_t o = b; o < e; ++o) {
      if (inner == 1) softmax_row_f64(in + o * n, out + o * n, n, log);
      else softmax_block_f64(in + o * n * inner, out + o * n * inner, n, inner, log);
    }
  });
}

namespace {

// sum over k of a[k * inner] * (b ? b[k * inner] : 1), in double with four partial sums
// (one chain of dependent adds would bound a row by the add latency).
template <typename T>
double strided_dot(const T* a, const T* b, int64_t n, int64_t inner) {
  double s[4] = {0, 0, 0, 0};
  int64_t k = 0;
  for (; k + 4 <= n; k += 4)
    for (int u = 0; u < 4; ++u)
      s[u] += double(a[(k + u) * inner]) * (b ? double(b[(k + u) * inner]) : 1.0);
  for (; k < n; ++k) s[0] += double(a[k * inner]) * (b ? double(b[k * inner]) : 1.0);
  return (s[0] + s[1]) + (s[2] + s[3]);
}

// One float32 row (inner == 1) in float lanes: the sum in 16 partial float sums added
// in double (as softmax_row_f32's), then one vector pass writing gx.
LUCID_CLONES void softmax_backward_row_f32(const float* y, const float* g, float* gx, int64_t n, bool log) {
  vf8 s[2] = {};  // (16 lanes as two halves: reduce_simd.h)
  int64_t k = 0;
  for (; k + 16 <= n; k += 16)
    for (int h = 0; h < 2; ++h) {
      const vf8 gh = load<vf8>(g + k + 8 * h);
      s[h] += log ? gh : gh * load<vf8>(y + k + 8 * h);
    }
  double sum = 0;
  for (int h = 0; h < 2; ++h)
    for (int j = 0; j < 8; ++j) sum += s[h][j];
  for (; k < n; ++k) sum += log ? double(g[k]) : double(g[k]) * double(y[k]);
  const float dot = float(sum);
  k = 0;
  if (log) {
    for (; k + 8 <= n; k += 8) store(gx + k, load<vf8>(g + k) - exp_v(load<vf8>(y + k)) * dot);
    for (; k < n; ++k) gx[k] = g[k] - exp1(y[k]) * dot;
  } else {
    for (; k + 8 <= n; k += 8) store(gx + k, load<vf8>(y + k) * (load<vf8>(g + k) - dot));
    for (; k < n; ++k) gx[k] = y[k] * (g[k] - dot);
  }
}

// One [n, inner] block: gx = y * (g - sum(g * y)) or g - exp(y) * sum(g), per column i.
template <typename T>
void softmax_backward_block(const T* y, const T* g, T* gx, int64_t n, int64_t inner, bool log) {
  for (int64_t i = 0; i < inner; ++i) {
    const T dot = T(log ? strided_dot<T>(g + i, nullptr, n, inner) : strided_dot<T>(g + i, y + i, n, inner));
    for (int64_t k = 0; k < n; ++k) {
      const int64_t e = k * inner + i;
      gx[e] = log ? g[e] - std::exp(y[e]) * dot : y[e] * (g[e] - dot);
    }
  }
}

}  // namespace

template <typename T>
void softmax_backward_dim(const T* y, const T* g, T* gx, int64_t outer, int64_t n, int64_t inner, bool log) {
  if constexpr (kIsHalfFloat<T>) {  // Note [16-bit softmax on the CPU]: rows or [n, 512] column chunks
    const int64_t rows = inner == 1 ? 1 : n, cols = inner == 1 ? n : std::min(inner, kChunk);
    const int64_t nch = (inner + kChunk - 1) / kChunk;  // (1 for rows)
    parallel_for(outer * nch, rows_grain(rows * cols), [&](int64_t b, int64_t e) {
      std::vector<float> fy(size_t(rows * cols)), fg(size_t(rows * cols));
      for (int64_t it = b; it < e; ++it) {
        const int64_t o = it / nch, i0 = (it % nch) * kChunk, len = inner == 1 ? n : std::min(kChunk, inner - i0);
        const int64_t off = o * n * inner + i0;
        widen_slab(fy.data(), y + off, rows, inner, len);
        widen_slab(fg.data(), g + off, rows, inner, len);
        if (inner == 1) softmax_backward_row_f32(fy.data(), fg.data(), fg.data(), n, log);
        else softmax_backward_block(fy.data(), fg.data(), fg.data(), n, len, log);
        narrow_slab(gx + off, fg.data(), rows, inner, len);
      }
    });
    return;
  }
  parallel_for(outer, rows_grain(n * inner), [&](int64_t b, int64_t e) {
    for (int64_t o = b; o < e; ++o) {
      const int64_t off = o * n * inner;
      if constexpr (std::is_same_v<T, float>) {
        if (inner == 1) {
          softmax_backward_row_f32(y + off, g + off, gx + off, n, log);
          continue;
        }
      }
      softmax_backward_block(y + off, g + off, gx + off, n, inner, log);
    }
  });
}

template void softmax_backward_dim<float>(const float*, const float*, float*, int64_t, int64_t, int64_t, bool);
template void softmax_backward_dim<double>(const double*, const double*, double*, int64_t, int64_t, int64_t, bool);
template void softmax_backward_dim<Half>(const Half*, const Half*, Half*, int64_t, int64_t, int64_t, bool);
template void softmax_backward_dim<BFloat16>(const BFloat16*, const BFloat16*, BFloat16*, int64_t, int64_t, int64_t,
                                             bool);

}  // namespace lucid::cpu
