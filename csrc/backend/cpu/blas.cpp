#include "backend/cpu/blas.h"
#include "backend/cpu/sgemm.h"
#include "core/parallel.h"

#include <algorithm>
#include <atomic>
#include <climits>
#include <mutex>
#include <optional>
#include <type_traits>

#ifdef LUCID_HAVE_OPENBLAS
#include <cblas.h>
#endif

namespace lucid::cpu {

namespace {

// ---- threads -------------------------------------------------------------------

std::atomic<int> g_threads{0};
std::once_flag g_threads_once;

// Note [One pool for products]
// OpenBLAS runs single-threaded; lucid's pool splits each product into blocks of
// output rows (or columns), one BLAS call per block, and splits batches of small
// products across threads. With OpenBLAS's own threads, two pools shared the cores:
// each spun after its work (OpenBLAS's for ~0.1 s) and took a core from the other's
// next job, and batched or skinny products were not threaded at all.
void apply_threads(int n) {
#ifdef LUCID_HAVE_OPENBLAS
  openblas_set_num_threads(1);
#endif
  set_pool_threads(n);
  g_threads.store(n);
}

// The thread counts are set once, before the first product.
void init_threads() {
  std::call_once(g_threads_once, [] {
    if (g_threads.load() == 0) apply_threads(pool_threads());  // (its default: parallel.cpp)
  });
}

// Which float32 products run on lucid's own kernel (sgemm.cpp, Note [Own sgemm]):
// every one it suits, except that with OpenBLAS present the small ones stay there
// (0.3.21's small-matrix kernels skip packing, which is most of a small product's
// cost: the CNN step's 9- and 16-deep convolution products ran 1.15x slower packed).
bool use_own_sgemm(int64_t m, int64_t n, int64_t k) {
  if (!own_sgemm_suits(m, n)) return false;
#ifdef LUCID_HAVE_OPENBLAS
  return std::min({m, n, k}) >= 16 && double(m) * double(n) * double(k) >= double(1 << 18);
#else
  (void)k;
  return true;
#endif
}

// ---- scalars and matrices ---------------------------------------------------------

template <typename T>
T scalar_as(const Scalar& s) {
  return std::visit([](auto v) -> T {
    using V = decltype(v);
    if constexpr (std::is_same_v<V, std::complex<double>>) {
      if constexpr (kIsComplexValue<T>) return T(v);
      else return T(v.real());
    } else if constexpr (kIsComplexValue<T>) {
      return T(typename T::value_type(v), 0);
    } else {
      return T(v);
    }
  }, s);
}

// One matrix of a batch: element (r, c) is at p + r*rs + c*cs (element strides).
template <typename T>
struct Mat {
  const T* p;
  int64_t rs, cs;
  T at(int64_t r, int64_t c) const { return p[r * rs + c * cs]; }
};

// The byte offsets in a and b of matrix i of the batch (the dims but the last two,
// row-major over out's batch shape).
std::pair<int64_t, int64_t> batch_offsets(const TensorImpl& out, const TensorImpl& a, const TensorImpl& b, int64_t i) {
  int64_t ao = 0, bo = 0;
  for (int64_t d = out.ndim() - 3; d >= 0; --d) {
    const int64_t x = i % out.shape()[d];
    i /= out.shape()[d];
    ao += x * a.stride()[d];
    bo += x * b.stride()[d];
  }
  return {ao, bo};
}

// A product smaller than this many multiply-adds per thread is not split: the
// split's cost (waking a thread, packing an operand twice) would exceed the gain.
constexpr double kMinMacsPerPart = double(1 << 18);

// Calls part(r0, r1, c0, c1) for blocks that tile an m x n output, on the pool's
// threads: row blocks when m >= n, else column blocks (each block packs the other
// operand whole, so the split runs along the longer side).
template <typename Fn>
void split_output(int64_t m, int64_t n, int64_t k, Fn&& part) {
  const double macs = double(m) * double(n) * double(std::max<int64_t>(k, 1));
  int64_t parts = in_parallel() ? 1 : std::min<int64_t>(pool_threads(), int64_t(macs / kMinMacsPerPart));
  LetOthersRun unlocked(macs >= 2 * kMinMacsPerPart);  // a long product, even on one thread
  const bool rows = m >= n;
  parts = std::min(parts, rows ? m : n);
  if (parts <= 1) return part(int64_t(0), m, int64_t(0), n);
  parallel_for(parts, 1, [&](int64_t p0, int64_t p1) {
    for (int64_t p = p0; p < p1; ++p) {
      if (rows) part(m * p / parts, m * (p + 1) / parts, int64_t(0), n);
      else part(int64_t(0), m, n * p / parts, n * (p + 1) / parts);
    }
  });
}

// C (m x n, rows ldc apart) = alpha * A @ B + beta * C with a blocked i-p-j loop
// whose inner loop runs along a row of B and C. Integers (and builds without BLAS).
template <typename T>
void loop_gemm(int64_t m, int64_t n, int64_t k, T alpha, Mat<T> A, Mat<T> B, T beta, bool beta_zero, T* C,
               int64_t ldc) {
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) C[i * ldc + j] = beta_zero ? T(0) : T(beta * C[i * ldc + j]);
  constexpr int64_t kBlockK = 128, kBlockN = 512;
  for (int64_t j0 = 0; j0 < n; j0 += kBlockN) {
    const int64_t j1 = std::min(n, j0 + kBlockN);
    for (int64_t p0 = 0; p0 < k; p0 += kBlockK) {
      const int64_t p1 = std::min(k, p0 + kBlockK);
      for (int64_t i = 0; i < m; ++i) {
        T* crow = C + i * ldc;
        for (int64_t p = p0; p < p1; ++p) {
          const T av = T(alpha * A.at(i, p));
          const T* brow = B.p + p * B.rs;
          if (B.cs == 1) {
            for (int64_t j = j0; j < j1; ++j) crow[j] += T(av * brow[j]);
          } else {
            for (int64_t j = j0; j < j1; ++j) crow[j] += T(av * brow[j * B.cs]);
          }
        }
      }
    }
  }
}

#ifdef LUCID_HAVE_OPENBLAS
// How BLAS (row-major) can read a rows x cols matrix with element strides rs, cs:
// as it is (ld = rs) or transposed (ld = cs). nullopt: it needs a copy.
struct BlasLayout {
  bool trans;
  int64_t ld;
};
std::optional<BlasLayout> blas_layout(int64_t rows, int64_t cols, int64_t rs, int64_t cs) {
  // A size-1 dimension's stride is never used: pick the one that makes BLAS happy.
  if ((cols <= 1 || cs == 1) && (rows <= 1 || rs >= std::max<int64_t>(1, cols)))
    return BlasLayout{false, rows <= 1 ? std::max<int64_t>(1, cols) : rs};
  if ((rows <= 1 || rs == 1) && (cols <= 1 || cs >= std::max<int64_t>(1, rows)))
    return BlasLayout{true, cols <= 1 ? std::max<int64_t>(1, rows) : cs};
  return std::nullopt;
}

void blas_call(bool ta, bool tb, int m, int n, int k, float alpha, const float* A, int lda, const float* B,
               int ldb, float beta, float* C, int ldc) {
  LetOthersRun unlocked(double(m) * n * k >= 2 * kMinMacsPerPart);
  cblas_sgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, m, n, k, alpha, A,
              lda, B, ldb, beta, C, ldc);
}
void blas_call(bool ta, bool tb, int m, int n, int k, double alpha, const double* A, int lda, const double* B,
               int ldb, double beta, double* C, int ldc) {
  LetOthersRun unlocked(double(m) * n * k >= 2 * kMinMacsPerPart);
  cblas_dgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, m, n, k, alpha, A,
              lda, B, ldb, beta, C, ldc);
}
void blas_call(bool ta, bool tb, int m, int n, int k, complex64 alpha, const complex64* A, int lda,
               const complex64* B, int ldb, complex64 beta, complex64* C, int ldc) {
  LetOthersRun unlocked(double(m) * n * k >= 2 * kMinMacsPerPart);
  cblas_cgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, m, n, k, &alpha, A,
              lda, B, ldb, &beta, C, ldc);
}
void blas_call(bool ta, bool tb, int m, int n, int k, complex128 alpha, const complex128* A, int lda,
               const complex128* B, int ldb, complex128 beta, complex128* C, int ldc) {
  LetOthersRun unlocked(double(m) * n * k >= 2 * kMinMacsPerPart);
  cblas_zgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, m, n, k, &alpha, A,
              lda, B, ldb, &beta, C, ldc);
}
#endif

