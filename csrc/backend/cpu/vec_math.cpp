// Vector kernels of the unary float ops (vec_math.h).
// Each kernel is a small struct K with one function per (ISA, dtype) vector type;
// the templates below run it over an array, the last partial vector masked.
#include "backend/cpu/vec_math.h"

#include <cmath>
#include <cstring>

#include "core/half_rows.h"
#include "core/isa.h"

#if LUCID_X86_DISPATCH
#include <immintrin.h>
#endif


#if LUCID_X86_DISPATCH

// The vector ABI of these declarations is the one of the target functions that
// call them (SLEEF's own build flags), not of this file's baseline.
#pragma GCC diagnostic ignored "-Wpsabi"
// GCC 12's own masked-load intrinsics trip this (their "__Y = __Y" idiom).
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

#ifdef LUCID_HAVE_SLEEF
// Declared here rather than from <sleef.h>, which only declares the AVX2 and
// AVX-512 variants when the whole file is compiled for them.
#define LUCID_SLEEF_DECL(fn, acc)                                  \
  extern "C" __m512 Sleef_##fn##f16_##acc##avx512f(__m512);        \
  extern "C" __m256 Sleef_##fn##f8_##acc##avx2(__m256);            \
  extern "C" __m512d Sleef_##fn##d8_##acc##avx512f(__m512d);       \
  extern "C" __m256d Sleef_##fn##d4_##acc##avx2(__m256d);

// op, SLEEF name, accuracy (u10 = 1.0 ULP, as PyTorch's CPU kernels use).
#define LUCID_SLEEF_OPS(X)                                                                 \
  X(Exp, exp, u10) X(Log, log, u10) X(Sin, sin, u10) X(Cos, cos, u10) X(Tanh, tanh, u10)  \
  X(Exp2, exp2, u10) X(Expm1, expm1, u10) X(Log2, log2, u10) X(Log10, log10, u10)         \
  X(Tan, tan, u10) X(Asin, asin, u10) X(Acos, acos, u10)             \
  X(Atan, atan, u10) X(Sinh, sinh, u10) X(Cosh, cosh, u10) X(Atanh, atanh, u10)           \
  X(Erf, erf, u10) X(Erfc, erfc, u15)
// SLEEF 3.5 overflows to inf on huge finite inputs of these (it squares x or adds
// 1 in a way that overflows): lanes with |x| > 1e18 (float) / 1e150 (double) are
// recomputed with the scalar function, a path real data never takes.
#define LUCID_SLEEF_BIG_OPS(X) X(Log1p, log1p, u10) X(Asinh, asinh, u10) X(Acosh, acosh, u10)

#define LUCID_DECL(Op, fn, acc) LUCID_SLEEF_DECL(fn, acc)
LUCID_SLEEF_OPS(LUCID_DECL)
LUCID_SLEEF_BIG_OPS(LUCID_DECL)
#undef LUCID_DECL
// The binary one: atan2 (1.0 ULP, torch's CPU kernel's).
extern "C" __m512 Sleef_atan2f16_u10avx512f(__m512, __m512);
extern "C" __m256 Sleef_atan2f8_u10avx2(__m256, __m256);
extern "C" __m512d Sleef_atan2d8_u10avx512f(__m512d, __m512d);
extern "C" __m256d Sleef_atan2d4_u10avx2(__m256d, __m256d);
#endif  // LUCID_HAVE_SLEEF

