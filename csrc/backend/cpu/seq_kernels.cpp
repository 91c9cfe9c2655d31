// Fused kernels of the sequence layers. Rows are split over the thread pool; each
// row's loops are plain enough for the compiler to vectorise, and the transcendentals
// of the cells go through the vectorised sigmoid/tanh of vec_math.h when there is one
// (the scalar std::tanh costs ~10-20 ns an element, more than the rest of the cell).
#include "backend/cpu/seq_kernels.h"

#include <algorithm>
#include <cmath>
#include <type_traits>
#include <vector>

#include "core/parallel.h"
#include "backend/cpu/vec_math.h"

namespace lucid::cpu {

namespace {

template <class T>
constexpr Dtype dtype_of() {
  return std::is_same_v<T, float> ? Dtype::F32 : Dtype::F64;
}

// out[i] = sigmoid(in[i]) / tanh(in[i]) over n dense elements, vectorised when possible.
template <class T>
void sigmoid_n(const T* in, T* out, int64_t n) {
  static const VecUnaryFn fn = vec_unary(ops::UnaryOp::Sigmoid, dtype_of<T>());
  if (fn) return fn(in, out, n);
  for (int64_t i = 0; i < n; ++i) out[i] = T(1) / (T(1) + std::exp(-in[i]));
}
template <class T>
void tanh_n(const T* in, T* out, int64_t n) {
  static const VecUnaryFn fn = vec_unary(ops::UnaryOp::Tanh, dtype_of<T>());
  if (fn) return fn(in, out, n);
  for (int64_t i = 0; i < n; ++i) out[i] = std::tanh(in[i]);
}

int64_t row_grain(int64_t n) { return std::max<int64_t>(1, 16384 / std::max<int64_t>(n, 1)); }

}  // namespace

template <class T>
void lstm_cell_forward(const T* gates, const T* c_prev, T* h, T* c, T* act, int64_t batch, int64_t H) {
  parallel_for(batch, row_grain(4 * H), [&](int64_t b0, int64_t b1) {
    std::vector<T> tc(H);
    for (int64_t b = b0; b < b1; ++b) {
      const T* gr = gates + b * 4 * H;
      T* ar = act + b * 4 * H;
      sigmoid_n(gr, ar, 2 * H);  // i, f
      tanh_n(gr + 2 * H, ar + 2 * H, H);
      sigmoid_n(gr + 3 * H, ar + 3 * H, H);
      const T *ig = ar, *fg = ar + H, *gg = ar + 2 * H, *og = ar + 3 * H, *cp = c_prev + b * H;
      T* cr = c + b * H;
      for (int64_t j = 0; j < H; ++j) cr[j] = fg[j] * cp[j] + ig[j] * gg[j];
      tanh_n(cr, tc.data(), H);
      T* hr = h + b * H;
      for (int64_t j = 0; j < H; ++j) hr[j] = og[j] * tc[j];
    }
  });
}

template <class T>
void lstm_cell_backward(const T* gh, const T* gc, const T* act, const T* c, const T* c_prev, T* dgates,
                        T* dc_prev, int64_t batch, int64_t H) {
  parallel_for(batch, row_grain(4 * H), [&](int64_t b0, int64_t b1) {
    std::vector<T> tc(H);
    for (int64_t b = b0; b < b1; ++b) {
      const T* ar = act + b * 4 * H;
      const T *ig = ar, *fg = ar + H, *gg = ar + 2 * H, *og = ar + 3 * H;
      const T *ghr = gh + b * H, *gcr = gc + b * H, *cp = c_prev + b * H;
      tanh_n(c + b * H, tc.data(), H);
      T* d = dgates + b * 4 * H;
      T* dcp = dc_prev + b * H;
      for (int64_t j = 0; j < H; ++j) {
        const T t = tc[j];
        const T dc = gcr[j] + ghr[j] * og[j] * (T(1) - t * t);
        const T i = ig[j], f = fg[j], g = gg[j], o = og[j];
        d[j] = dc * g * i * (T(1) - i);
        d[H + j] = dc * cp[j] * f * (T(1) - f);
        d[2 * H + j] = dc * i * (T(1) - g * g);
        d[3 * H + j] = ghr[j] * t * o * (T(1) - o);
        dcp[j] = dc * f;
      }
    }
  });
}

template <class T>
void gru_cell_forward(const T* gx, const T* gh, const T* h_prev, T* h, T* act, int64_t batch, int64_t H) {
  parallel_for(batch, row_grain(3 * H), [&](int64_t b0, int64_t b1) {
    std::vector<T> tmp(3 * H);
    for (int64_t b = b0; b < b1; ++b) {
      const T *xr = gx + b * 3 * H, *hr = gh + b * 3 * H, *hp = h_prev + b * H;
      T* ar = act + b * 3 * H;
      for (int64_t j = 0; j < 2 * H; ++j) tmp[j] = xr[j] + hr[j];
      sigmoid_n(tmp.data(), ar, 2 * H);  // r, z
      for (int64_t j = 0; j < H; ++j) tmp[2 * H + j] = xr[2 * H + j] + ar[j] * hr[2 * H + j];
      tanh_n(tmp.data() + 2 * H, ar + 2 * H, H);
      T* out = h + b * H;
      for (int64_t j = 0; j < H; ++j) {
        const T z = ar[H + j], n = ar[2 * H + j];
        out[j] = (T(1) - z) * n + z * hp[j];
      }
    }
  });
}

template <class T>
void gru_cell_backward(const T* dh, const T* act, const T* gh, const T* h_prev, T* dgx, T* dgh, T* dh_prev,
                       int64_t batch, int64_t H) {
  parallel_for(batch, row_grain(3 * H), [&](int64_t b0, int64_t b1) {
    for (int64_t b = b0; b < b1; ++b) {
      const T *ar = act + b * 3 * H, *hr = gh + b * 3 * H, *hp = h_prev + b * H, *g = dh + b * H;
      T *dx = dgx + b * 3 * H, *dhh = dgh + b * 3 * H, *dp = dh_prev + b * H;
      for (int64_t j = 0; j < H; ++j) {
        const T r = ar[j], z = ar[H + j], n = ar[2 * H + j];
        const T dn = g[j] * (T(1) - z) * (T(1) - n * n);
        const T dz = g[j] * (hp[j] - n) * z * (T(1) - z);
        const T dr = dn * hr[2 * H + j] * r * (T(1) - r);
        dx[j] = dr;
        dx[H + j] = dz;
        dx[2 * H + j] = dn;
        dhh[j] = dr;
        dhh[H + j] = dz;
        dhh[2 * H + j] = dn * r;
        dp[j] = g[j] * z;
      }
    }
  });
}

#define LUCID_SEQ_INSTANTIATE(T)                                                                                \
  template void lstm_cell_forward<T>(const T*, const T*, T*, T*, T*, int64_t, int64_t);                        \
  template void lstm_cell_backward<T>(const T*, const T*, const T*, const T*, const T*, T*, T*, int64_t,        \
                                      int64_t);                                                                \
  template void gru_cell_forward<T>(const T*, const T*, const T*, T*, T*, int64_t, int64_t);                   \
  template void gru_cell_backward<T>(const T*, const T*, const T*, const T*, T*, T*, T*, int64_t, int64_t);
LUCID_SEQ_INSTANTIATE(float)
LUCID_SEQ_INSTANTIATE(double)
#undef LUCID_SEQ_INSTANTIATE

}  // namespace lucid::cpu