// The element strides of the last two dims, or nullopt when a byte stride is not a
// whole number of elements (a foreign buffer): such an operand is copied.
std::optional<std::pair<int64_t, int64_t>> matrix_strides(const TensorImpl& t) {
  const int64_t is = int64_t(t.itemsize());
  const int64_t rs = t.stride()[t.ndim() - 2], cs = t.stride()[t.ndim() - 1];
  if (rs % is || cs % is) return std::nullopt;
  for (int64_t d = 0; d + 2 < t.ndim(); ++d)
    if (t.stride()[d] % is) return std::nullopt;
  return std::pair{rs / is, cs / is};
}

// How one operand (rows x cols matrices) is read: its element strides, and for BLAS
// the transpose flag and leading dimension. ok == false: it must be copied first.
struct Operand {
  bool ok = false;
  int64_t rs = 0, cs = 0;
  bool trans = false;
  int64_t ld = 0;
};

template <bool kBlas>
Operand operand_layout(const TensorImpl& t, int64_t rows, int64_t cols) {
  Operand o;
  auto st = matrix_strides(t);
  if (!st) return o;
  o.rs = st->first;
  o.cs = st->second;
#ifdef LUCID_HAVE_OPENBLAS
  if constexpr (kBlas) {
    auto l = blas_layout(rows, cols, o.rs, o.cs);
    if (!l || l->ld > INT_MAX) return o;
    o.trans = l->trans;
    o.ld = l->ld;
  }
#endif
  (void)rows;
  (void)cols;
  o.ok = true;
  return o;
}

