// Pooling kernels (conv_kernels.h: PoolDim): max with indices, average and its
// adjoint, over windows listed per spatial dim; channels split among threads.
#include <algorithm>
#include <limits>
#include <vector>

#include "backend/cpu/conv_kernels.h"
#include "core/parallel.h"
#include "backend/cpu/reduce_simd.h"

namespace lucid::cpu {

namespace {

// The output positions o in [0, n_out) whose input position o * s + off lies in
// [0, n_in): a contiguous range [lo, hi).
inline void valid_range(int64_t n_out, int64_t n_in, int64_t s, int64_t off, int64_t& lo, int64_t& hi) {
  const int64_t a = -off, b = n_in - off;
  lo = a <= 0 ? 0 : (a + s - 1) / s;
  hi = b <= 0 ? 0 : (b + s - 1) / s;
  lo = std::min(lo, n_out);
  hi = std::clamp(hi, lo, n_out);
}

}  // namespace

// For each output index of one dim, the input positions its window reads (those
// inside [0, in)), flattened: positions[offset[o] .. offset[o + 1]).
struct WindowList {  // (used by max_pool only)
  std::vector<int64_t> offset, positions;
  explicit WindowList(const PoolDim& d, int64_t scale) {
    offset.reserve(size_t(d.out) + 1);
    offset.push_back(0);
    for (int64_t o = 0; o < d.out; ++o) {
      for (int64_t j = 0; j < d.len[o]; ++j) {
        const int64_t i = d.start[o] + j * d.step;
        if (i >= 0 && i < d.in) positions.push_back(i * scale);
      }
      offset.push_back(int64_t(positions.size()));
    }
  }
};

namespace {

// Whether dim d pools disjoint pairs: window o is {2 o, 2 o + 1}, both inside.
bool pairs(const PoolDim& d) {
  if (d.step != 1 || 2 * d.out > d.in) return false;
  for (int64_t o = 0; o < d.out; ++o)
    if (d.len[size_t(o)] != 2 || d.start[size_t(o)] != 2 * o) return false;
  return true;
}

// The 2 x 2, stride-2 pool of the last two dims (a CNN's usual max_pool2d(2)): the
// four window elements in the general loop's order (row by row) with its rule (a
// later element takes over when greater or NaN), written so that it vectorises.
template <typename T>
LUCID_CLONES void max_pool_2x2(const T* x, T* out, int64_t* idx, int64_t planes, int64_t rows_in, int64_t cols_in,
                               int64_t rows_out, int64_t cols_out) {
  for (int64_t p = 0; p < planes; ++p)
    for (int64_t r = 0; r < rows_out; ++r) {
      const T* x0 = x + (p * rows_in + 2 * r) * cols_in;
      const T* x1 = x0 + cols_in;
      T* o = out + (p * rows_out + r) * cols_out;
      int64_t* ix = idx + (p * rows_out + r) * cols_out;
      const int64_t base = 2 * r * cols_in;
      for (int64_t c = 0; c < cols_out; ++c) {
        const T v1 = x0[2 * c + 1], v2 = x1[2 * c], v3 = x1[2 * c + 1];
        T best = x0[2 * c];
        int64_t at = base + 2 * c;
        bool u = (v1 > best) | (v1 != v1);
        best = u ? v1 : best;
        at = u ? base + 2 * c + 1 : at;
        u = (v2 > best) | (v2 != v2);
        best = u ? v2 : best;
        at = u ? base + cols_in + 2 * c : at;
        u = (v3 > best) | (v3 != v3);
        best = u ? v3 : best;
        at = u ? base + cols_in + 2 * c + 1 : at;
        o[c] = best;
        ix[c] = at;
      }
    }
}

}  // namespace

template <typename T>
void max_pool(const T* x, T* out, int64_t* idx, int64_t nc, const PoolDim* dims) {
  const PoolDim &A = dims[0], &Bd = dims[1], &C = dims[2];
  if (A.in == 1 && A.out == 1 && pairs(Bd) && pairs(C)) {
    const int64_t planes_out = Bd.out * C.out;
    parallel_for(nc, std::max<int64_t>(1, 16384 / std::max<int64_t>(1, Bd.in * C.in)), [&](int64_t p0, int64_t p1) {
      max_pool_2x2(x + p0 * Bd.in * C.in, out + p0 * planes_out, idx + p0 * planes_out, p1 - p0, Bd.in, C.in, Bd.out,
                   C.out);
    });
    return;
  }
  const int64_t in_n = A.in * Bd.in * C.in, out_n = A.out * Bd.out * C.out;
  // Window positions precomputed per dim (as flat offsets), so the inner loops have
  // no bounds checks; per output row (a, b) the window's row bases are gathered once.
  const WindowList wa(A, Bd.in * C.in), wb(Bd, C.in), wc(C, 1);
  const int64_t* offc = wc.offset.data();
  const int64_t* posc = wc.positions.data();
  const int64_t c_out = C.out;
  // Regular windows along the last dim (every max_pool; adaptive pools are not):
  // output c reads start0 + c * sc + j * step for j < kc.
  const int64_t start0 = C.start.empty() ? 0 : C.start[0], kc = C.len.empty() ? 0 : C.len[0];
  const int64_t sc = c_out > 1 ? C.start[1] - C.start[0] : 1;
  bool regular = sc > 0;
  for (int64_t c = 0; regular && c < c_out; ++c) regular = C.len[c] == kc && C.start[c] == start0 + c * sc;
  const T lowest = std::numeric_limits<T>::has_infinity ? -std::numeric_limits<T>::infinity()
                                                        : std::numeric_limits<T>::lowest();
  parallel_for(nc, std::max<int64_t>(1, 16384 / std::max<int64_t>(1, in_n)), [&](int64_t p0, int64_t p1) {
    std::vector<int64_t> rows;
    for (int64_t p = p0; p < p1; ++p) {
      const T* xp = x + p * in_n;
      T* op = out + p * out_n;
      int64_t* ip = idx + p * out_n;
      for (int64_t a = 0; a < A.out; ++a)
        for (int64_t b = 0; b < Bd.out; ++b) {
          rows.clear();
          for (int64_t ja = wa.offset[a]; ja < wa.offset[a + 1]; ++ja)
            for (int64_t jb = wb.offset[b]; jb < wb.offset[b + 1]; ++jb)
              rows.push_back(wa.positions[ja] + wb.positions[jb]);
          const int64_t nrows = int64_t(rows.size());
          const int64_t* rp = rows.data();
          if (regular) {  // sliding windows along the last dim: update every output at once
            T* best = op;
            int64_t* bi = ip;
            std::fill(best, best + c_out, lowest);
            std::fill(bi, bi + c_out, int64_t(-1));
            for (int64_t r = 0; r < nrows; ++r) {
              const T* xr = xp + rp[r];
              for (int64_t j = 0; j < kc; ++j) {
                const int64_t off = start0 + j * C.step;
                int64_t lo, hi;
                valid_range(c_out, C.in, sc, off, lo, hi);
                for (int64_t c = lo; c < hi; ++c) {
                  const int64_t i = c * sc + off;
                  const T v = xr[i];
                  // (PyTorch: a NaN always takes over; the first valid element starts it)
                  const bool upd = (v > best[c]) | (v != v) | (bi[c] < 0);
                  best[c] = upd ? v : best[c];
                  bi[c] = upd ? rp[r] + i : bi[c];
                }
              }
            }
            op += c_out;
            ip += c_out;
            continue;
          }
          for (int64_t c = 0; c < c_out; ++c, ++op, ++ip) {
            const int64_t* cp = posc + offc[c];
            const int64_t ncol = offc[c + 1] - offc[c];
            T best = std::numeric_limits<T>::has_infinity ? -std::numeric_limits<T>::infinity()
                                                          : std::numeric_limits<T>::lowest();
            int64_t bi = -1;
            for (int64_t r = 0; r < nrows; ++r) {
              const T* xr = xp + rp[r];
              for (int64_t j = 0; j < ncol; ++j) {
                const T v = xr[cp[j]];
                if (bi < 0 || v > best || v != v) {  // PyTorch: a NaN always takes over
                  best = v;
                  bi = rp[r] + cp[j];
                }
              }
            }
            *op = best;
            *ip = bi;
          }
        }
    }
  });
}

// Visits every (output o, input i, weight) pair of an average pool.
template <typename Fn>
void for_each_avg_window(const PoolDim* dims, double divisor, Fn&& fn) {
  const PoolDim &A = dims[0], &Bd = dims[1], &C = dims[2];
  int64_t o = 0;
  for (int64_t a = 0; a < A.out; ++a)
    for (int64_t b = 0; b < Bd.out; ++b)
      for (int64_t c = 0; c < C.out; ++c, ++o) {
        const double div = divisor > 0 ? divisor : A.size[a] * Bd.size[b] * C.size[c];
        const double wgt = 1.0 / div;
        for (int64_t ja = 0; ja < A.len[a]; ++ja) {
          const int64_t ia = A.start[a] + ja;
          if (ia < 0 || ia >= A.in) continue;
          for (int64_t jb = 0; jb < Bd.len[b]; ++jb) {
            const int64_t ib = Bd.start[b] + jb;
            if (ib < 0 || ib >= Bd.in) continue;
            const int64_t base = (ia * Bd.in + ib) * C.in;
            const int64_t c_lo = std::max<int64_t>(C.start[c], 0), c_hi = std::min(C.start[c] + C.len[c], C.in);
            fn(o, base + c_lo, c_hi - c_lo, wgt);
          }
        }
      }
}

template <typename T>
void avg_pool(const T* x, T* out, int64_t nc, const PoolDim* dims, double divisor) {
  const int64_t in_n = dims[0].in * dims[1].in * dims[2].in, out_n = dims[0].out * dims[1].out * dims[2].out;
  parallel_for(nc, std::max<int64_t>(1, 16384 / std::max<int64_t>(1, in_n)), [&](int64_t p0, int64_t p1) {
    for (int64_t p = p0; p < p1; ++p) {
      const T* xp = x + p * in_n;
      T* op = out + p * out_n;
      std::fill(op, op + out_n, T(0));
      for_each_avg_window(dims, divisor, [&](int64_t o, int64_t i, int64_t len, double wgt) {
        T s = 0;
        for (int64_t j = 0; j < len; ++j) s += xp[i + j];
        op[o] += T(s * wgt);
      });
    }
  });
}

template <typename T>
void avg_pool_adjoint(const T* gy, T* gx, int64_t nc, const PoolDim* dims, double divisor) {
  const int64_t in_n = dims[0].in * dims[1].in * dims[2].in, out_n = dims[0].out * dims[1].out * dims[2].out;
  parallel_for(nc, std::max<int64_t>(1, 16384 / std::max<int64_t>(1, in_n)), [&](int64_t p0, int64_t p1) {
    for (int64_t p = p0; p < p1; ++p) {
      const T* gp = gy + p * out_n;
      T* xp = gx + p * in_n;
      std::fill(xp, xp + in_n, T(0));
      for_each_avg_window(dims, divisor, [&](int64_t o, int64_t i, int64_t len, double wgt) {
        const T v = T(gp[o] * wgt);
        for (int64_t j = 0; j < len; ++j) xp[i + j] += v;
      });
    }
  });
}

template void max_pool<float>(const float*, float*, int64_t*, int64_t, const PoolDim*);
template void max_pool<double>(const double*, double*, int64_t*, int64_t, const PoolDim*);
template void max_pool<int64_t>(const int64_t*, int64_t*, int64_t*, int64_t, const PoolDim*);
template void avg_pool<float>(const float*, float*, int64_t, const PoolDim*, double);
template void avg_pool<double>(const double*, double*, int64_t, const PoolDim*, double);
template void avg_pool_adjoint<float>(const float*, float*, int64_t, const PoolDim*, double);
template void avg_pool_adjoint<double>(const double*, double*, int64_t, const PoolDim*, double);

}  // namespace lucid::cpu
