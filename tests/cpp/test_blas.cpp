// cpu::gemm against a double-precision reference loop, for every operand layout the
// backend treats differently: row-major, transposed (BLAS flags), row-strided
// (leading dimension), column-strided (copied first), broadcast batches (stride 0),
// and beta == 0 with NaN in the output (not read).
#include <gtest/gtest.h>

#include <cmath>
#include <complex>

#include "backend/cpu/blas.h"

using namespace lucid;

namespace {

// A [rows, cols] view of a fresh buffer, filled with small integers (exact in every
// dtype), with element strides (rs, cs) inside a buffer large enough for them.
TensorPtr matrix(int64_t rows, int64_t cols, int64_t rs, int64_t cs, Dtype d, int seed) {
  const int64_t span = (rows - 1) * rs + (cols - 1) * cs + 1;
  TensorPtr buf = TensorImpl::empty({span}, d, Device::cpu());
  for (int64_t i = 0; i < span; ++i) {
    TensorPtr one = TensorImpl::view_of(*buf, {}, {}, i * int64_t(buf->itemsize()));
    one->initialize(Scalar(int64_t((i * 7 + seed * 3) % 9) - 4));
  }
  const int64_t is = int64_t(buf->itemsize());
  return TensorImpl::view_of(*buf, {rows, cols}, {rs * is, cs * is}, 0);
}

double at(const TensorImpl& t, int64_t r, int64_t c) {
  const std::byte* p = t.host_ptr() + r * t.stride()[0] + c * t.stride()[1];
  Scalar s = scalar_from_bytes(p, t.dtype());
  if (auto* z = std::get_if<std::complex<double>>(&s)) return z->real();
  if (auto* i = std::get_if<int64_t>(&s)) return double(*i);
  return std::get<double>(s);
}

void check_gemm(Dtype d, int64_t m, int64_t n, int64_t k, int64_t ars, int64_t acs, int64_t brs, int64_t bcs) {
  TensorPtr a = matrix(m, k, ars, acs, d, 1), b = matrix(k, n, brs, bcs, d, 2);
  // NaN where beta == 0 must not read it (integers have no NaN: uninitialised).
  TensorPtr out = d == Dtype::I32 ? TensorImpl::empty({m, n}, d, Device::cpu())
                                  : TensorImpl::full({m, n}, Scalar(std::nan("")), d, Device::cpu());
  cpu::gemm(*out, *a, *b, Scalar(int64_t(2)), Scalar(int64_t(0)));
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double want = 0;
      for (int64_t p = 0; p < k; ++p) want += at(*a, i, p) * at(*b, p, j);
      ASSERT_EQ(at(*out, i, j), 2 * want) << dtype_name(d) << " (" << i << ", " << j << ")";
    }
}

}  // namespace

TEST(Blas, EveryLayoutAndDtype) {
  for (Dtype d : {Dtype::F32, Dtype::F64, Dtype::C64, Dtype::F16, Dtype::BF16, Dtype::I32}) {
    const int64_t m = 5, n = 6, k = 7;
    check_gemm(d, m, n, k, k, 1, n, 1);          // row-major
    check_gemm(d, m, n, k, 1, m, 1, k);          // both transposed
    check_gemm(d, m, n, k, k + 3, 1, 1, k + 2);  // row-strided a, transposed b with padding
    check_gemm(d, m, n, k, 2 * k, 2, n, 1);      // column step: copied first
    check_gemm(d, 1, n, k, 999, 1, n, 1);        // one row: its stride is never used
  }
}

TEST(Blas, BroadcastBatchAndBeta) {
  // a: one [2, 3] matrix read for all 4 batch entries (stride 0); out = 1*a@b + 3*out.
  TensorPtr a2 = matrix(2, 3, 3, 1, Dtype::F32, 1);
  TensorPtr a = TensorImpl::view_of(*a2, {4, 2, 3}, {0, a2->stride()[0], a2->stride()[1]}, 0);
  TensorPtr b = TensorImpl::empty({4, 3, 5}, Dtype::F32, Device::cpu());
  auto* pb = reinterpret_cast<float*>(b->host_ptr());
  for (int i = 0; i < 60; ++i) pb[i] = float(i % 7 - 3);
  TensorPtr out = TensorImpl::full({4, 2, 5}, Scalar(1.0), Dtype::F32, Device::cpu());
  cpu::gemm(*out, *a, *b, Scalar(1.0), Scalar(3.0));
  auto* po = reinterpret_cast<float*>(out->host_ptr());
  for (int64_t bi = 0; bi < 4; ++bi)
    for (int64_t i = 0; i < 2; ++i)
      for (int64_t j = 0; j < 5; ++j) {
        double want = 3;
        for (int64_t p = 0; p < 3; ++p) want += at(*a2, i, p) * pb[bi * 15 + p * 5 + j];
        EXPECT_EQ(po[bi * 10 + i * 5 + j], float(want));
      }
}

TEST(Blas, Threads) {
  const int n = cpu::get_num_threads();
  EXPECT_GE(n, 1);
  cpu::set_num_threads(1);
  EXPECT_EQ(cpu::get_num_threads(), 1);
  cpu::set_num_threads(n);
  EXPECT_THROW(cpu::set_num_threads(0), RuntimeError);
}