template <typename T>
void gemm_typed(TensorImpl& out, const TensorImpl& a_in, const TensorImpl& b_in, const Scalar& alpha_s,
                const Scalar& beta_s) {
  const int64_t nd = out.ndim();
  const int64_t m = out.shape()[nd - 2], n = out.shape()[nd - 1], k = a_in.shape()[nd - 1];
  const T alpha = scalar_as<T>(alpha_s), beta = scalar_as<T>(beta_s);
  const bool beta_zero = is_zero(beta_s);
  T* c_base = reinterpret_cast<T*>(out.host_ptr());
  if (out.numel() == 0) return;
  if (k == 0) {  // an empty sum: beta * out
    for (int64_t i = 0; i < out.numel(); ++i) c_base[i] = beta_zero ? T(0) : T(beta * c_base[i]);
    return;
  }
  // Layouts BLAS cannot take (or odd byte strides) are copied to contiguous rows;
  // lucid's own float32 GEMM reads any element strides, so only odd byte strides
  // are copied for it.
  constexpr bool kBlasType = std::is_same_v<T, float> || std::is_same_v<T, double> || kIsComplexValue<T>;
  bool own = false;
  if constexpr (std::is_same_v<T, float>) own = use_own_sgemm(m, n, k);
  auto layout = [&](const TensorImpl& t, int64_t rows, int64_t cols) {
    return own ? operand_layout<false>(t, rows, cols) : operand_layout<kBlasType>(t, rows, cols);
  };
  TensorPtr a_copy, b_copy;
  const TensorImpl* a = &a_in;
  const TensorImpl* b = &b_in;
  Operand la = layout(*a, m, k), lb = layout(*b, k, n);
  if (!la.ok) {
    a_copy = a->clone();
    a = a_copy.get();
    la = layout(*a, m, k);
  }
  if (!lb.ok) {
    b_copy = b->clone();
    b = b_copy.get();
    lb = layout(*b, k, n);
  }
  const std::byte* a_base = a->host_ptr();
  const std::byte* b_base = b->host_ptr();
  const int64_t count = out.numel() / (m * n);
  // Enough products to go round: whole products per thread. Else each product is
  // split over the pool.
  const bool whole_products = count >= pool_threads() && !in_parallel();
  if constexpr (std::is_same_v<T, float>) {
    if (own) {
      auto product = [&](int64_t i) {
        auto [ao, bo] = batch_offsets(out, *a, *b, i);
        own_sgemm(m, n, k, alpha, reinterpret_cast<const T*>(a_base + ao), la.rs, la.cs,
                  reinterpret_cast<const T*>(b_base + bo), lb.rs, lb.cs, beta_zero ? T(0) : beta, c_base + i * m * n,
                  n);
      };
      if (whole_products) {
        parallel_for(count, 1, [&](int64_t i0, int64_t i1) {
          for (int64_t i = i0; i < i1; ++i) product(i);
        });
      } else {
        for (int64_t i = 0; i < count; ++i) product(i);
      }
      return;
    }
  }
  const bool fits_int = m <= INT_MAX && n <= INT_MAX && k <= INT_MAX;
  // Block [r0, r1) x [c0, c1) of product i.
  auto block = [&](int64_t i, int64_t r0, int64_t r1, int64_t c0, int64_t c1) {
    auto [ao, bo] = batch_offsets(out, *a, *b, i);
    const T* A = reinterpret_cast<const T*>(a_base + ao) + r0 * la.rs;
    const T* B = reinterpret_cast<const T*>(b_base + bo) + c0 * lb.cs;
    T* C = c_base + i * m * n + r0 * n + c0;
#ifdef LUCID_HAVE_OPENBLAS
    if constexpr (kBlasType) {
      if (fits_int) {
        blas_call(la.trans, lb.trans, int(r1 - r0), int(c1 - c0), int(k), alpha, A, int(la.ld), B, int(lb.ld),
                  beta_zero ? T(0) : beta, C, int(n));
        return;
      }
    }
#endif
    (void)fits_int;
    loop_gemm<T>(r1 - r0, c1 - c0, k, alpha, Mat<T>{A, la.rs, la.cs}, Mat<T>{B, lb.rs, lb.cs}, beta, beta_zero, C, n);
  };
  if (whole_products) {
    parallel_for(count, 1, [&](int64_t i0, int64_t i1) {
      for (int64_t i = i0; i < i1; ++i) block(i, 0, m, 0, n);
    });
    return;
  }
  for (int64_t i = 0; i < count; ++i)
    split_output(m, n, k, [&](int64_t r0, int64_t r1, int64_t c0, int64_t c1) { block(i, r0, r1, c0, c1); });
}

}  // namespace