namespace lucid::cpu {
namespace {

template <typename K>
LUCID_TARGET_AVX512 void f32_avx512(const void* in, void* out, int64_t n) {
  const float* x = static_cast<const float*>(in);
  float* y = static_cast<float*>(out);
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) _mm512_storeu_ps(y + i, K::f16(_mm512_loadu_ps(x + i)));
  if (i < n) {  // masked-off lanes compute op(0), which is harmless (exceptions are masked)
    __mmask16 m = __mmask16((1u << (n - i)) - 1);
    _mm512_mask_storeu_ps(y + i, m, K::f16(_mm512_maskz_loadu_ps(m, x + i)));
  }
}
template <typename K>
LUCID_TARGET_AVX512 void f64_avx512(const void* in, void* out, int64_t n) {
  const double* x = static_cast<const double*>(in);
  double* y = static_cast<double*>(out);
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) _mm512_storeu_pd(y + i, K::d8(_mm512_loadu_pd(x + i)));
  if (i < n) {
    __mmask8 m = __mmask8((1u << (n - i)) - 1);
    _mm512_mask_storeu_pd(y + i, m, K::d8(_mm512_maskz_loadu_pd(m, x + i)));
  }
}
template <typename K>
LUCID_TARGET_AVX2 void f32_avx2(const void* in, void* out, int64_t n) {
  const float* x = static_cast<const float*>(in);
  float* y = static_cast<float*>(out);
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) _mm256_storeu_ps(y + i, K::f8(_mm256_loadu_ps(x + i)));
  if (i < n) {
    __m256i m = _mm256_cmpgt_epi32(_mm256_set1_epi32(int(n - i)), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
    _mm256_maskstore_ps(y + i, m, K::f8(_mm256_maskload_ps(x + i, m)));
  }
}
template <typename K>
LUCID_TARGET_AVX2 void f64_avx2(const void* in, void* out, int64_t n) {
  const double* x = static_cast<const double*>(in);
  double* y = static_cast<double*>(out);
  int64_t i = 0;
  for (; i + 4 <= n; i += 4) _mm256_storeu_pd(y + i, K::d4(_mm256_loadu_pd(x + i)));
  if (i < n) {
    __m256i m = _mm256_cmpgt_epi64(_mm256_set1_epi64x(n - i), _mm256_setr_epi64x(0, 1, 2, 3));
    _mm256_maskstore_pd(y + i, m, K::d4(_mm256_maskload_pd(x + i, m)));
  }
}

// Exactly rounded, so identical to the scalar loop: no library needed.
struct KSqrt {
  LUCID_TARGET_AVX512 static __m512 f16(__m512 v) { return _mm512_sqrt_ps(v); }
  LUCID_TARGET_AVX2 static __m256 f8(__m256 v) { return _mm256_sqrt_ps(v); }
  LUCID_TARGET_AVX512 static __m512d d8(__m512d v) { return _mm512_sqrt_pd(v); }
  LUCID_TARGET_AVX2 static __m256d d4(__m256d v) { return _mm256_sqrt_pd(v); }
};
struct KReciprocal {
  LUCID_TARGET_AVX512 static __m512 f16(__m512 v) { return _mm512_div_ps(_mm512_set1_ps(1.f), v); }
  LUCID_TARGET_AVX2 static __m256 f8(__m256 v) { return _mm256_div_ps(_mm256_set1_ps(1.f), v); }
  LUCID_TARGET_AVX512 static __m512d d8(__m512d v) { return _mm512_div_pd(_mm512_set1_pd(1.), v); }
  LUCID_TARGET_AVX2 static __m256d d4(__m256d v) { return _mm256_div_pd(_mm256_set1_pd(1.), v); }
};
struct KRsqrt {  // 1 / sqrt(x), both rounded, as the scalar functor (not the approximate rsqrt instruction)
  LUCID_TARGET_AVX512 static __m512 f16(__m512 v) { return _mm512_div_ps(_mm512_set1_ps(1.f), _mm512_sqrt_ps(v)); }
  LUCID_TARGET_AVX2 static __m256 f8(__m256 v) { return _mm256_div_ps(_mm256_set1_ps(1.f), _mm256_sqrt_ps(v)); }
  LUCID_TARGET_AVX512 static __m512d d8(__m512d v) { return _mm512_div_pd(_mm512_set1_pd(1.), _mm512_sqrt_pd(v)); }
  LUCID_TARGET_AVX2 static __m256d d4(__m256d v) { return _mm256_div_pd(_mm256_set1_pd(1.), _mm256_sqrt_pd(v)); }
};

