// The GPU's solve from LDL^T factors (linalg.ldl_solve): LAPACK's sytrs, written here
// (cuSOLVER's Xsytrs poisoned a context in testing; see ldl_solve.cu).
#pragma once

#include <cstdint>

#include "core/dtype.h"

namespace lucid::cuda {

// In place, per matrix b < count: x[b] [n, k] (column-major) <- A^-1 x[b], A given by
// ld[b] [n, n] (column-major; sytrf's lower form) and pivots[b] [n] (LAPACK's, 1-based,
// negative for a 2 x 2 block). A pivot that is not sytrf's form is reported as a
// device error (device_error.h) and its matrix's columns left as they were.
void ldl_solve(Dtype dtype, const void* ld, const int* pivots, void* x, int n, int k, int64_t count, int device);

}  // namespace lucid::cuda
