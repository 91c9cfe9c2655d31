#include "backend/cpu/sgemm.h"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <memory>
#include <new>

#include "core/isa.h"
#include "core/parallel.h"

#if LUCID_X86_DISPATCH
#include <immintrin.h>

#include "core/transpose16.h"
// GCC 12's AVX-512 headers build vectors from an uninitialised "undefined" value
// and warn about their own code.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

// Note [Own sgemm]
// OpenBLAS (Debian's 0.3.21) matches MKL on one core, but lucid has to split each
// product over its own pool (Note [One pool for products] in blas.cpp), and two
// independent half-products each packed the whole right operand and stalled on each
// other's memory traffic: 2-thread products ran at 0.75-0.85x PyTorch's. The GPU
// machine has no OpenBLAS at all. So float32 products have their own GotoBLAS/BLIS
// layout here:
//   for each block of B's columns (its packed copy, all of k, within 8 MiB):
//     one pool dispatch; every thread, for its rectangle of C's tiles:
//       for each kc-deep slice of k:
//         for its rows, mc at a time:               pack that A block (per thread)
//           for each block of nb B panels (L2):
//             for each mr-row micro-panel of A (L1):
//               for each nr-column panel of the block:   micro-kernel, kc deep
// B's panels are packed on first use by whichever thread needs one first (the others
// wait for that panel only), so B is packed once, shared, without a separate pass; a
// whole panel of contiguous rows is packed by that first kernel call itself, which
// stores each row of B as it loads it (kPacksB): B's rows are a row of B apart, in
// L3 or memory, and a separate pack waited on every one of them (pack_b was 4.4% of
// a 1-thread 1024 product; fused, the product went from 150-153 to 155-156 GFLOP/s,
// MKL's 156-159).
// Keeping the A micro-panel in L1 and streaming B from L2 is BLIS's order (its
// vector operand is our B); the reverse, B's panel in L1, ran 1.2x slower than
// OpenBLAS at 1024-2048 from the traffic of C's tiles. Threads own a rectangle of C's
// tiles (rows when the output is tall, columns when it is wide).
// The micro-kernel keeps its tile in 24 (AVX-512: 12 x 32 or 8 x 48) or 12 (AVX2:
// 6 x 16) vector registers, loads a row of the B panel and broadcasts A's column, so
// every load feeds two or three fused multiply-adds. Of the two AVX-512 shapes each
// product takes the one that pads its output least: 8 x 48 for 64 rows (a
// convolution's 64 output channels), where 12 x 32 would compute 72.

