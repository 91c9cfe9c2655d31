// float16 / bfloat16 +, -, *, /, maximum and minimum converted in registers (vec_math.h's
// vec_half_arith).
//
// Note [16-bit arithmetic in registers]
// Note [16-bit rows]'s blocks (widen a block into a stack buffer, the float loop, narrow
// it back) run each phase's memory traffic apart from the next's: once the operands come
// from L3 or memory, a float16 `x * 0.998` ran at half the memory speed of a loop that
// converts in registers (1.5x torch's time on 4M elements; at L2 sizes the two are
// equal). The arithmetic that most 16-bit programs spend their elementwise time in, +, -,
// *, / (and maximum / minimum: clamp) of two rows or of a row and a number, is therefore
// converted in registers: load 8 or 16 values, widen, the functor's float op, narrow,
// store. The same float op and the same rounding (to nearest even, IEEE overflow and
// subnormals) as the blocks, so the same bits; the tails use core/half.h's scalar
// conversions, which agree.
#include "backend/cpu/vec_math.h"
#include "core/half.h"
#include "core/isa.h"

#if LUCID_X86_DISPATCH
#include <immintrin.h>

// GCC 12's own masked-conversion intrinsics trip this (their "__Y = __Y" idiom).
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
// (arith below passes vectors by value; it is always inlined into its ISA's loop)
#pragma GCC diagnostic ignored "-Wpsabi"

namespace lucid::cpu {
namespace {

// bfloat16 stores round to nearest even; a NaN keeps its sign and top payload bits and is
// made quiet (half_rows.h's float_to_bf16, a vector at a time).
struct Avx512 {
  using V = __m512;
  static constexpr int kLanes = 16;
  LUCID_TARGET_AVX512 static V set1(float v) { return _mm512_set1_ps(v); }
  LUCID_TARGET_AVX512 static V pick(__mmask16 take_x, V x, V y) { return _mm512_mask_blend_ps(take_x, y, x); }
  LUCID_TARGET_AVX512 static __mmask16 gt(V x, V y) { return _mm512_cmp_ps_mask(x, y, _CMP_GT_OQ); }
  LUCID_TARGET_AVX512 static __mmask16 lt(V x, V y) { return _mm512_cmp_ps_mask(x, y, _CMP_LT_OQ); }
  LUCID_TARGET_AVX512 static __mmask16 nan(V x) { return _mm512_cmp_ps_mask(x, x, _CMP_UNORD_Q); }
  LUCID_TARGET_AVX512 static V load(const Half* p) {
    return _mm512_maskz_cvtph_ps(__mmask16(0xffff), _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
  }
  LUCID_TARGET_AVX512 static V load(const BFloat16* p) {
    const __m512i w = _mm512_cvtepu16_epi32(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
    return _mm512_castsi512_ps(_mm512_slli_epi32(w, 16));
  }
  LUCID_TARGET_AVX512 static void store(Half* p, V v) {
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(p),
                        _mm512_maskz_cvtps_ph(__mmask16(0xffff), v, _MM_FROUND_TO_NEAREST_INT));
  }
  LUCID_TARGET_AVX512 static void store(BFloat16* p, V v) {
    const __m512i bits = _mm512_castps_si512(v);
    const __m512i lsb = _mm512_and_si512(_mm512_srli_epi32(bits, 16), _mm512_set1_epi32(1));
    const __m512i rounded = _mm512_srli_epi32(_mm512_add_epi32(_mm512_add_epi32(bits, _mm512_set1_epi32(0x7fff)), lsb), 16);
    const __m512i quiet = _mm512_or_si512(_mm512_srli_epi32(bits, 16), _mm512_set1_epi32(0x40));
    const __mmask16 nan = _mm512_cmpgt_epu32_mask(_mm512_and_si512(bits, _mm512_set1_epi32(0x7fffffff)),
                                                  _mm512_set1_epi32(0x7f800000));
    const __m512i r = _mm512_mask_blend_epi32(nan, rounded, quiet);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(p), _mm512_cvtepi32_epi16(r));
  }
};

struct Avx2 {
  using V = __m256;
  static constexpr int kLanes = 8;
  LUCID_TARGET_AVX2 static V set1(float v) { return _mm256_set1_ps(v); }
  LUCID_TARGET_AVX2 static V pick(V take_x, V x, V y) { return _mm256_blendv_ps(y, x, take_x); }
  LUCID_TARGET_AVX2 static V gt(V x, V y) { return _mm256_cmp_ps(x, y, _CMP_GT_OQ); }
  LUCID_TARGET_AVX2 static V lt(V x, V y) { return _mm256_cmp_ps(x, y, _CMP_LT_OQ); }
  LUCID_TARGET_AVX2 static V nan(V x) { return _mm256_cmp_ps(x, x, _CMP_UNORD_Q); }
  LUCID_TARGET_AVX2 static V load(const Half* p) {
    return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
  }
  LUCID_TARGET_AVX2 static V load(const BFloat16* p) {
    const __m256i w = _mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
    return _mm256_castsi256_ps(_mm256_slli_epi32(w, 16));
  }
  LUCID_TARGET_AVX2 static void store(Half* p, V v) {
    _mm_storeu_si128(reinterpret_cast<__m128i*>(p), _mm256_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT));
  }
  LUCID_TARGET_AVX2 static void store(BFloat16* p, V v) {
    const __m256i bits = _mm256_castps_si256(v);
    const __m256i lsb = _mm256_and_si256(_mm256_srli_epi32(bits, 16), _mm256_set1_epi32(1));
    const __m256i rounded = _mm256_srli_epi32(_mm256_add_epi32(_mm256_add_epi32(bits, _mm256_set1_epi32(0x7fff)), lsb), 16);
    const __m256i quiet = _mm256_or_si256(_mm256_srli_epi32(bits, 16), _mm256_set1_epi32(0x40));
    // (both sides non-negative as int32, so the signed comparison serves)
    const __m256i nan = _mm256_cmpgt_epi32(_mm256_and_si256(bits, _mm256_set1_epi32(0x7fffffff)),
                                           _mm256_set1_epi32(0x7f800000));
    const __m256i r = _mm256_blendv_epi8(rounded, quiet, nan);
    // 32-bit lanes (all <= 0xffff) to 16: packus works per 128-bit half, so gather the halves
    const __m256i packed = _mm256_permute4x64_epi64(_mm256_packus_epi32(r, r), 0x08);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(p), _mm256_castsi256_si128(packed));
  }
};

