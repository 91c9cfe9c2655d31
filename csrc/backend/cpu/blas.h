// Matrix products on the CPU: OpenBLAS for float32/float64/complex64 (float16 and
// bfloat16 through float32), a blocked loop for integers (PyTorch multiplies integer
// matrices on the CPU, wrapping around like the dtype does).
#pragma once

#include <memory>
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

class SgemmPackedB;

// Products out = a @ b + beta * out repeated with one b (an RNN's recurrent weight,
// once per time step; b must outlive this). The float32 products lucid's own GEMM
// runs read b packed once, here; the others are gemm's. a: [m, k]; out: contiguous
// [m, n].
class RepeatedRhs {
 public:
  RepeatedRhs(const TensorImpl& b, int64_t m);
  ~RepeatedRhs();
  void gemm(TensorImpl& out, const TensorImpl& a, const Scalar& beta) const;

 private:
  const TensorImpl& b_;
  std::unique_ptr<SgemmPackedB> packed_;
};

// C = alpha * op(A) @ op(B) + beta * C on raw row-major float/double matrices
// (leading dimensions lda, ldb, ldc; op transposes when ta / tb), split over the pool
// like gemm (Note [One pool for products] in blas.cpp); dimensions must fit an int.
// Called from inside a parallel_for, it runs on the calling thread.
template <typename T>
void gemm_raw(bool ta, bool tb, int64_t m, int64_t n, int64_t k, T alpha, const T* A, int64_t lda, const T* B,
              int64_t ldb, T beta, T* C, int64_t ldc);

// The engine's thread count: std::thread::hardware_concurrency() until
// set_num_threads() says otherwise. It sizes lucid's pool (parallel.h), which
// threads the products too: BLAS itself runs single-threaded.
int get_num_threads();
void set_num_threads(int n);  // RuntimeError unless n >= 1

// Whether lucid was built with OpenBLAS (otherwise every product uses the loops).
bool has_blas();
// Whether the CPU's decompositions have LAPACK (OpenBLAS's; lapack.cpp). Without it
// they raise.
bool has_lapack();
// The BLAS build and the CPU kernels it chose, for benchmarks and bug reports.
std::string blas_info();

}  // namespace lucid::cpu