namespace lucid::cpu {

namespace {


// Where the kernel reads its operands: A packed (a[p * mr + r]) and B's row p at
// b + p * ldb; or B's row p at b + b_off[p]; or A's row r at a + a_off[r] (a
// convolution's windows over its padded image: Note [Direct convolution] in
// conv_direct.cpp).
// kPacksB: A packed, B's rows read from B itself (row p at b + p * ldb) and stored as
// they are loaded into the packed panel at pack (the first use of a panel packs it
// while multiplying: Note [Own sgemm]).
enum Rows { kPacked, kBRowsAt, kARowsAt, kPacksB, kRowModes };

// c (mr x nr, rows ldc apart) = alpha * tile (+ beta * c when load_c), where tile is
// the sum over kc of the outer products of A's columns and B's rows.
using Kernel = void (*)(int64_t kc, const float* a, const int64_t* a_off, const float* b, int64_t ldb,
                        const int64_t* b_off, float* c, int64_t ldc, float alpha, float beta, bool load_c,
                        float* pack);
// Packs rows x kc of A into panels of mr rows (panel-major, then k, then row; rows
// past `rows` are zero) / kc x cols of B into panels of nr columns.
using PackA = void (*)(MatrixRef a, int64_t rows, int64_t kc, float* dst);
using PackB = void (*)(MatrixRef b, int64_t kc, int64_t cols, float* dst);

// The tile (mr x nr) and the blocking: kc-deep slices of k; A packed mc rows at a
// time (the A micro-panel, mr x kc, stays in L1 while the kernel sweeps a block of
// nb B panels, nb x nr x kc floats, that stays in L2).
struct Micro {
  int64_t mr, nr, kc, mc, nb;
  Kernel kernels[kRowModes];
  PackA pack_a;
  PackB pack_b;
};

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

// ---- packing: the portable loops ------------------------------------------------

template <int MR>
void pack_a_loop(MatrixRef a, int64_t rows, int64_t kc, float* dst) {
  for (int64_t i = 0; i < rows; i += MR, dst += MR * kc) {
    const int64_t h = std::min<int64_t>(MR, rows - i);
    for (int64_t p = 0; p < kc; ++p)
      for (int64_t r = 0; r < MR; ++r) dst[p * MR + r] = r < h ? *a.at(i + r, p) : 0.0f;
  }
}

template <int NR>
void pack_b_loop(MatrixRef b, int64_t kc, int64_t cols, float* dst) {
  for (int64_t j = 0; j < cols; j += NR, dst += NR * kc) {
    const int64_t w = std::min<int64_t>(NR, cols - j);
    if (b.cs == 1 && w == NR) {  // rows of B are contiguous: straight copies
      for (int64_t p = 0; p < kc; ++p) {
        const float* src = b.at(p, j);
        for (int64_t c = 0; c < NR; ++c) dst[p * NR + c] = src[c];  // vectorised (no memcpy call)
      }
      continue;
    }
    for (int64_t p = 0; p < kc; ++p)
      for (int64_t c = 0; c < NR; ++c) dst[p * NR + c] = c < w ? *b.at(p, j + c) : 0.0f;
  }
}

#if LUCID_X86_DISPATCH
#define LUCID_TARGET_AVX512_FMA __attribute__((target("avx512f,avx512bw,avx512dq,avx512vl,avx2,fma")))
#define LUCID_TARGET_AVX2_FMA __attribute__((target("avx2,fma")))

// ---- AVX-512: MR x (16 NV) tiles -------------------------------------------------------

// Two shapes, picked per product by the padding they waste (Note [Own sgemm]): 12 x 32
// (24 accumulators) and 8 x 48 (24 accumulators), for row counts that are multiples
// of 8 but not of 12 (64 output channels, say).
template <int MR, int NV, Rows kRows>
LUCID_TARGET_AVX512_FMA void kernel_avx512(int64_t kc, const float* __restrict a, const int64_t* __restrict a_off,
                                           const float* __restrict b, int64_t ldb, const int64_t* __restrict b_off,
                                           float* __restrict c, int64_t ldc, float alpha, float beta, bool load_c,
                                           float* __restrict pack) {
  constexpr int NR = 16 * NV;
  __m512 acc[MR][NV];
  const float* a_row[MR];
  if constexpr (kRows == kARowsAt)
    for (int r = 0; r < MR; ++r) a_row[r] = a + a_off[r];
#pragma GCC unroll 12
  for (int r = 0; r < MR; ++r) {
#pragma GCC unroll 3
    for (int v = 0; v < NV; ++v) acc[r][v] = _mm512_setzero_ps();
    // C's rows are often a power of two apart and share cache sets: fetch them
    // while the multiply-adds run rather than stall on them at the end.
    _mm_prefetch(reinterpret_cast<const char*>(c + r * ldc), _MM_HINT_T0);
    _mm_prefetch(reinterpret_cast<const char*>(c + r * ldc + NR - 1), _MM_HINT_T0);
  }
#pragma GCC unroll 4
  for (int64_t p = 0; p < kc; ++p) {
    const float* row = kRows == kBRowsAt ? b + b_off[p] : b + p * ldb;
    __m512 bv[NV];
#pragma GCC unroll 3
    for (int v = 0; v < NV; ++v) {
      bv[v] = _mm512_loadu_ps(row + 16 * v);
      // B streams from L2 (its panel is used once per A micro-panel): ask ahead.
      // (Rows at offsets are a convolution's image rows, a few KiB reused by every
      // row step and window position: they stay in L1. Rows of B itself are far
      // apart and come from L3 or memory: further ahead.)
      if constexpr (kRows == kPacksB) {
        _mm_prefetch(reinterpret_cast<const char*>(row + 24 * ldb + 16 * v), _MM_HINT_T0);
        _mm512_store_ps(pack + p * NR + 16 * v, bv[v]);
      } else if constexpr (kRows != kBRowsAt) {
        _mm_prefetch(reinterpret_cast<const char*>(row + 8 * ldb + 16 * v), _MM_HINT_T0);
      }
    }
#pragma GCC unroll 12
    for (int r = 0; r < MR; ++r) {
      const __m512 av = _mm512_set1_ps(kRows == kARowsAt ? a_row[r][p] : a[p * MR + r]);
#pragma GCC unroll 3
      for (int v = 0; v < NV; ++v) acc[r][v] = _mm512_fmadd_ps(av, bv[v], acc[r][v]);
    }
  }
  const __m512 va = _mm512_set1_ps(alpha), vb = _mm512_set1_ps(beta);
#pragma GCC unroll 12
  for (int r = 0; r < MR; ++r) {
    float* cr = c + r * ldc;
#pragma GCC unroll 3
    for (int v = 0; v < NV; ++v) {
      __m512 x = _mm512_mul_ps(va, acc[r][v]);
      if (load_c) x = _mm512_fmadd_ps(vb, _mm512_loadu_ps(cr + 16 * v), x);
      _mm512_storeu_ps(cr + 16 * v, x);
    }
  }
}

// A with contiguous rows (the usual x @ w): MR rows x 16 k at a time are loaded,
// transposed in registers, and stored as 16 k-steps of MR values.
template <int MR>
LUCID_TARGET_AVX512_FMA void pack_a_avx512(MatrixRef a, int64_t rows, int64_t kc, float* dst) {
  if (a.rs == 1 && !a.row_off) {
    // Contiguous columns (a transposed A: dW = dY^T @ X): each k-step's MR values
    // are already side by side, one masked copy.
    for (int64_t i = 0; i < rows; i += MR, dst += MR * kc) {
      const __mmask16 load = __mmask16((1u << std::min<int64_t>(MR, rows - i)) - 1), all = __mmask16((1u << MR) - 1);
      for (int64_t p = 0; p < kc; ++p) _mm512_mask_storeu_ps(dst + p * MR, all, _mm512_maskz_loadu_ps(load, a.at(i, p)));
    }
    return;
  }
  if (a.cs != 1) return pack_a_loop<MR>(a, rows, kc, dst);
  for (int64_t i = 0; i < rows; i += MR, dst += MR * kc) {
    // (a last, short micro-panel gets zero rows: 128 rows end in 8 of 12, and the
    // element-by-element loop was a fifth of a batched 128^3 product's packing)
    const int64_t h = std::min<int64_t>(MR, rows - i);
    int64_t p = 0;
    for (; p + 16 <= kc; p += 16) {
      __m512 r[16];
#pragma GCC unroll 16
      for (int q = 0; q < 16; ++q) r[q] = q < h ? _mm512_loadu_ps(a.at(i + q, p)) : _mm512_setzero_ps();
      transpose16(r);
#pragma GCC unroll 16
      for (int q = 0; q < 16; ++q) _mm512_mask_storeu_ps(dst + (p + q) * MR, __mmask16((1u << MR) - 1), r[q]);
    }
    for (; p < kc; ++p)
      for (int64_t r = 0; r < MR; ++r) dst[p * MR + r] = r < h ? *a.at(i + r, p) : 0.0f;
  }
}

// B, one panel of up to 16 NV columns: vector copies when its rows are contiguous;
// 16 columns x 16 k transposed in registers when its columns are (x @ w.T, as
// nn.Linear).
template <int NV>
LUCID_TARGET_AVX512_FMA void pack_b_avx512(MatrixRef b, int64_t kc, int64_t cols, float* dst) {
  constexpr int NR = 16 * NV;
  if (b.cs != 1 && b.rs != 1) return pack_b_loop<NR>(b, kc, cols, dst);
  if (b.cs == 1) {
    if (cols < NR) return pack_b_loop<NR>(b, kc, cols, dst);
    for (int64_t p = 0; p < kc; ++p)
#pragma GCC unroll 3
      for (int v = 0; v < NV; ++v) _mm512_store_ps(dst + p * NR + 16 * v, _mm512_loadu_ps(b.at(p, 16 * v)));
    return;
  }
  // Columns contiguous along k: 16 columns x 16 k at a time, transposed in registers;
  // the columns a narrow panel lacks are zeros (a convolution's 16 output channels
  // filled a 32-wide panel element by element).
  int64_t p = 0;
  for (; p + 16 <= kc; p += 16) {
    for (int v = 0; v < NV; ++v) {
      const int64_t valid = std::clamp<int64_t>(cols - 16 * v, 0, 16);
      __m512 r[16];
#pragma GCC unroll 16
      for (int q = 0; q < 16; ++q) r[q] = q < valid ? _mm512_loadu_ps(b.at(p, 16 * v + q)) : _mm512_setzero_ps();
      transpose16(r);
#pragma GCC unroll 16
      for (int q = 0; q < 16; ++q) _mm512_store_ps(dst + (p + q) * NR + 16 * v, r[q]);
    }
  }
  for (; p < kc; ++p)
    for (int64_t c = 0; c < NR; ++c) dst[p * NR + c] = c < cols ? *b.at(p, c) : 0.0f;
}

// ---- AVX2: 6 x 16 tiles --------------------------------------------------------------

template <Rows kRows>
LUCID_TARGET_AVX2_FMA void kernel_6x16(int64_t kc, const float* __restrict a, const int64_t* __restrict a_off,
                                       const float* __restrict b, int64_t ldb, const int64_t* __restrict b_off,
                                       float* __restrict c, int64_t ldc, float alpha, float beta, bool load_c,
                                       float* __restrict pack) {
  __m256 acc[6][2];
  const float* a_row[6];
  if constexpr (kRows == kARowsAt)
    for (int r = 0; r < 6; ++r) a_row[r] = a + a_off[r];
#pragma GCC unroll 6
  for (int r = 0; r < 6; ++r) acc[r][0] = acc[r][1] = _mm256_setzero_ps();
  for (int64_t p = 0; p < kc; ++p) {
    const float* row = kRows == kBRowsAt ? b + b_off[p] : b + p * ldb;
    const __m256 b0 = _mm256_loadu_ps(row), b1 = _mm256_loadu_ps(row + 8);
    if constexpr (kRows == kPacksB) {
      _mm256_store_ps(pack + p * 16, b0);
      _mm256_store_ps(pack + p * 16 + 8, b1);
    }
#pragma GCC unroll 6
    for (int r = 0; r < 6; ++r) {
      const __m256 av = _mm256_broadcast_ss(kRows == kARowsAt ? a_row[r] + p : a + p * 6 + r);
      acc[r][0] = _mm256_fmadd_ps(av, b0, acc[r][0]);
      acc[r][1] = _mm256_fmadd_ps(av, b1, acc[r][1]);
    }
  }
  const __m256 va = _mm256_set1_ps(alpha), vb = _mm256_set1_ps(beta);
#pragma GCC unroll 6
  for (int r = 0; r < 6; ++r) {
    float* cr = c + r * ldc;
    __m256 x0 = _mm256_mul_ps(va, acc[r][0]), x1 = _mm256_mul_ps(va, acc[r][1]);
    if (load_c) {
      x0 = _mm256_fmadd_ps(vb, _mm256_loadu_ps(cr), x0);
      x1 = _mm256_fmadd_ps(vb, _mm256_loadu_ps(cr + 8), x1);
    }
    _mm256_storeu_ps(cr, x0);
    _mm256_storeu_ps(cr + 8, x1);
  }
}

const Micro kAvx512Wide{12, 32, 384, 3072, 15,
                        {&kernel_avx512<12, 2, kPacked>, &kernel_avx512<12, 2, kBRowsAt>, &kernel_avx512<12, 2, kARowsAt>,
                         &kernel_avx512<12, 2, kPacksB>},
                        &pack_a_avx512<12>, &pack_b_avx512<2>};
const Micro kAvx512Tall{8, 48, 384, 3072, 10,
                        {&kernel_avx512<8, 3, kPacked>, &kernel_avx512<8, 3, kBRowsAt>, &kernel_avx512<8, 3, kARowsAt>,
                         &kernel_avx512<8, 3, kPacksB>},
                        &pack_a_avx512<8>, &pack_b_avx512<3>};
// For an A with row offsets: the kernel keeps one pointer per row, and 12 rows left
// too few registers (GCC parked pointers in vector registers and moved them back on
// every step, on the multiply-add ports). 8 x 32 fits: the conv weight gradient
// (64ch, 56x56, batch 8) took 7.4-7.7 ms against 7.8-7.9 with 12 x 32, and 6 x 64
// (64-float B rows streamed from L2) was slower than both.
const Micro kAvx512RowsAtA{8, 32, 384, 3072, 15,
                           {&kernel_avx512<8, 2, kPacked>, &kernel_avx512<8, 2, kBRowsAt>, &kernel_avx512<8, 2, kARowsAt>,
                            &kernel_avx512<8, 2, kPacksB>},
                           &pack_a_avx512<8>, &pack_b_avx512<2>};
const Micro kAvx2{6, 16, 256, 4080, 10,
                  {&kernel_6x16<kPacked>, &kernel_6x16<kBRowsAt>, &kernel_6x16<kARowsAt>, &kernel_6x16<kPacksB>},
                  &pack_a_loop<6>, &pack_b_loop<16>};
#endif

// The kernel shapes this CPU runs (none: own_sgemm does not suit it).
struct Shapes {
  const Micro* first = nullptr;
  const Micro* second = nullptr;  // or nullptr
  const Micro* rows_at_a = nullptr;  // for an A with row offsets (else first)
};
Shapes shapes_for_cpu() {
#if LUCID_X86_DISPATCH
  static const Shapes shapes = []() -> Shapes {
    const Isa isa = cpu_isa();
    if (isa == Isa::Avx512) return {&kAvx512Wide, &kAvx512Tall, &kAvx512RowsAtA};
    if (isa == Isa::Avx2 && __builtin_cpu_supports("fma")) return {&kAvx2, nullptr, &kAvx2};
    return {};
  }();
  return shapes;
#else
  return {};
#endif
}

// The shape that pads an m x n output least (ties: the first).
const Micro& micro_for(int64_t m, int64_t n) {
  const Shapes s = shapes_for_cpu();
  auto padded = [&](const Micro* u) { return ceil_div(m, u->mr) * u->mr * (ceil_div(n, u->nr) * u->nr); };
  return s.second && padded(s.second) < padded(s.first) ? *s.second : *s.first;
}

// The same, or the shape for an A read in place when A has row offsets.
const Micro& micro_for(MatrixRef A, int64_t m, int64_t n) {
  return A.row_off ? *shapes_for_cpu().rows_at_a : micro_for(m, n);
}

// ---- the driver ----------------------------------------------------------------------

// A 64-byte aligned buffer that grows and is kept, one per thread.
struct PackBuffer {
  float* data = nullptr;
  size_t cap = 0;
  float* get(size_t n) {
    if (n > cap) {
      std::free(data);
      data = static_cast<float*>(std::aligned_alloc(64, (n * sizeof(float) + 63) / 64 * 64));
      if (!data) {
        cap = 0;
        throw std::bad_alloc();
      }
      cap = n;
    }
    return data;
  }
  ~PackBuffer() { std::free(data); }
};

// A product smaller than this many multiply-adds per thread is not split: waking a
// thread and packing an operand twice would cost more than the split gains.
constexpr double kMinMacsPerThread = double(1 << 18);

// Splits threads into a tm x tn grid over the m_tiles x n_tiles tiles of C so that
// the busiest thread has the fewest tiles; ties go to more row blocks (they share
// the packed B; column blocks each pack all of A's rows).
std::pair<int64_t, int64_t> thread_grid(int64_t threads, int64_t m_tiles, int64_t n_tiles) {
  std::pair<int64_t, int64_t> best{1, 1};
  int64_t best_cost = m_tiles * n_tiles + 1;
  for (int64_t tm = threads; tm >= 1; --tm) {
    if (threads % tm) continue;
    const int64_t tn = threads / tm;
    if (tm > m_tiles || tn > n_tiles) continue;
    const int64_t cost = ceil_div(m_tiles, tm) * ceil_div(n_tiles, tn);
    if (cost < best_cost) best = {tm, tn}, best_cost = cost;
  }
  return best;
}

// Runs fn(0), ..., fn(pieces - 1), on the pool when pieces > 1.
template <typename Fn>
void run_pieces(int64_t pieces, Fn&& fn) {
  if (pieces <= 1) return fn(int64_t(0));
  parallel_for(pieces, 1, [&](int64_t q0, int64_t q1) {
    for (int64_t q = q0; q < q1; ++q) fn(q);
  });
}

// The packed B of one block of columns, every kc slice of it, packed on first use:
// the first thread to need a panel packs it while any other that needs it waits,
// so the threads share one copy and one pool dispatch covers the whole block. (A
// thread waits only for a panel another running thread is packing, so a caller
// that runs a sleeping worker's piece after its own never waits for itself.)
class PackedB {
 public:
  // B with row offsets is read in place: row p of panel q at b.p + b.row_off[p] +
  // q * nr, every panel whole (the caller leaves room past column n). With `ready`,
  // every panel was packed before (SgemmPackedB) and is read from there.
  // `fuse`: whole panels of contiguous rows are left to the caller's kernel to pack
  // as it multiplies (kPacksB, which reads A packed).
  PackedB(const Micro& u, MatrixRef b, int64_t kc, int64_t slices, int64_t nc, float* data,
          std::atomic<uint8_t>* state, const float* ready, bool fuse)
      : u_(u), b_(b), kc_(kc), nc_(nc), panels_(ceil_div(nc, u.nr)), data_(data), state_(state), ready_(ready),
        fuse_(fuse) {
    if (b_.row_off || ready_) return;
    for (int64_t i = 0; i < slices * panels_; ++i) state_[i].store(kEmpty, std::memory_order_relaxed);
  }