void gemm(TensorImpl& out, const TensorImpl& a, const TensorImpl& b, const Scalar& alpha, const Scalar& beta) {
  init_threads();
  LUCID_CHECK(a.dtype() == out.dtype() && b.dtype() == out.dtype() && out.is_contiguous(), RuntimeError,
              "internal: cpu::gemm expects one dtype and a contiguous output");
  switch (out.dtype()) {
    case Dtype::F32: return gemm_typed<float>(out, a, b, alpha, beta);
    case Dtype::F64: return gemm_typed<double>(out, a, b, alpha, beta);
    case Dtype::C64: return gemm_typed<complex64>(out, a, b, alpha, beta);
    case Dtype::C128: return gemm_typed<complex128>(out, a, b, alpha, beta);
    case Dtype::F16:
    case Dtype::BF16: {
      // Exact widening to float32, one sgemm, one rounding back (as PyTorch's CPU
      // kernels accumulate half-precision products in float).
      TensorPtr a32 = a.clone(Dtype::F32), b32 = b.clone(Dtype::F32);
      TensorPtr c32 = is_zero(beta) ? TensorImpl::empty(out.shape(), Dtype::F32, Device::cpu())
                                           : out.clone(Dtype::F32);
      gemm_typed<float>(*c32, *a32, *b32, alpha, beta);
      out.copy_from(*c32);
      return;
    }
    case Dtype::U8: return gemm_typed<uint8_t>(out, a, b, alpha, beta);
    case Dtype::I8: return gemm_typed<int8_t>(out, a, b, alpha, beta);
    case Dtype::I16: return gemm_typed<int16_t>(out, a, b, alpha, beta);
    case Dtype::I32: return gemm_typed<int32_t>(out, a, b, alpha, beta);
    case Dtype::I64: return gemm_typed<int64_t>(out, a, b, alpha, beta);
    case Dtype::Bool: break;
  }
  fail<RuntimeError>("\"addmm_impl_cpu_\" not implemented for 'Bool'");
}

