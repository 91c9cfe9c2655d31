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

}  // namespace lucid::ops