  // Panel q (nr columns) of slice s (rows s * kc .. + kc_s of B): its first row and
  // the distance between rows.
  struct Panel {
    const float* p;
    int64_t ld;
    float* pack = nullptr;  // set: read B at p, ld and store the panel here (then done())
  };
  Panel panel(int64_t s, int64_t q, int64_t kc_s) {
    if (b_.row_off) return {b_.p + q * u_.nr, 0};
    if (ready_) return {ready_ + (s * panels_ + q) * kc_ * u_.nr, u_.nr};
    // Short contiguous rows (a [k, 64] B) are read in place: a panel's rows are a
    // few cache lines apart, so they stream, and packing would copy each element
    // for only m uses (a k-heavy product with a small output spent as long packing
    // as multiplying). Edge panels are packed: the kernel reads nr columns.
    if (b_.cs == 1 && b_.rs <= kInPlaceRowFloats && (q + 1) * u_.nr <= nc_)
      return {b_.at(s * kc_, q * u_.nr), b_.rs};
    std::atomic<uint8_t>& st = state_[s * panels_ + q];
    float* dst = data_ + (s * panels_ + q) * kc_ * u_.nr;
    if (st.load(std::memory_order_acquire) == kReady) return {dst, u_.nr};
    uint8_t expected = kEmpty;
    if (st.compare_exchange_strong(expected, kPacking, std::memory_order_acq_rel)) {
      // A whole panel of contiguous rows: the caller's kernel packs it as it reads it.
      if (fuse_ && b_.cs == 1 && (q + 1) * u_.nr <= nc_) return {b_.at(s * kc_, q * u_.nr), b_.rs, dst};
      u_.pack_b(b_.sub(s * kc_, q * u_.nr), kc_s, std::min(u_.nr, nc_ - q * u_.nr), dst);
      st.store(kReady, std::memory_order_release);
    } else {
      while (st.load(std::memory_order_acquire) != kReady) {
#if defined(__x86_64__)
        __builtin_ia32_pause();
#endif
      }
    }
    return {dst, u_.nr};
  }

