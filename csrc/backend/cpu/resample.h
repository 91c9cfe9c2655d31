// Separable resampling along one dim (interpolate's kernels): the input viewed as
// [outer, in, inner] (contiguous), K taps per output position o:
//   out[b, o, i] = sum_k w[k, o] * x[b, idx[k, o], i]           (taps_forward)
// and its adjoint, the gradient's scatter:
//   gx[b, idx[k, o], i] += w[k, o] * g[b, o, i]                  (taps_adjoint, gx zeroed)
// Work is split over (outer, blocks of inner), whose writes are disjoint in both.
#pragma once

#include <cstdint>

namespace lucid::cpu {

template <typename T>
void taps_forward(T* out, const T* x, const int64_t* idx, const T* w, int64_t outer, int64_t in, int64_t osz,
                  int64_t inner, int64_t k);

template <typename T>
void taps_adjoint(T* gx, const T* g, const int64_t* idx, const T* w, int64_t outer, int64_t in, int64_t osz,
                  int64_t inner, int64_t k);

}  // namespace lucid::cpu
