// Kernels of backend/cpu/resample.h. The sum over taps runs in tap order with one
// rounding per product and per addition (as ATen's separable upsample kernels), so
// float32 results match torch's to the last bit in the common cases.
#include "backend/cpu/resample.h"

#include <algorithm>
#include <cstring>
#include <vector>

#include "core/parallel.h"

namespace lucid::cpu {

namespace {

// Splits [0, outer) x [0, inner) into tasks of whole outer slices and inner blocks
// long enough (>= 256 elements) to vectorise.
struct Blocks {
  int64_t per_outer, block;
};

Blocks blocks_of(int64_t outer, int64_t inner) {
  int64_t block = inner;
  int want = pool_threads() * 4;
  if (outer < want && inner >= 512) block = std::max<int64_t>(256, inner / ((want + outer - 1) / outer));
  return {(inner + block - 1) / block, block};
}

int64_t grain_for(int64_t work_per_task) {
  return std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(1, work_per_task));
}

}  // namespace

template <typename T>
void taps_forward(T* out, const T* x, const int64_t* idx, const T* w, int64_t outer, int64_t in, int64_t osz,
                  int64_t inner, int64_t k) {
  if (inner == 1) {  // resampling the innermost dim: one row per outer index
    parallel_for(outer, grain_for(osz * k), [&](int64_t b0, int64_t b1) {
      for (int64_t b = b0; b < b1; ++b) {
        const T* xr = x + b * in;
        T* orow = out + b * osz;
        for (int64_t o = 0; o < osz; ++o) {
          T acc = w[o] * xr[idx[o]];
          for (int64_t t = 1; t < k; ++t) acc += w[t * osz + o] * xr[idx[t * osz + o]];
          orow[o] = acc;
        }
      }
    });
    return;
  }
  Blocks bl = blocks_of(outer, inner);
  parallel_for(outer * bl.per_outer, grain_for(osz * k * bl.block), [&](int64_t t0, int64_t t1) {
    for (int64_t task = t0; task < t1; ++task) {
      int64_t b = task / bl.per_outer, i0 = (task % bl.per_outer) * bl.block;
      int64_t n = std::min(bl.block, inner - i0);
      const T* xb = x + b * in * inner + i0;
      T* ob = out + b * osz * inner + i0;
      for (int64_t o = 0; o < osz; ++o) {
        T* orow = ob + o * inner;
        const T w0 = w[o];
        const T* x0 = xb + idx[o] * inner;
        for (int64_t i = 0; i < n; ++i) orow[i] = w0 * x0[i];
        for (int64_t t = 1; t < k; ++t) {
          const T wt = w[t * osz + o];
          const T* xt = xb + idx[t * osz + o] * inner;
          for (int64_t i = 0; i < n; ++i) orow[i] += wt * xt[i];
        }
      }
    }
  });
}

template <typename T>
void taps_adjoint(T* gx, const T* g, const int64_t* idx, const T* w, int64_t outer, int64_t in, int64_t osz,
                  int64_t inner, int64_t k) {
  if (inner == 1) {
    parallel_for(outer, grain_for(osz * k), [&](int64_t b0, int64_t b1) {
      for (int64_t b = b0; b < b1; ++b) {
        T* gr = gx + b * in;
        const T* grow = g + b * osz;
        for (int64_t o = 0; o < osz; ++o)
          for (int64_t t = 0; t < k; ++t) gr[idx[t * osz + o]] += w[t * osz + o] * grow[o];
      }
    });
    return;
  }
  Blocks bl = blocks_of(outer, inner);
  parallel_for(outer * bl.per_outer, grain_for(osz * k * bl.block), [&](int64_t t0, int64_t t1) {
    for (int64_t task = t0; task < t1; ++task) {
      int64_t b = task / bl.per_outer, i0 = (task % bl.per_outer) * bl.block;
      int64_t n = std::min(bl.block, inner - i0);
      T* gb = gx + b * in * inner + i0;
      const T* ob = g + b * osz * inner + i0;
      for (int64_t o = 0; o < osz; ++o) {
        const T* grow = ob + o * inner;
        for (int64_t t = 0; t < k; ++t) {
          const T wt = w[t * osz + o];
          T* dst = gb + idx[t * osz + o] * inner;
          for (int64_t i = 0; i < n; ++i) dst[i] += wt * grow[i];
        }
      }
    }
  });
}

template void taps_forward<float>(float*, const float*, const int64_t*, const float*, int64_t, int64_t, int64_t,
                                  int64_t, int64_t);
template void taps_forward<double>(double*, const double*, const int64_t*, const double*, int64_t, int64_t, int64_t,
                                   int64_t, int64_t);
template void taps_adjoint<float>(float*, const float*, const int64_t*, const float*, int64_t, int64_t, int64_t,
                                  int64_t, int64_t);
template void taps_adjoint<double>(double*, const double*, const int64_t*, const double*, int64_t, int64_t, int64_t,
                                   int64_t, int64_t);

}  // namespace lucid::cpu
