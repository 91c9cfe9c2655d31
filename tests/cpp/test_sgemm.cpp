// lucid's own float32 product (backend/cpu/sgemm.cpp) against a double-precision
// loop: edge tiles in both directions, several k slices, several column blocks of the
// shared packed B, transposed and row-padded operands, alpha/beta (and NaN in C when
// beta == 0), on 1-3 threads. The operands hold small integers, so every sum is exact
// and the comparison is too. CTest also runs these with LUCID_CPU_ISA=avx2, which
// picks the AVX2 kernel on an AVX-512 machine.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "backend/cpu/sgemm.h"
#include "core/parallel.h"

using namespace lucid;

namespace {

struct Case {
  int64_t m, n, k;
  bool ta, tb;  // operand stored transposed (column-major)
  int64_t pad;  // extra elements at the end of every stored row
  float alpha, beta;
};

void check(const Case& c) {
  // Stored shapes: A is m x k (or k x m when ta), B is k x n (or n x k when tb).
  const int64_t a_rows = c.ta ? c.k : c.m, a_cols = (c.ta ? c.m : c.k) + c.pad;
  const int64_t b_rows = c.tb ? c.n : c.k, b_cols = (c.tb ? c.k : c.n) + c.pad;
  std::vector<float> a(size_t(a_rows * a_cols)), b(size_t(b_rows * b_cols));
  for (size_t i = 0; i < a.size(); ++i) a[i] = float(int64_t(i * 7 % 9) - 4);
  for (size_t i = 0; i < b.size(); ++i) b[i] = float(int64_t(i * 5 % 7) - 3);
  const int64_t ldc = c.n + 3;
  std::vector<float> out(size_t(c.m * ldc), c.beta == 0.0f ? std::nanf("") : 1.0f);
  const int64_t a_rs = c.ta ? 1 : a_cols, a_cs = c.ta ? a_cols : 1;
  const int64_t b_rs = c.tb ? 1 : b_cols, b_cs = c.tb ? b_cols : 1;
  cpu::own_sgemm(c.m, c.n, c.k, c.alpha, a.data(), a_rs, a_cs, b.data(), b_rs, b_cs, c.beta, out.data(), ldc);
  for (int64_t i = 0; i < c.m; ++i)
    for (int64_t j = 0; j < c.n; ++j) {
      double sum = 0;
      for (int64_t p = 0; p < c.k; ++p) sum += double(a[size_t(i * a_rs + p * a_cs)]) * b[size_t(p * b_rs + j * b_cs)];
      const double want = c.alpha * sum + (c.beta == 0.0f ? 0.0 : c.beta * 1.0);
      ASSERT_EQ(out[size_t(i * ldc + j)], float(want))
          << "m=" << c.m << " n=" << c.n << " k=" << c.k << " ta=" << c.ta << " tb=" << c.tb << " at (" << i << ", "
          << j << ")";
    }
}

}  // namespace

TEST(Sgemm, AgainstDoubleLoop) {
  if (!cpu::own_sgemm_suits(64, 64)) GTEST_SKIP() << "this CPU has neither AVX2+FMA nor AVX-512";
  const int saved = cpu::pool_threads();
  for (int threads : {1, 2, 3}) {
    cpu::set_pool_threads(threads);
    for (bool ta : {false, true})
      for (bool tb : {false, true}) {
        check({4, 8, 1, ta, tb, 0, 1.0f, 0.0f});          // smallest suited product, one k step
        check({13, 33, 17, ta, tb, 2, 2.0f, 0.0f});       // edge tiles in rows and columns
        check({100, 70, 800, ta, tb, 1, 0.5f, 3.0f});     // several k slices, beta applied once
        check({257, 129, 300, ta, tb, 0, -1.0f, 1.0f});   // both kernels' full and edge tiles
        check({16, 2100, 1100, ta, tb, 5, 1.0f, 0.0f});   // several column blocks of packed B
        // AVX-512 has two tile shapes; the padding picks one: 12 x 32 for these two,
        // 8 x 48 for most of the others.
        check({24, 64, 500, ta, tb, 0, 1.0f, 0.0f});
        check({120, 160, 40, ta, tb, 3, 2.0f, 1.0f});
      }
  }
  cpu::set_pool_threads(saved);
}

