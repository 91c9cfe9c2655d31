// lucid's own float32 matrix product for x86 CPUs with AVX2+FMA or AVX-512: packed
// operands, a register-blocked micro-kernel, and lucid's pool threading it with one
// shared copy of the packed right operand (Note [Own sgemm] in sgemm.cpp).
#pragma once

#include <cstdint>
#include <memory>

namespace lucid::cpu {

// C = alpha * A @ B + beta * C, where A is m x k with element (i, p) at
// A[i * a_rs + p * a_cs], B is k x n with element (p, j) at B[p * b_rs + j * b_cs]
// (any strides: a transpose is a stride swap) and C is m x n with rows ldc apart
// and unit columns. With beta == 0, C is not read (BLAS semantics: NaNs there do
// not propagate). Threaded over the pool unless called from inside a parallel_for.
// Call only where own_sgemm_suits(m, n).
void own_sgemm(int64_t m, int64_t n, int64_t k, float alpha, const float* A, int64_t a_rs, int64_t a_cs,
               const float* B, int64_t b_rs, int64_t b_cs, float beta, float* C, int64_t ldc);

// A matrix operand: element (r, c) at p[r * rs + c * cs], or at p[row_off[r] + c * cs]
// when row_off is given (rows anywhere: a convolution's windows over its padded
// image, Note [Direct convolution] in conv_direct.cpp).
struct MatrixRef {
  const float* p;
  int64_t rs, cs;
  const int64_t* row_off = nullptr;
  const float* at(int64_t r, int64_t c) const { return p + (row_off ? row_off[r] : r * rs) + c * cs; }
  // The matrix from element (r, c) on.
  MatrixRef sub(int64_t r, int64_t c) const {
    return row_off ? MatrixRef{p + c * cs, rs, cs, row_off + r} : MatrixRef{at(r, c), rs, cs, nullptr};
  }
};

// C = A @ B + beta * C where one operand (not both) may have row offsets; such an
// operand must have contiguous rows (cs == 1) and is read in place, not packed. B is
// read in whole tiles: element (p, j) for j up to n + kRowsAtOverread, so its buffer
// must extend that far (what it holds there only reaches columns past n, which are
// not written). Same threading and conditions as own_sgemm.
constexpr int64_t kRowsAtOverread = 48;
void own_sgemm_ref(int64_t m, int64_t n, int64_t k, MatrixRef A, MatrixRef B, float beta, float* C, int64_t ldc);
// count products C_b = A @ B_b (beta 0), B_b = B with b * b_step added to its pointer,
// C_b at C + b * c_step, B with row offsets: one pool dispatch whose threads split
// across the products, and within each when there are fewer products than threads (a
// convolution's batch on many cores).
void own_sgemm_ref_batch(int64_t count, int64_t m, int64_t n, int64_t k, MatrixRef A, MatrixRef B, int64_t b_step,
                         float* C, int64_t c_step, int64_t ldc);

// The right operand of many products with one B (an RNN's recurrent weight, once per
// time step), packed once: own_sgemm_packed then reads it as it is. m_hint is the
// products' row count (it picks the tile shape). Only where own_sgemm_suits.
class SgemmPackedB {
 public:
  SgemmPackedB(int64_t m_hint, int64_t k, int64_t n, MatrixRef B);
  int64_t k() const { return k_; }
  int64_t n() const { return n_; }

 private:
  friend void own_sgemm_packed(int64_t, float, MatrixRef, const SgemmPackedB&, float, float*, int64_t);
  struct Free {
    void operator()(float* p) const;
  };
  const void* micro_;  // the tile shape and blocking it was packed for
  int64_t k_, n_;
  std::unique_ptr<float, Free> data_;  // 64-byte aligned: the kernel's loads stay within lines
};

// C = alpha * A @ B + beta * C, A m x B.k(), as own_sgemm.
void own_sgemm_packed(int64_t m, float alpha, MatrixRef A, const SgemmPackedB& B, float beta, float* C, int64_t ldc);

// Whether own_sgemm runs on this CPU (AVX2+FMA or AVX-512) and pays for an m x n
// output: a matrix-vector product (a row or a few columns) is left to BLAS or the
// loops, which read the matrix once instead of packing it into padded tiles.
bool own_sgemm_suits(int64_t m, int64_t n);

// One micro-tile of the AVX-512 kernel, for callers that write their operands in its
// packed layout themselves (Winograd convolution, conv_winograd.cpp):
//   c [kTileRows x kTileCols, rows ldc apart] = a [kc][kTileRows] @ b [kc][kTileCols]
// (a holds A's columns of kTileRows values, b B's rows of kTileCols). c is written,
// not read. Call only where sgemm_tile_suits().
constexpr int64_t kTileRows = 8, kTileCols = 48;
bool sgemm_tile_suits();
void sgemm_tile(int64_t kc, const float* a, const float* b, float* c, int64_t ldc);

}  // namespace lucid::cpu
