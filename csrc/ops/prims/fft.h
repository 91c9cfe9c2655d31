// The discrete Fourier transform primitive (ops/fft.cpp; lucid.fft builds on it): MKL's
// DFTI on the CPU, cuFFT on the GPU.
//
// Fft transforms the last `rank` (1 to 3) dims of a dense row-major operand; the dims
// before them are the batch. ins: {x}; outs: {y}, both dense and on one device. The
// signal sizes are those of the real side: y's for C2C and C2R, x's for R2C. A
// one-sided (half) complex operand has n / 2 + 1 entries along its last dim for a
// signal of n. Transforms are unnormalised (the op scales): forward is
// y_k = sum_j x_j exp(-2 pi i jk / n), inverse the same with +.
#pragma once

#include <cstdint>
#include <vector>

#include "ops/primitive.h"

namespace lucid::ops {

enum class FftKind : uint8_t {
  C2C,  // complex -> complex, forward or inverse
  R2C,  // real -> one-sided complex (forward)
  C2R,  // one-sided complex (Hermitian-symmetric signal) -> real (inverse)
};

struct Fft : PrimitiveOf<Prim::Fft, Fft> {
  FftKind kind = FftKind::C2C;
  bool inverse = false;  // C2C's direction (R2C is always forward, C2R always inverse)
  int rank = 1;
  const char* name() const override { return "fft"; }
};

// What a kernel plans by: the real side's signal sizes, the batch, the precision.
struct FftShape {
  std::vector<int64_t> dims;
  int64_t batch = 1;
  bool f64 = false;  // float64 / complex128
};

inline FftShape fft_shape(const Fft& p, const TensorImpl& x, const TensorImpl& y) {
  const TensorImpl& signal = p.kind == FftKind::C2R ? y : x;
  FftShape s;
  s.f64 = signal.dtype() == Dtype::F64 || signal.dtype() == Dtype::C128;
  const int64_t r = signal.ndim();
  int64_t size = 1;
  for (int64_t d = r - p.rank; d < r; ++d) {
    s.dims.push_back(signal.shape()[d]);
    size *= signal.shape()[d];
  }
  s.batch = signal.numel() / size;
  return s;
}

}  // namespace lucid::ops