template <typename T>
void gemm_raw(bool ta, bool tb, int64_t m, int64_t n, int64_t k, T alpha, const T* A, int64_t lda, const T* B,
              int64_t ldb, T beta, T* C, int64_t ldc) {
  if (m == 0 || n == 0) return;
  init_threads();
  if constexpr (std::is_same_v<T, float>) {
    if (use_own_sgemm(m, n, k))
      return own_sgemm(m, n, k, alpha, A, ta ? 1 : lda, ta ? lda : 1, B, tb ? 1 : ldb, tb ? ldb : 1, beta, C, ldc);
  }
  split_output(m, n, k, [&](int64_t r0, int64_t r1, int64_t c0, int64_t c1) {
    const T* a = ta ? A + r0 : A + r0 * lda;  // rows r0.. of op(A)
    const T* b = tb ? B + c0 * ldb : B + c0;  // columns c0.. of op(B)
    T* c = C + r0 * ldc + c0;
#ifdef LUCID_HAVE_OPENBLAS
    blas_call(ta, tb, int(r1 - r0), int(c1 - c0), int(k), alpha, a, int(lda), b, int(ldb), beta, c, int(ldc));
#else
    loop_gemm<T>(r1 - r0, c1 - c0, k, alpha, Mat<T>{a, ta ? 1 : lda, ta ? lda : 1}, Mat<T>{b, tb ? 1 : ldb, tb ? ldb : 1},
                 beta, beta == T(0), c, ldc);
#endif
  });
}
template void gemm_raw<float>(bool, bool, int64_t, int64_t, int64_t, float, const float*, int64_t, const float*,
                              int64_t, float, float*, int64_t);
template void gemm_raw<double>(bool, bool, int64_t, int64_t, int64_t, double, const double*, int64_t, const double*,
                               int64_t, double, double*, int64_t);

int get_num_threads() {
  init_threads();
  return g_threads.load();
}

void set_num_threads(int n) {
  LUCID_CHECK(n > 0, RuntimeError, "set_num_threads expects a positive integer, but got ", n);
  init_threads();
  apply_threads(n);
}

bool has_blas() {
#ifdef LUCID_HAVE_OPENBLAS
  return true;
#else
  return false;
#endif
}

std::string blas_info() {
#ifdef LUCID_HAVE_OPENBLAS
  return str_cat(openblas_get_config(), " (kernels: ", openblas_get_corename(), ")");
#else
  return "none (lucid's own loops)";
#endif
}

RepeatedRhs::RepeatedRhs(const TensorImpl& b, int64_t m) : b_(b) {
  if (b.dtype() != Dtype::F32 || b.ndim() != 2 || !b.device().is_cpu()) return;
  const int64_t k = b.shape()[0], n = b.shape()[1];
  const Operand lb = operand_layout<false>(b, k, n);
  if (!lb.ok || !use_own_sgemm(m, n, k)) return;
  packed_ = std::make_unique<SgemmPackedB>(m, k, n, MatrixRef{reinterpret_cast<const float*>(b.host_ptr()), lb.rs, lb.cs});
}

RepeatedRhs::~RepeatedRhs() = default;

void RepeatedRhs::gemm(TensorImpl& out, const TensorImpl& a, const Scalar& beta) const {
  if (packed_ && a.dtype() == Dtype::F32 && a.ndim() == 2 && out.ndim() == 2 && out.is_contiguous()) {
    const int64_t m = a.shape()[0];
    const Operand la = operand_layout<false>(a, m, packed_->k());
    if (la.ok && a.shape()[1] == packed_->k() && out.shape()[0] == m && out.shape()[1] == packed_->n()) {
      own_sgemm_packed(m, 1.0f, MatrixRef{reinterpret_cast<const float*>(a.host_ptr()), la.rs, la.cs}, *packed_,
                       is_zero(beta) ? 0.0f : scalar_as<float>(beta), reinterpret_cast<float*>(out.host_ptr()),
                       packed_->n());
      return;
    }
  }
  cpu::gemm(out, a, b_, Scalar(1.0), beta);
}

}  // namespace lucid::cpu