TEST(Sgemm, EmptySumScalesC) {
  if (!cpu::own_sgemm_suits(64, 64)) GTEST_SKIP() << "this CPU has neither AVX2+FMA nor AVX-512";
  check({6, 9, 0, false, false, 0, 1.0f, 2.0f});
  check({6, 9, 0, false, false, 0, 1.0f, 0.0f});
}

TEST(Sgemm, MatrixVectorShapesAreLeftToBlas) {
  EXPECT_FALSE(cpu::own_sgemm_suits(1, 4096));
  EXPECT_FALSE(cpu::own_sgemm_suits(4096, 1));
}

// An operand whose rows sit at arbitrary offsets (MatrixRef::row_off): overlapping
// rows of one buffer, as a convolution's windows over its padded image; either B
// (read in place in whole tiles, so its buffer extends kRowsAtOverread past the last
// row) or A (with B plain or transposed).
TEST(Sgemm, RowsAtOffsets) {
  if (!cpu::own_sgemm_suits(64, 64)) GTEST_SKIP() << "this CPU has neither AVX2+FMA nor AVX-512";
  const int saved = cpu::pool_threads();
  struct Shape {
    int64_t m, n, k;
  };
  enum Mode { kBAt, kAAt, kAAtBTransposed };
  for (int threads : {1, 2, 3}) {
    cpu::set_pool_threads(threads);
    for (Shape s : {Shape{4, 8, 1}, Shape{13, 33, 17}, Shape{64, 200, 500}, Shape{100, 70, 800}, Shape{9, 50, 30}})
      for (Mode mode : {kBAt, kAAt, kAAtBTransposed}) {
        std::vector<int64_t> a_off(size_t(s.m)), b_off(size_t(s.k));
        for (int64_t i = 0; i < s.m; ++i) a_off[size_t(i)] = 3 * i + i % 5;
        for (int64_t p = 0; p < s.k; ++p) b_off[size_t(p)] = 2 * p + (p * 7) % 11;
        const bool a_at = mode != kBAt;
        std::vector<float> a(size_t(a_at ? 3 * s.m + 5 + s.k : s.m * (s.k + 1)));
        std::vector<float> b(size_t(a_at ? s.k * s.n : 2 * s.k + 11 + s.n + cpu::kRowsAtOverread));
        for (size_t i = 0; i < a.size(); ++i) a[i] = float(int64_t(i * 7 % 9) - 4);
        for (size_t i = 0; i < b.size(); ++i) b[i] = float(int64_t(i * 5 % 7) - 3);
        const cpu::MatrixRef A = a_at ? cpu::MatrixRef{a.data(), 0, 1, a_off.data()} : cpu::MatrixRef{a.data(), s.k + 1, 1};
        const cpu::MatrixRef B = mode == kBAt ? cpu::MatrixRef{b.data(), 0, 1, b_off.data()}
                                 : mode == kAAt ? cpu::MatrixRef{b.data(), s.n, 1}
                                                : cpu::MatrixRef{b.data(), 1, s.k};
        const int64_t ldc = s.n + 2;
        for (float beta : {0.0f, 1.0f}) {
          std::vector<float> out(size_t(s.m * ldc), beta == 0.0f ? std::nanf("") : 2.0f);
          cpu::own_sgemm_ref(s.m, s.n, s.k, A, B, beta, out.data(), ldc);
          for (int64_t i = 0; i < s.m; ++i)
            for (int64_t j = 0; j < s.n; ++j) {
              double sum = beta == 0.0f ? 0.0 : 2.0;
              for (int64_t p = 0; p < s.k; ++p) sum += double(*A.at(i, p)) * *B.at(p, j);
              ASSERT_EQ(out[size_t(i * ldc + j)], float(sum))
                  << "m=" << s.m << " n=" << s.n << " k=" << s.k << " mode=" << mode << " beta=" << beta << " at (" << i
                  << ", " << j << ")";
            }
        }
      }
  }
  cpu::set_pool_threads(saved);
}

