// The CPU kernel of the sparse-times-dense product (ops/prims/sparse.h): rows of the
// output split among the threads, each row the sum of its entries' scaled rows of B
// (a contiguous axpy the compiler vectorises). The indices are checked as they are
// read (the caller promises them sound; a wrong one must still raise, never read
// outside B): the check costs a compare per entry against an n-wide row update.
#include <algorithm>
#include <cstdint>

#include "backend/cpu/register.h"
#include "core/error.h"
#include "core/parallel.h"
#include "ops/prims/sparse.h"

namespace lucid::cpu {

namespace {

template <class T>
void csr_rows(const int64_t* crow, const int64_t* col, const T* values, const T* b, T* out, int64_t k, int64_t n,
              int64_t nnz, int64_t first, int64_t last) {
  for (int64_t i = first; i < last; ++i) {
    T* row = out + i * n;
    std::fill(row, row + n, T(0));
    const int64_t begin = crow[i], end = crow[i + 1];
    LUCID_CHECK(0 <= begin && begin <= end && end <= nnz, RuntimeError, "sparse.mm: crow_indices of row ", i,
                " (", begin, ", ", end, ") do not rise within [0, ", nnz, "]");
    for (int64_t e = begin; e < end; ++e) {
      const int64_t c = col[e];
      LUCID_CHECK(0 <= c && c < k, RuntimeError, "sparse.mm: column index ", c, " out of range for a matrix of ",
                  k, " columns");
      const T v = values[e];
      const T* src = b + c * n;
      for (int64_t j = 0; j < n; ++j) row[j] += v * src[j];
    }
  }
}

void csr_matmul_kernel(const ops::Primitive&, ops::Outputs outs, ops::Inputs ins) {
  const TensorImpl *crow = ins[0], *col = ins[1], *values = ins[2], *b = ins[3], *out = outs[0];
  const int64_t m = out->shape()[0], n = out->shape()[1], k = b->shape()[0], nnz = values->shape()[0];
  const auto* crow_p = reinterpret_cast<const int64_t*>(crow->host_ptr());
  const auto* col_p = reinterpret_cast<const int64_t*>(col->host_ptr());
  // About 32K multiply-adds a piece: rows of the average length times n.
  const int64_t per_row = std::max<int64_t>(1, (nnz / std::max<int64_t>(1, m) + 1) * n);
  const int64_t grain = std::max<int64_t>(1, 32768 / per_row);
  auto run = [&]<class T>() {
    const T* v = reinterpret_cast<const T*>(values->host_ptr());
    const T* bp = reinterpret_cast<const T*>(b->host_ptr());
    T* op = reinterpret_cast<T*>(out->host_ptr());
    parallel_for(m, grain, [&](int64_t first, int64_t last) {
      csr_rows<T>(crow_p, col_p, v, bp, op, k, n, nnz, first, last);
    });
  };
  if (values->dtype() == Dtype::F64) run.template operator()<double>();
  else run.template operator()<float>();
}

}  // namespace

void register_sparse_kernels() { ops::register_kernel(ops::Prim::CsrMatmul, DeviceType::CPU, csr_matmul_kernel); }

}  // namespace lucid::cpu
