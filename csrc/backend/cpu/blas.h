// Matrix products on the CPU: OpenBLAS for float32/float64/complex64 (float16 and
// bfloat16 through float32), a blocked loop for integers (PyTorch multiplies integer
// matrices on the CPU, wrapping around like the dtype does).
#pragma once

#include <string>

#include "core/tensor_impl.h"

namespace lucid::cpu {

// out[i] = alpha * a[i] @ b[i] + beta * out[i] for every index i of a batch.
// a is batch + [m, k], b is batch + [k, n] with the same batch shape (broadcast
// batches are views with stride 0: they are read in place, never copied), and out
// is a contiguous batch + [m, n]. All three share one dtype (not bool). With
// beta == 0, out's old values are not read (BLAS semantics: a NaN there does not
// propagate), so out may be uninitialised. Transposed or row-strided operands go
// to BLAS as they are (a transpose flag and a leading dimension); only layouts
// BLAS cannot describe are copied first.
void gemm(TensorImpl& out, const TensorImpl& a, const TensorImpl& b, const Scalar& alpha, const Scalar& beta);

// The engine's thread count: std::thread::hardware_concurrency() until
// set_num_threads() says otherwise. It sets both lucid's pool (parallel.h) and
// BLAS's, so the two never oversubscribe the machine.
int get_num_threads();
void set_num_threads(int n);  // RuntimeError unless n >= 1

// Whether lucid was built with OpenBLAS (otherwise every product uses the loops).
bool has_blas();
// The BLAS build and the CPU kernels it chose, for benchmarks and bug reports.
std::string blas_info();

}  // namespace lucid::cpu