// B packed once (SgemmPackedB) and used by several products, with A of other row
// counts than the hint, transposed or not, beta 0 and 1.
TEST(Sgemm, PackedOnceUsedAgain) {
  if (!cpu::own_sgemm_suits(64, 64)) GTEST_SKIP() << "this CPU has neither AVX2+FMA nor AVX-512";
  struct Shape {
    int64_t m, n, k;
  };
  for (Shape s : {Shape{32, 1024, 256}, Shape{13, 50, 700}, Shape{4, 8, 1}})
    for (bool tb : {false, true}) {
      std::vector<float> b(size_t(s.k * s.n));
      for (size_t i = 0; i < b.size(); ++i) b[i] = float(int64_t(i * 5 % 7) - 3);
      const cpu::MatrixRef B = tb ? cpu::MatrixRef{b.data(), 1, s.k} : cpu::MatrixRef{b.data(), s.n, 1};
      const cpu::SgemmPackedB packed(s.m, s.k, s.n, B);
      for (int64_t m : {s.m, s.m + 5}) {
        std::vector<float> a(size_t(m * s.k));
        for (size_t i = 0; i < a.size(); ++i) a[i] = float(int64_t((i + size_t(m)) * 7 % 9) - 4);
        for (float beta : {0.0f, 1.0f}) {
          std::vector<float> out(size_t(m * s.n), beta == 0.0f ? std::nanf("") : 1.0f);
          cpu::own_sgemm_packed(m, 2.0f, cpu::MatrixRef{a.data(), s.k, 1}, packed, beta, out.data(), s.n);
          for (int64_t i = 0; i < m; ++i)
            for (int64_t j = 0; j < s.n; ++j) {
              double sum = 0;
              for (int64_t p = 0; p < s.k; ++p) sum += double(a[size_t(i * s.k + p)]) * *B.at(p, j);
              ASSERT_EQ(out[size_t(i * s.n + j)], float(2.0 * sum + (beta == 0.0f ? 0.0 : 1.0)))
                  << "m=" << m << " n=" << s.n << " k=" << s.k << " tb=" << tb << " at (" << i << ", " << j << ")";
            }
        }
      }
    }
}

// Several products over one set of B row offsets (B and C shifted per product), run as
// one dispatch: fewer products than threads (each split), as many, and more.
TEST(Sgemm, BatchOfRowOffsetProducts) {
  if (!cpu::own_sgemm_suits(64, 64)) GTEST_SKIP() << "this CPU has neither AVX2+FMA nor AVX-512";
  const int saved = cpu::pool_threads();
  const int64_t m = 20, n = 70, k = 45, b_step = 2 * k + 11 + n + cpu::kRowsAtOverread, count = 3;
  std::vector<int64_t> b_off(static_cast<size_t>(k));
  for (int64_t p = 0; p < k; ++p) b_off[size_t(p)] = 2 * p + (p * 7) % 11;
  std::vector<float> a(size_t(m * k)), b(size_t(count * b_step));
  for (size_t i = 0; i < a.size(); ++i) a[i] = float(int64_t(i * 7 % 9) - 4);
  for (size_t i = 0; i < b.size(); ++i) b[i] = float(int64_t(i * 5 % 7) - 3);
  for (int threads : {1, 2, 3, 5}) {
    cpu::set_pool_threads(threads);
    std::vector<float> out(size_t(count * m * n), std::nanf(""));
    cpu::own_sgemm_ref_batch(count, m, n, k, cpu::MatrixRef{a.data(), k, 1}, cpu::MatrixRef{b.data(), 0, 1, b_off.data()},
                             b_step, out.data(), m * n, n);
    for (int64_t c = 0; c < count; ++c)
      for (int64_t i = 0; i < m; ++i)
        for (int64_t j = 0; j < n; ++j) {
          double sum = 0;
          for (int64_t p = 0; p < k; ++p) sum += double(a[size_t(i * k + p)]) * b[size_t(c * b_step + b_off[size_t(p)] + j)];
          ASSERT_EQ(out[size_t(c * m * n + i * n + j)], float(sum)) << "threads=" << threads << " product " << c;
        }
  }
  cpu::set_pool_threads(saved);
}
