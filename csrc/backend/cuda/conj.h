// The GPU's complex conjugate of a dense run of complex64 or complex128 numbers (conj.cu):
// the Conj primitive's kernel, and the decompositions' (the Jacobi SVD's V to V^H).
#pragma once

#include <cstdint>

#include "core/dtype.h"

namespace lucid::cuda {

// y[i] = conj(x[i]) for i < n on the device's stream; y may be x.
void conjugate(Dtype dtype, const void* x, void* y, int64_t n, int device);

}  // namespace lucid::cuda
