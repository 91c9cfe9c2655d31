// The discrete Fourier transform as a raw engine op (python/lucid/fft.py adds torch's
// n/s/dim/norm handling and the gradients).
#pragma once

#include <string>

#include "core/tensor_impl.h"
#include "ops/prims/fft.h"

namespace lucid::ops {

// The unnormalised transform of x's last `rank` (1-3) dims (ops/prims/fft.h), x of any
// strides, in either precision: C2C complex64 -> complex64; R2C float32 -> complex64
// [..., n / 2 + 1]; C2R complex64 [..., n / 2 + 1] -> float32 [..., n], where n =
// `last_size` (C2R only: the half spectrum does not say whether the signal was even or
// odd); float64 and complex128 alike.
TensorPtr fft(const TensorPtr& x, FftKind kind, bool inverse, int rank, int64_t last_size = -1);

// Where the CPU's FFT library (MKL's libmkl_rt) is, when the loader's own search does
// not find it: lucid.fft passes the one the `mkl` package installed.
void set_mkl_library(std::string path);
std::string mkl_library_path();

}  // namespace lucid::ops
