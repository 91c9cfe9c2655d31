// Matrix products with PyTorch's semantics (shapes, broadcasting, dtypes, errors),
// all differentiable. One primitive does the arithmetic: a batched, broadcasting
// alpha * a @ b + beta * input, launched as Gemm (ops/prims/linalg.h); everything else
// is that product plus views. einsum and tensordot (einsum.cpp) reduce to it as well.
#pragma once

#include <string>
#include <vector>

#include "core/tensor_impl.h"

namespace lucid::ops {

TensorPtr matmul(const TensorPtr& a, const TensorPtr& b);  // every rank case of torch.matmul
TensorPtr mm(const TensorPtr& a, const TensorPtr& b);      // 2-D @ 2-D
TensorPtr bmm(const TensorPtr& a, const TensorPtr& b);     // 3-D @ 3-D, equal batches
TensorPtr mv(const TensorPtr& mat, const TensorPtr& vec);  // 2-D @ 1-D
TensorPtr dot(const TensorPtr& a, const TensorPtr& b);     // 1-D . 1-D, no conjugation
TensorPtr vdot(const TensorPtr& a, const TensorPtr& b);    // conj(a) . b
TensorPtr outer(const TensorPtr& a, const TensorPtr& b);   // a[:, None] * b[None, :]
// beta * input + alpha * (m1 @ m2); input broadcasts to the product's shape and is
// not read when beta == 0.
TensorPtr addmm(const TensorPtr& input, const TensorPtr& m1, const TensorPtr& m2, const Scalar& beta,
                const Scalar& alpha);
TensorPtr addmv(const TensorPtr& input, const TensorPtr& mat, const TensorPtr& vec, const Scalar& beta,
                const Scalar& alpha);
TensorPtr baddbmm(const TensorPtr& input, const TensorPtr& b1, const TensorPtr& b2, const Scalar& beta,
                  const Scalar& alpha);
// torch.nn.functional.linear: input @ weight.T + bias (weight 1-D or 2-D).
TensorPtr linear(const TensorPtr& input, const TensorPtr& weight, const TensorPtr& bias);

TensorPtr einsum(const std::string& equation, const std::vector<TensorPtr>& operands);
// torch.tensordot with explicit dimension lists (the int form is expanded by the caller
// via tensordot_dims).
TensorPtr tensordot(const TensorPtr& a, const TensorPtr& b, const std::vector<int64_t>& dims_a,
                    const std::vector<int64_t>& dims_b);
TensorPtr tensordot(const TensorPtr& a, const TensorPtr& b, int64_t dims);

// The complex conjugate, differentiable (ConjBackward0); real tensors come back as
// they are. Products' VJPs need it (the gradient of a @ b is g @ b^H).
TensorPtr conj(const TensorPtr& t);

// The batched product primitive, for einsum/tensordot: a [..., m, k] @ b [..., k, n]
// with broadcast batches; both at least 2-D, one dtype (checked).
TensorPtr batched_product(const TensorPtr& a, const TensorPtr& b);

// lucid.backends.cuda.matmul.allow_tf32 (torch's default: False, products exact).
void set_matmul_allow_tf32(bool allow);
bool matmul_allow_tf32();

// The settings of the backend that runs the products, behind lucid.get_num_threads,
// set_num_threads, _has_blas, _blas_info and _has_lapack: the CPU backend registers them at import
// (backend/cpu/register_linalg.cpp), as it registers its kernels, so that neither the
// ops nor the bindings include a backend header. The thread count sizes the pool that
// threads every CPU kernel; BLAS itself runs single-threaded.
struct CpuSettings {
  int (*get_num_threads)() = nullptr;
  void (*set_num_threads)(int n) = nullptr;  // RuntimeError unless n >= 1
  bool (*has_blas)() = nullptr;              // built with OpenBLAS (otherwise lucid's own loops)
  std::string (*blas_info)() = nullptr;      // the BLAS build and the kernels it chose
  bool (*has_lapack)() = nullptr;            // the decompositions have LAPACK (else they raise)
};
void register_cpu_settings(const CpuSettings& settings);
const CpuSettings& cpu_settings();

}  // namespace lucid::ops