  // The caller packed panel q of slice s (Panel::pack): others may read it now.
  void done(int64_t s, int64_t q) { state_[s * panels_ + q].store(kReady, std::memory_order_release); }

  int64_t panels() const { return panels_; }

 private:
  static constexpr uint8_t kEmpty = 0, kPacking = 1, kReady = 2;
  static constexpr int64_t kInPlaceRowFloats = 128;
  const Micro& u_;
  MatrixRef b_;
  int64_t kc_, nc_, panels_;
  float* data_;
  std::atomic<uint8_t>* state_;
  const float* ready_;
  bool fuse_;
};

// Floats in the largest tile of any shape (12 x 32, 8 x 48), for the edge tiles, and
// the most rows.
constexpr int64_t kMaxTile = 384, kMaxMr = 12;

// The per-thread scratch: packed A and B, and B's panel states.
thread_local PackBuffer t_a_pack, t_b_pack;
thread_local std::unique_ptr<std::atomic<uint8_t>[]> t_panel_state;
thread_local int64_t t_panel_state_cap = 0;

std::atomic<uint8_t>* panel_states(int64_t n) {
  if (n > t_panel_state_cap) {
    t_panel_state.reset(new std::atomic<uint8_t>[size_t(n)]);
    t_panel_state_cap = n;
  }
  return t_panel_state.get();
}

// The packed B of a column block holds all of k; its width is capped so that it
// stays within this many floats (8 MiB).
constexpr int64_t kPackedBFloats = int64_t(2) << 20;

// The slicing of k: equal slices of at most u.kc.
std::pair<int64_t, int64_t> k_slices(const Micro& u, int64_t k) {
  const int64_t slices = ceil_div(k, u.kc);
  return {slices, ceil_div(k, slices)};
}

// `count` products at once (B shifted by b_step floats and C by c_step per product),
// only for a B with row offsets, which needs no shared packing state.
struct Batch {
  int64_t count = 1, b_step = 0, c_step = 0;
};

// Every entry point's product. `ready`: B packed before, all of it (SgemmPackedB),
// for this u and k.
void drive(const Micro& u, int64_t m, int64_t n, int64_t k, float alpha, MatrixRef A, MatrixRef B, float beta,
           float* C, int64_t ldc, const float* ready = nullptr, Batch batch = {}) {
  if (m == 0 || n == 0) return;
  if (k == 0) {  // an empty sum: beta * C (not read when beta is 0)
    for (int64_t item = 0; item < batch.count; ++item)
      for (int64_t i = 0; i < m; ++i) {
        float* c = C + item * batch.c_step + i * ldc;
        for (int64_t j = 0; j < n; ++j) c[j] = beta == 0.0f ? 0.0f : beta * c[j];
      }
    return;
  }
  const int64_t* b_off = B.row_off;
  const int64_t mr = u.mr, nr = u.nr;
  const auto [slices, kc] = k_slices(u, k);
  const int64_t nc_max =
      b_off || ready ? n : std::min(n, std::max(nr, kPackedBFloats / (slices * kc) / nr * nr));
  const int64_t m_tiles = ceil_div(m, mr);
  const double macs = double(m) * double(n) * double(k) * double(batch.count);
  const int64_t threads =
      in_parallel() ? 1 : std::min<int64_t>(pool_threads(), int64_t(std::max(1.0, macs / kMinMacsPerThread)));
  LetOthersRun unlocked(macs >= 2 * kMinMacsPerThread);  // a long product, even on one thread
  // Products split the threads among them; with more products than threads, each
  // thread runs whole products.
  const int64_t item_threads = std::max<int64_t>(1, threads / batch.count);
  const bool packs = !b_off && !ready;
  float* b_data = packs ? t_b_pack.get(size_t(slices * kc * ceil_div(nc_max, nr) * nr)) : nullptr;
  std::atomic<uint8_t>* states = packs ? panel_states(slices * ceil_div(nc_max, nr)) : nullptr;
  // A with row offsets is read in place too (its rows contiguous along k).
  const int64_t* a_off = A.row_off;
  const Kernel kernel = u.kernels[b_off ? kBRowsAt : a_off ? kARowsAt : kPacked];
  for (int64_t j0 = 0; j0 < n; j0 += nc_max) {
    const int64_t nc = std::min(nc_max, n - j0);
    PackedB packed(u, B.sub(0, j0), kc, slices, nc, b_data, states, ready, !a_off);
    const int64_t panels = packed.panels();
    const auto [tm, tn] = thread_grid(item_threads, m_tiles, panels);
    run_pieces(batch.count * tm * tn, [&](int64_t piece) {
      const int64_t item = piece / (tm * tn), t = piece % (tm * tn);
      const int64_t ti = t / tn, tj = t % tn;
      float* const C_item = C + item * batch.c_step;
      const int64_t r0 = std::min(m, m_tiles * ti / tm * mr), r1 = std::min(m, m_tiles * (ti + 1) / tm * mr);
      const int64_t q0 = panels * tj / tn, q1 = panels * (tj + 1) / tn, width = q1 - q0;
      if (r0 >= r1 || width == 0) return;
      // Threads sharing these panels start at different ones, so each packs its own.
      const int64_t first = width * ti / tm;
      float* a_pack = a_off ? nullptr : t_a_pack.get(size_t(std::min(u.mc, ceil_div(r1 - r0, mr) * mr) * kc));
      for (int64_t s = 0; s < slices; ++s) {
        const int64_t p0 = s * kc, kc_s = std::min(kc, k - p0);
        const int64_t* b_rows = b_off ? b_off + p0 : nullptr;
        // The first slice applies beta (and skips reading C when it is 0); later
        // slices add to what the first wrote.
        const bool load_c = s > 0 || beta != 0.0f;
        const float beta_now = s > 0 ? 1.0f : beta;
        for (int64_t i0 = r0; i0 < r1; i0 += u.mc) {
          const int64_t mc = std::min(u.mc, r1 - i0);
          if (!a_off) u.pack_a(A.sub(i0, p0), mc, kc_s, a_pack);
          for (int64_t b0 = 0; b0 < width; b0 += u.nb) {
            const int64_t b1 = std::min(width, b0 + u.nb);
            for (int64_t i = 0; i < mc; i += mr) {
              const int64_t h = std::min(mr, mc - i);
              // The micro-panel: packed, or A's rows in place (an edge one repeats its
              // first row's offset: those rows are computed and dropped).
              const float* a_panel = a_off ? A.p + p0 : a_pack + i * kc_s;
              int64_t a_rows[kMaxMr];
              if (a_off)
                for (int64_t r = 0; r < mr; ++r) a_rows[r] = a_off[i0 + i + (r < h ? r : 0)];
              for (int64_t step = b0; step < b1; ++step) {
                const int64_t q = q0 + (first + step) % width;
                auto [bp, ldb, pack_to] = packed.panel(s, q, kc_s);
                bp += item * batch.b_step;
                const Kernel kern = pack_to ? u.kernels[kPacksB] : kernel;
                const int64_t j = j0 + q * nr, w = std::min(nr, n - j);
                float* c = C_item + (i0 + i) * ldc + j;
                if (h == mr && w == nr) {
                  kern(kc_s, a_panel, a_rows, bp, ldb, b_rows, c, ldc, alpha, beta_now, load_c, pack_to);
                  if (pack_to) packed.done(s, q);
                  continue;
                }
                // An edge tile: computed whole into a scratch tile, its valid part copied.
                alignas(64) float tile[kMaxTile];
                kern(kc_s, a_panel, a_rows, bp, ldb, b_rows, tile, nr, alpha, 0.0f, false, pack_to);
                if (pack_to) packed.done(s, q);
                for (int64_t r = 0; r < h; ++r)
                  for (int64_t x = 0; x < w; ++x)
                    c[r * ldc + x] = tile[r * nr + x] + (load_c ? beta_now * c[r * ldc + x] : 0.0f);
              }
            }
          }
        }
      }
    });
  }
}

}  // namespace

SgemmPackedB::SgemmPackedB(int64_t m_hint, int64_t k, int64_t n, MatrixRef B)
    : micro_(&micro_for(m_hint, n)), k_(k), n_(n) {
  const Micro& u = *static_cast<const Micro*>(micro_);
  const auto [slices, kc] = k_slices(u, std::max<int64_t>(k, 1));  // (k = 0 packs one empty slice)
  const int64_t panels = ceil_div(n, u.nr), panel_floats = kc * u.nr;
  const size_t bytes = size_t(slices * panels * panel_floats) * sizeof(float);
  data_.reset(static_cast<float*>(std::aligned_alloc(64, std::max<size_t>(64, (bytes + 63) / 64 * 64))));
  if (!data_) throw std::bad_alloc();
  parallel_for(slices * panels, std::max<int64_t>(1, 65536 / std::max<int64_t>(panel_floats, 1)),
               [&](int64_t i0, int64_t i1) {
                 for (int64_t i = i0; i < i1; ++i) {
                   const int64_t s = i / panels, q = i % panels;
                   u.pack_b(B.sub(s * kc, q * u.nr), std::min(kc, k - s * kc), std::min(u.nr, n - q * u.nr),
                            data_.get() + i * panel_floats);
                 }
               });
}

void own_sgemm_packed(int64_t m, float alpha, MatrixRef A, const SgemmPackedB& B, float beta, float* C, int64_t ldc) {
  drive(*static_cast<const Micro*>(B.micro_), m, B.n_, B.k_, alpha, A, MatrixRef{nullptr, 0, 0}, beta, C, ldc,
        B.data_.get());
}

void SgemmPackedB::Free::operator()(float* p) const { std::free(p); }

bool own_sgemm_suits(int64_t m, int64_t n) { return shapes_for_cpu().first && m >= 4 && n >= 8; }

void own_sgemm(int64_t m, int64_t n, int64_t k, float alpha, const float* A, int64_t a_rs, int64_t a_cs,
               const float* B, int64_t b_rs, int64_t b_cs, float beta, float* C, int64_t ldc) {
  drive(micro_for(m, n), m, n, k, alpha, MatrixRef{A, a_rs, a_cs}, MatrixRef{B, b_rs, b_cs}, beta, C, ldc);
}

void own_sgemm_ref_batch(int64_t count, int64_t m, int64_t n, int64_t k, MatrixRef A, MatrixRef B, int64_t b_step,
                         float* C, int64_t c_step, int64_t ldc) {
  if (count == 0) return;
  drive(micro_for(A, m, n), m, n, k, 1.0f, A, B, 0.0f, C, ldc, nullptr, Batch{count, b_step, c_step});
}

void own_sgemm_ref(int64_t m, int64_t n, int64_t k, MatrixRef A, MatrixRef B, float beta, float* C, int64_t ldc) {
  drive(micro_for(A, m, n), m, n, k, 1.0f, A, B, beta, C, ldc);
}

bool sgemm_tile_suits() {
#if LUCID_X86_DISPATCH
  return shapes_for_cpu().second == &kAvx512Tall;
#else
  return false;
#endif
}

void sgemm_tile(int64_t kc, const float* a, const float* b, float* c, int64_t ldc) {
#if LUCID_X86_DISPATCH
  static_assert(kTileRows == 8 && kTileCols == 48, "sgemm_tile runs kAvx512Tall's kernel");
  kAvx512Tall.kernels[kPacked](kc, a, nullptr, b, kTileCols, nullptr, c, ldc, 1.0f, 0.0f, false, nullptr);
#else
  (void)kc, (void)a, (void)b, (void)c, (void)ldc;
#endif
}

}  // namespace lucid::cpu