// A scalar stand-in for the vector structs, for the tails.
struct Scalar {
  static float pick(bool take_x, float x, float y) { return take_x ? x : y; }
  static bool gt(float x, float y) { return x > y; }
  static bool lt(float x, float y) { return x < y; }
  static bool nan(float x) { return x != x; }
};

// The functor applied to floats and to vectors of floats alike (GCC's vector operators;
// the comparisons through each ISA's masks: GCC 12 compiles a lane-wise ?: of 64-byte
// vectors one lane at a time). maximum / minimum are ops::fn::Extremum's: a NaN in x
// wins, then one in y (which the comparison already picks), else the larger / smaller.
template <ops::BinaryOp Op, typename I, typename V>
__attribute__((always_inline)) inline V arith(V x, V y) {
  using B = ops::BinaryOp;
  if constexpr (Op == B::Add) return x + y;
  else if constexpr (Op == B::Sub) return x - y;
  else if constexpr (Op == B::Mul) return x * y;
  else if constexpr (Op == B::Div) return x / y;
  else {
    const V r = I::pick(Op == B::Maximum ? I::gt(x, y) : I::lt(x, y), x, y);
    return I::pick(I::nan(x), x, r);
  }
}

// out = op(a, b) where each operand is a row or (Operands) one float number.
#define LUCID_HALF_ARITH(ATTR, I)                                                                \
  template <ops::BinaryOp Op, Operands F, typename T>                                            \
  ATTR void half_arith_##I(void* out, const void* a, const void* b, int64_t n) {                 \
    using V = I::V;                                                                              \
    T* o = static_cast<T*>(out);                                                                 \
    const T* x = static_cast<const T*>(a);                                                       \
    const T* y = static_cast<const T*>(b);                                                       \
    const float va = F == Operands::ValueRow ? *static_cast<const float*>(a) : 0.f;              \
    const float vb = F == Operands::RowValue ? *static_cast<const float*>(b) : 0.f;              \
    const V wa = I::set1(va), wb = I::set1(vb);                                                  \
    int64_t i = 0;                                                                               \
    for (; i + I::kLanes <= n; i += I::kLanes) {                                                 \
      const V p = F == Operands::ValueRow ? wa : I::load(x + i);                                 \
      const V q = F == Operands::RowValue ? wb : I::load(y + i);                                 \
      I::store(o + i, arith<Op, I>(p, q));                                                          \
    }                                                                                            \
    for (; i < n; ++i)                                                                           \
      o[i] = T(arith<Op, Scalar>(F == Operands::ValueRow ? va : float(x[i]), F == Operands::RowValue ? vb : float(y[i]))); \
  }
LUCID_HALF_ARITH(LUCID_TARGET_AVX512, Avx512)
LUCID_HALF_ARITH(LUCID_TARGET_AVX2, Avx2)
#undef LUCID_HALF_ARITH

template <ops::BinaryOp Op, typename T>
VecBinaryFn pick(Operands form, Isa isa) {
  const bool wide = isa == Isa::Avx512;
  switch (form) {
    case Operands::Rows:
      return wide ? &half_arith_Avx512<Op, Operands::Rows, T> : &half_arith_Avx2<Op, Operands::Rows, T>;
    case Operands::RowValue:
      return wide ? &half_arith_Avx512<Op, Operands::RowValue, T> : &half_arith_Avx2<Op, Operands::RowValue, T>;
    case Operands::ValueRow:
      return wide ? &half_arith_Avx512<Op, Operands::ValueRow, T> : &half_arith_Avx2<Op, Operands::ValueRow, T>;
  }
  return nullptr;
}

template <typename T>
VecBinaryFn pick(ops::BinaryOp op, Operands form, Isa isa) {
  using B = ops::BinaryOp;
  switch (op) {
    case B::Add: return pick<B::Add, T>(form, isa);
    case B::Sub: return pick<B::Sub, T>(form, isa);
    case B::Mul: return pick<B::Mul, T>(form, isa);
    case B::Div: return pick<B::Div, T>(form, isa);
    case B::Maximum: return pick<B::Maximum, T>(form, isa);
    case B::Minimum: return pick<B::Minimum, T>(form, isa);
    default: return nullptr;
  }
}

}  // namespace

VecBinaryFn vec_half_arith(ops::BinaryOp op, Dtype dtype, Operands form) {
  const Isa isa = cpu_isa();
  if (isa == Isa::Baseline) return nullptr;
  if (dtype == Dtype::F16) return pick<Half>(op, form, isa);
  if (dtype == Dtype::BF16) return pick<BFloat16>(op, form, isa);
  return nullptr;
}

}  // namespace lucid::cpu

#else  // no x86 dispatch: the blocks of Note [16-bit rows] serve

namespace lucid::cpu {
VecBinaryFn vec_half_arith(ops::BinaryOp, Dtype, Operands) { return nullptr; }
}  // namespace lucid::cpu

#endif
