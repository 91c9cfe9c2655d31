// The GPU's im2col, col2im and bias kernels (im2col.cu): F.unfold and F.fold, and the
// pieces of the convolutions that cuDNN does not run (conv_gemm.cpp). Every buffer is
// contiguous, float32 or float64 (`dtype`), on `device`; the launches queue on
// stream(device).
#pragma once

#include <cstdint>

#include "core/dtype.h"
#include "ops/prims/spatial.h"

namespace lucid::cuda {

// col [n, c * K, L] = the windows of x [n, c, *big] (K taps, L windows; zero padding).
void launch_im2col(const void* x, void* col, Dtype dtype, int64_t n, int64_t c, const ops::ConvGeometry& g,
                   int device);
// img [n, c, *big] = the windows of col [n, c * K, L] summed back (overwritten). A
// gather: each image element sums the column entries that read it, taps in order, so
// the result is deterministic (no atomics) and equals the CPU's bit for bit.
void launch_col2im(const void* col, void* img, Dtype dtype, int64_t n, int64_t c, const ops::ConvGeometry& g,
                   int device);
// out [n, c, spatial] += bias [c].
void launch_add_bias(void* out, const void* bias, Dtype dtype, int64_t n, int64_t c, int64_t spatial, int device);

}  // namespace lucid::cuda
