// CPU reduction kernels.
#pragma once

#include "core/tensor_impl.h"

namespace lucid::cpu {

// out[i] = sum of the elements of `a` that map to i. `a` is a view whose last
// `reduced` dimensions are the ones summed and whose leading dimensions match out's
// (in row-major order); out and a share a dtype. Accumulates in double (int64 for
// integers, complex<double> for complex) and scales by `scale` before storing.
void sum_last_dims(TensorImpl& out, const TensorImpl& a, size_t reduced, double scale);

}  // namespace lucid::cpu