#ifdef LUCID_HAVE_SLEEF
#define LUCID_KERNEL(Op, fn, acc)                                                                   \
  struct K##Op {                                                                                    \
    LUCID_TARGET_AVX512 static __m512 f16(__m512 v) { return Sleef_##fn##f16_##acc##avx512f(v); }   \
    LUCID_TARGET_AVX2 static __m256 f8(__m256 v) { return Sleef_##fn##f8_##acc##avx2(v); }          \
    LUCID_TARGET_AVX512 static __m512d d8(__m512d v) { return Sleef_##fn##d8_##acc##avx512f(v); }   \
    LUCID_TARGET_AVX2 static __m256d d4(__m256d v) { return Sleef_##fn##d4_##acc##avx2(v); }        \
  };
LUCID_SLEEF_OPS(LUCID_KERNEL)
#undef LUCID_KERNEL

// Recomputes the lanes of rs whose |x| exceeds `big` with the scalar function
// (baseline code on plain arrays, so it is safe to call from every ISA's kernel).
template <int W, typename S, typename F>
inline void fix_big(const S* xs, S* rs, S big, F scalar) {
  for (int i = 0; i < W; ++i)
    if (std::abs(xs[i]) > big) rs[i] = scalar(xs[i]);
}
#define LUCID_FIX(W, S, V, big, fn, call)            \
  V r = call;                                        \
  alignas(64) S xs[W], rs[W];                        \
  std::memcpy(xs, &v, sizeof v);                     \
  std::memcpy(rs, &r, sizeof r);                     \
  fix_big<W, S>(xs, rs, big, [](S x) { return std::fn(x); }); \
  std::memcpy(&r, rs, sizeof r);                     \
  return r;
#define LUCID_KERNEL(Op, fn, acc)                                                                         \
  struct K##Op {                                                                                          \
    LUCID_TARGET_AVX512 static __m512 f16(__m512 v) {                                                     \
      LUCID_FIX(16, float, __m512, 1e18f, fn, Sleef_##fn##f16_##acc##avx512f(v))                          \
    }                                                                                                     \
    LUCID_TARGET_AVX2 static __m256 f8(__m256 v) { LUCID_FIX(8, float, __m256, 1e18f, fn, Sleef_##fn##f8_##acc##avx2(v)) } \
    LUCID_TARGET_AVX512 static __m512d d8(__m512d v) {                                                    \
      LUCID_FIX(8, double, __m512d, 1e150, fn, Sleef_##fn##d8_##acc##avx512f(v))                          \
    }                                                                                                     \
    LUCID_TARGET_AVX2 static __m256d d4(__m256d v) { LUCID_FIX(4, double, __m256d, 1e150, fn, Sleef_##fn##d4_##acc##avx2(v)) } \
  };
LUCID_SLEEF_BIG_OPS(LUCID_KERNEL)
#undef LUCID_KERNEL
#undef LUCID_FIX

// 1 / (1 + exp(-x)): the scalar functor's formula, so the limits (0 and 1, NaN) match.
struct KSigmoid {
  LUCID_TARGET_AVX512 static __m512 f16(__m512 v) {
    __m512 one = _mm512_set1_ps(1.f);
    return _mm512_div_ps(one, _mm512_add_ps(one, KExp::f16(_mm512_sub_ps(_mm512_setzero_ps(), v))));
  }
  LUCID_TARGET_AVX2 static __m256 f8(__m256 v) {
    __m256 one = _mm256_set1_ps(1.f);
    return _mm256_div_ps(one, _mm256_add_ps(one, KExp::f8(_mm256_sub_ps(_mm256_setzero_ps(), v))));
  }
  LUCID_TARGET_AVX512 static __m512d d8(__m512d v) {
    __m512d one = _mm512_set1_pd(1.);
    return _mm512_div_pd(one, _mm512_add_pd(one, KExp::d8(_mm512_sub_pd(_mm512_setzero_pd(), v))));
  }
  LUCID_TARGET_AVX2 static __m256d d4(__m256d v) {
    __m256d one = _mm256_set1_pd(1.);
    return _mm256_div_pd(one, _mm256_add_pd(one, KExp::d4(_mm256_sub_pd(_mm256_setzero_pd(), v))));
  }
};
#endif  // LUCID_HAVE_SLEEF

#ifdef LUCID_HAVE_SLEEF
// atan2(a, b) over two dense rows (out first, as RowKernels' rows), the last partial
// vector on stack copies padded with ones (atan2(1, 1) is harmless).
// (Always inlined into its ISA's function: the vectors must stay in that ISA's registers.)
template <typename V, int W, typename S, V (*F)(V, V)>
__attribute__((always_inline)) inline void atan2_rows(void* out, const void* a, const void* b, int64_t n) {
  S* y = static_cast<S*>(out);
  const S* p = static_cast<const S*>(a);
  const S* q = static_cast<const S*>(b);
  int64_t i = 0;
  for (; i + W <= n; i += W) {
    V u, v;
    std::memcpy(&u, p + i, sizeof u);
    std::memcpy(&v, q + i, sizeof v);
    const V r = F(u, v);
    std::memcpy(y + i, &r, sizeof r);
  }
  if (i < n) {
    alignas(64) S pa[W], qa[W], ra[W];
    for (int j = 0; j < W; ++j) pa[j] = i + j < n ? p[i + j] : S(1), qa[j] = i + j < n ? q[i + j] : S(1);
    V u, v;
    std::memcpy(&u, pa, sizeof u);
    std::memcpy(&v, qa, sizeof v);
    const V r = F(u, v);
    std::memcpy(ra, &r, sizeof r);
    for (int64_t j = 0; i + j < n; ++j) y[i + j] = ra[j];
  }
}
LUCID_TARGET_AVX512 void atan2_f32_avx512(void* o, const void* a, const void* b, int64_t n) {
  atan2_rows<__m512, 16, float, Sleef_atan2f16_u10avx512f>(o, a, b, n);
}
LUCID_TARGET_AVX2 void atan2_f32_avx2(void* o, const void* a, const void* b, int64_t n) {
  atan2_rows<__m256, 8, float, Sleef_atan2f8_u10avx2>(o, a, b, n);
}
LUCID_TARGET_AVX512 void atan2_f64_avx512(void* o, const void* a, const void* b, int64_t n) {
  atan2_rows<__m512d, 8, double, Sleef_atan2d8_u10avx512f>(o, a, b, n);
}
LUCID_TARGET_AVX2 void atan2_f64_avx2(void* o, const void* a, const void* b, int64_t n) {
  atan2_rows<__m256d, 4, double, Sleef_atan2d4_u10avx2>(o, a, b, n);
}
#endif

template <typename K>
VecUnaryFn pick(Dtype dtype, Isa isa) {
  const bool f32 = dtype == Dtype::F32;
  if (isa == Isa::Avx512) return f32 ? &f32_avx512<K> : &f64_avx512<K>;
  return f32 ? &f32_avx2<K> : &f64_avx2<K>;
}

// A float16 / bfloat16 op through its float32 vector kernel, a block at a time (Note
// [16-bit rows]): the bits of torch's CPU kernels, which map their float vectors too.
template <ops::UnaryOp Op, typename T>
void via_float(const void* in, void* out, int64_t n) {
  static const VecUnaryFn f32 = vec_unary(Op, Dtype::F32);
  half_rows(static_cast<T*>(out), static_cast<const T*>(in), static_cast<const T*>(nullptr), n,
            [](float* y, const float* x, const float*, int64_t m) { f32(x, y, m); });
}

// Neg, abs and relu of a float16 / bfloat16 are exact, and done on the bits, with no
// widening (through floats, neg took 2.7x torch's time and relu 1.3-1.7x). Memory-bound,
// so the baseline loops' own vectorisation serves every ISA.
// Neg flips the sign bit (bit 15 in both types) and abs clears it, as torch's vector
// neg and abs do.
template <uint16_t kKeep, uint16_t kFlip>
void sign_bit(const void* in, void* out, int64_t n) {
  const uint16_t* x = static_cast<const uint16_t*>(in);
  uint16_t* y = static_cast<uint16_t*>(out);
  for (int64_t i = 0; i < n; ++i) y[i] = uint16_t((x[i] & kKeep) ^ kFlip);
}
// Relu is the functor's `a < 0 ? 0 : a`: the patterns below zero run from the smallest
// negative subnormal, 0x8001, to -inf (kNegInf) and become +0; -0 and every NaN stay.
template <uint16_t kNegInf>
void relu_bits(const void* in, void* out, int64_t n) {
  const uint16_t* x = static_cast<const uint16_t*>(in);
  uint16_t* y = static_cast<uint16_t*>(out);
  for (int64_t i = 0; i < n; ++i) y[i] = uint16_t(x[i] - 0x8001u) <= uint16_t(kNegInf - 0x8001u) ? 0 : x[i];
}

template <typename T>
VecUnaryFn via_float_kernel(ops::UnaryOp op) {
  switch (op) {
#define LUCID_CASE(name, Fn, rule) \
  case ops::UnaryOp::Fn: return &via_float<ops::UnaryOp::Fn, T>;
    LUCID_UNARY_OPS(LUCID_CASE)
#undef LUCID_CASE
  }
  return nullptr;
}

}  // namespace

VecUnaryFn vec_unary(ops::UnaryOp op, Dtype dtype) {
  if (dtype == Dtype::F16 || dtype == Dtype::BF16) {
    if (op == ops::UnaryOp::Neg) return &sign_bit<0xffff, 0x8000>;
    if (op == ops::UnaryOp::Abs) return &sign_bit<0x7fff, 0>;
    if (op == ops::UnaryOp::Relu) return dtype == Dtype::F16 ? &relu_bits<0xfc00> : &relu_bits<0xff80>;
    if (!vec_unary(op, Dtype::F32)) return nullptr;
    return dtype == Dtype::F16 ? via_float_kernel<Half>(op) : via_float_kernel<BFloat16>(op);
  }
  if (dtype != Dtype::F32 && dtype != Dtype::F64) return nullptr;
  const Isa isa = cpu_isa();
  if (isa == Isa::Baseline) return nullptr;
  if (dtype == Dtype::F32)
    if (VecUnaryFn f = vec_f32_activation(op, isa)) return f;
  using U = ops::UnaryOp;
  switch (op) {
    case U::Sqrt: return pick<KSqrt>(dtype, isa);
    case U::Reciprocal: return pick<KReciprocal>(dtype, isa);
    case U::Rsqrt: return pick<KRsqrt>(dtype, isa);
#ifdef LUCID_HAVE_SLEEF
    case U::Sigmoid: return pick<KSigmoid>(dtype, isa);
#define LUCID_PICK(Op, fn, acc) case U::Op: return pick<K##Op>(dtype, isa);
    LUCID_SLEEF_OPS(LUCID_PICK)
    LUCID_SLEEF_BIG_OPS(LUCID_PICK)
#undef LUCID_PICK
#else
    case U::Sin: case U::Cos: return dtype == Dtype::F32 ? vec_f32_sincos(op, isa) : nullptr;
#endif
    default: return nullptr;
  }
}

VecBinaryFn vec_binary(ops::BinaryOp op, Dtype dtype) {
  if (dtype == Dtype::F16 || dtype == Dtype::BF16) return vec_half_arith(op, dtype, Operands::Rows);
  const Isa isa = cpu_isa();
#ifdef LUCID_HAVE_SLEEF
  // atan2: SLEEF's, as torch's CPU kernel (the scalar std::atan2 loop took 10x its time)
  if (op == ops::BinaryOp::Atan2 && isa != Isa::Baseline && (dtype == Dtype::F32 || dtype == Dtype::F64)) {
    if (dtype == Dtype::F32) return isa == Isa::Avx512 ? &atan2_f32_avx512 : &atan2_f32_avx2;
    return isa == Isa::Avx512 ? &atan2_f64_avx512 : &atan2_f64_avx2;
  }
#endif
  if (dtype != Dtype::F32) return nullptr;
  return vec_f32_activation_backward(op, isa);
}

}  // namespace lucid::cpu

#else  // no x86 dispatch: the scalar loops serve

namespace lucid::cpu {
VecUnaryFn vec_unary(ops::UnaryOp, Dtype) { return nullptr; }
VecBinaryFn vec_binary(ops::BinaryOp, Dtype) { return nullptr; }
}  // namespace lucid::cpu

#endif
