// The CPU loops behind every elementwise op: an N-d walk over broadcast operands
// (byte strides, 0 for a broadcast dimension) after merging dimensions that are
// contiguous in every operand, with typed fast paths for dense rows and for a
// tensor combined with one broadcast value. Included only by the kernel files.
//
// Note [Fast elementwise]
// - SIMD: the dense loops are compiled three times (baseline x86-64, AVX2,
//   AVX-512) through GCC target attributes, and cpu_isa() picks one at run time,
//   so the build needs no -march. Only float and double get the extra copies, which
//   keeps the kernel units quick to compile; float16 / bfloat16 rows convert a block
//   at a time with the CPU's vector conversions (Note [16-bit rows], half_rows.h).
// - Threads: past 2 * grain elements the flat index range is split over the pool
//   (parallel.h); each piece starts from its own N-d position. Below that the loop
//   runs inline with no allocation beyond today's (the collapsed strides).
// - Transcendentals: see vec_math.h (run_unary takes its vector kernel).
#pragma once

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <type_traits>
#include <vector>

#include "backend/cpu/bytes.h"
#include "core/half_rows.h"
#include "core/parallel.h"
#include "core/isa.h"
#include "backend/cpu/vec_math.h"
#include "core/copy.h"
#include "core/dtype.h"
#include "core/shape.h"
#include "core/transpose.h"

namespace lucid::cpu {

// Arithmetic on float16/bfloat16 happens in float.
template <typename T>
using opmath_t = std::conditional_t<std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>, float, T>;

// Dtypes whose dense loops get AVX2 / AVX-512 copies: float and double. (The integer
// copies added compile time to the kernel units for ops that are memory-bound where
// SIMD width would matter. The 16-bit floats run the float loops between vector
// conversions: Note [16-bit rows] below.)
template <typename T>
inline constexpr bool kSimdClone = std::is_same_v<T, float> || std::is_same_v<T, double>;

// The four dense row kernels, defined once per instruction set.
#define LUCID_DENSE_LOOPS(ATTR, SFX)                                                                        \
  template <typename TOut, typename TIn, typename F>                                                       \
  ATTR void dense1##SFX(TOut* __restrict o, const TIn* __restrict a, int64_t n, F f) {                     \
    for (int64_t i = 0; i < n; ++i) o[i] = static_cast<TOut>(f(a[i]));                                     \
  }                                                                                                         \
  template <typename TOut, typename TIn, typename F>                                                       \
  ATTR void dense2##SFX(TOut* __restrict o, const TIn* __restrict a, const TIn* __restrict b, int64_t n,    \
                        F f) {                                                                              \
    for (int64_t i = 0; i < n; ++i) o[i] = static_cast<TOut>(f(a[i], b[i]));                               \
  }                                                                                                         \
  template <typename TOut, typename TIn, typename TV, typename F>                                          \
  ATTR void scalar_b##SFX(TOut* __restrict o, const TIn* __restrict a, const TV b, int64_t n, F f) {       \
    for (int64_t i = 0; i < n; ++i) o[i] = static_cast<TOut>(f(a[i], b));                                  \
  }                                                                                                         \
  template <typename TOut, typename TIn, typename TV, typename F>                                          \
  ATTR void scalar_a##SFX(TOut* __restrict o, const TV a, const TIn* __restrict b, int64_t n, F f) {       \
    for (int64_t i = 0; i < n; ++i) o[i] = static_cast<TOut>(f(a, b[i]));                                  \
  }

LUCID_DENSE_LOOPS(, _base)
#if LUCID_X86_DISPATCH
LUCID_DENSE_LOOPS(LUCID_TARGET_AVX2, _avx2)
LUCID_DENSE_LOOPS(LUCID_TARGET_AVX512, _avx512)
#endif
#undef LUCID_DENSE_LOOPS

// Picks the copy of a dense loop for this CPU: LUCID_DISPATCH(dense2, TOut, TIn)(args...).
#if LUCID_X86_DISPATCH
#define LUCID_DISPATCH_CALL(kernel, TIn, ...)                        \
  do {                                                               \
    if constexpr (kSimdClone<TIn>) {                                 \
      static const Isa isa_ = cpu_isa();                             \
      if (isa_ == Isa::Avx512) return kernel##_avx512(__VA_ARGS__);  \
      if (isa_ == Isa::Avx2) return kernel##_avx2(__VA_ARGS__);      \
    }                                                                \
    return kernel##_base(__VA_ARGS__);                               \
  } while (0)
#else
#define LUCID_DISPATCH_CALL(kernel, TIn, ...) return kernel##_base(__VA_ARGS__)
#endif

// Note [16-bit rows] in the dense loops: a row whose operands and result are all one
// 16-bit float type runs a block at a time: its operands widened into float buffers
// (half_rows.h's vector conversions), the op's float loop over them, the result narrowed
// once. The float loop is the float dtype's own (the functor's `Wide`: the same float
// arithmetic, whose SIMD copies the float dtype has already), or, for a functor without
// one, the plain loop. The 16-bit types get no SIMD copies of their own: they would
// add half the kernel units' compile time for the same float loop.
template <typename TOut, typename TIn>
inline constexpr bool kHalfRows = kIsHalfFloat<TIn> && std::is_same_v<TOut, TIn>;

template <typename TOut, typename TIn, typename F>
void dense1(TOut* o, const TIn* a, int64_t n, F f);
template <typename TOut, typename TIn, typename F>
void dense2(TOut* o, const TIn* a, const TIn* b, int64_t n, F f);
template <typename TOut, typename TIn, typename TV, typename F>
void scalar_b(TOut* o, const TIn* a, TV b, int64_t n, F f);
template <typename TOut, typename TIn, typename TV, typename F>
void scalar_a(TOut* o, TV a, const TIn* b, int64_t n, F f);

template <typename F>
concept HasWide = requires { typename F::Wide; };

template <typename TOut, typename TIn, typename F>
void dense1(TOut* o, const TIn* a, int64_t n, F f) {
  if constexpr (kHalfRows<TOut, TIn>) {
    return half_rows(o, a, static_cast<const TIn*>(nullptr), n, [f](float* y, const float* x, const float*, int64_t m) {
      if constexpr (HasWide<F>) dense1(y, x, m, typename F::Wide());
      else dense1_base(y, x, m, f);
    });
  } else {
    LUCID_DISPATCH_CALL(dense1, TIn, o, a, n, f);
  }
}
template <typename TOut, typename TIn, typename F>
void dense2(TOut* o, const TIn* a, const TIn* b, int64_t n, F f) {
  if constexpr (kHalfRows<TOut, TIn>) {
    return half_rows(o, a, b, n, [f](float* y, const float* x, const float* z, int64_t m) {
      if constexpr (HasWide<F>) dense2(y, x, z, m, typename F::Wide());
      else dense2_base(y, x, z, m, f);
    });
  } else {
    LUCID_DISPATCH_CALL(dense2, TIn, o, a, b, n, f);
  }
}
// (The one value, TV, is TIn or TIn's opmath type: Note [Numbers in opmath]. A 16-bit
// row takes it as a float, which either widens to exactly.)
template <typename TOut, typename TIn, typename TV, typename F>
void scalar_b(TOut* o, const TIn* a, TV b, int64_t n, F f) {
  if constexpr (kHalfRows<TOut, TIn>) {
    const float v = float(b);
    return half_rows(o, a, static_cast<const TIn*>(nullptr), n, [f, v](float* y, const float* x, const float*, int64_t m) {
      if constexpr (HasWide<F>) scalar_b(y, x, v, m, typename F::Wide());
      else scalar_b_base(y, x, v, m, f);
    });
  } else {
    LUCID_DISPATCH_CALL(scalar_b, TIn, o, a, b, n, f);
  }
}
template <typename TOut, typename TIn, typename TV, typename F>
void scalar_a(TOut* o, TV a, const TIn* b, int64_t n, F f) {  // rare (2 - t): no SIMD copies
  if constexpr (kHalfRows<TOut, TIn>) {
    const float v = float(a);
    return half_rows(o, static_cast<const TIn*>(nullptr), b, n, [f, v](float* y, const float*, const float* z, int64_t m) {
      if constexpr (HasWide<F>) scalar_a_base(y, v, z, m, typename F::Wide());
      else scalar_a_base(y, v, z, m, f);
    });
  } else {
    scalar_a_base(o, a, b, n, f);
  }
}
#undef LUCID_DISPATCH_CALL

// Elements per thread piece of a unary op: the float functions (exp, tanh, ...)
// cost many times an add, so they pay for waking a thread at smaller sizes.
inline int64_t unary_grain(ops::UnaryOp op) {
  return ops::rule_of(op) == ops::DtypeRule::Float ? kParallelGrain / 8 : kParallelGrain;
}

// Runs fn(begin, end) over [0, n): inline below 2 * grain (no std::function, no
// synchronisation), else split over the pool (on one thread, inline without the GIL).
template <typename Fn>
inline void maybe_parallel(int64_t n, int64_t grain, const Fn& fn) {
  if (n < 2 * grain) return fn(int64_t(0), n);
  if (pool_threads() < 2) {
    LetOthersRun unlocked;
    return fn(int64_t(0), n);
  }
  parallel_for(n, grain, fn);
}

// Permutes the dimensions (of `shape` and every stride list alike) so that the
// output's strides (strides[0]) decrease; a no-op when they already do. Dimensions
// of size 1 stay where they are: their strides mean nothing.
inline void reorder_like_output(Shape& shape, std::vector<Stride>& strides) {
  const Stride& os = strides[0];
  const size_t nd = shape.size();
  bool ordered = true;
  for (size_t d = 0, last = nd; d < nd; ++d) {
    if (shape[d] == 1) continue;
    if (last != nd && os[last] < os[d]) ordered = false;
    last = d;
  }
  if (ordered) return;
  std::vector<size_t> order;
  for (size_t d = 0; d < nd; ++d)
    if (shape[d] != 1) order.push_back(d);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return os[a] > os[b]; });
  Shape new_shape;
  for (size_t d : order) new_shape.push_back(shape[d]);
  for (Stride& st : strides) {
    Stride permuted;
    for (size_t d : order) permuted.push_back(st[d]);
    st = std::move(permuted);
  }
  shape = std::move(new_shape);
}

// out[i] = f(in[i]...) for N inputs of type TIn, over `shape`; strides[0] is the
// output's, strides[1..] the inputs'. `vec` / `vec2` (may be null) is the unary / binary
// op's vector kernel: dense runs use it instead of f, so a transposed or sliced tensor
// gets the same SIMD exp/tanh as a contiguous one, and the same bits. (A binary op with
// one broadcast value runs f.)
template <typename TOut, typename TIn, size_t N, typename F>
void elementwise_loop(std::byte* out, const std::byte* const (&in)[N], std::vector<Stride> strides,
                      const Shape& shape, F f, int64_t grain = kParallelGrain, VecUnaryFn vec = nullptr,
                      VecBinaryFn vec2 = nullptr) {
  for (int64_t s : shape)
    if (s == 0) return;
  // Walk in the output's memory order (as PyTorch's TensorIterator does): an op on a
  // transposed tensor, whose output keeps that layout, is then one dense pass.
  Shape order_shape = shape;
  reorder_like_output(order_shape, strides);
  Shape dims;
  if constexpr (N == 1) dims = collapse_dims(order_shape, {&strides[0], &strides[1]});
  else dims = collapse_dims(order_shape, {&strides[0], &strides[1], &strides[2]});
  const size_t nd = dims.size();
  const int64_t inner = nd ? dims[nd - 1] : 1;
  int64_t outer = 1;
  for (size_t d = 0; d + 1 < nd; ++d) outer *= dims[d];
  auto step = [&](size_t k) { return nd ? strides[k][nd - 1] : 0; };
  const int64_t os = step(0), s1 = step(1), s2 = step(N);
  const bool out_dense = os == int64_t(sizeof(TOut));
  bool dense = out_dense;
  for (size_t k = 1; k <= N; ++k) dense = dense && step(k) == int64_t(sizeof(TIn));
  // Dense rows of a binary op: its vector kernel, or f.
  auto rows2 = [&](TOut* o, const TIn* a, const TIn* b, int64_t len) {
    if constexpr (N == 2) {
      if (vec2) return vec2(o, a, b, len);
      dense2(o, a, b, len, f);
    }
  };
  // A tensor combined with a broadcast value (t + 1.5): the value is loaded once.
  const bool sb = N == 2 && out_dense && s1 == int64_t(sizeof(TIn)) && s2 == 0;
  const bool sa = N == 2 && out_dense && s1 == 0 && s2 == int64_t(sizeof(TIn));
  // ... and when the op has a vector kernel, the value repeated in a stack buffer and the
  // kernel run over it: the gradient of `gelu(x).sum()` reaches GeluBackward as an
  // expanded 0-d tensor, and the scalar functor (erf and exp an element) took 10x the
  // kernel's time.
  auto value_rows = [&](TOut* o, const TIn* a, const TIn* b, bool value_is_b, int64_t len) {
    if constexpr (N == 2) {
      constexpr int64_t kRep = 256;
      TIn rep[kRep];
      std::fill_n(rep, std::min(kRep, len), value_is_b ? *b : *a);
      for (int64_t i = 0; i < len; i += kRep) {
        const int64_t m = std::min(kRep, len - i);
        if (value_is_b) vec2(o + i, a + i, rep, m);
        else vec2(o + i, rep, b + i, m);
      }
    }
  };

  // Every input one value along the rows (an expanded gradient or norm, a number: the
  // backward of a reduction) into dense rows: the op once a row, then a fill. (The element
  // loop took 5.4 ms for 4M elements, and a norm's backward made two such calls.) One
  // element through the vector kernel has the bits of any element of a dense run of it.
  const bool row_constant = out_dense && s1 == 0 && (N == 1 || s2 == 0);
  auto fill_row = [&](TOut* od, const std::byte* const* p, int64_t len) {
    TOut v;
    if constexpr (N == 1) {
      if (vec) vec(p[0], &v, 1);
      else v = static_cast<TOut>(f(load<TIn>(p[0])));
    } else {
      if (vec2) vec2(&v, p[0], p[1], 1);
      else v = static_cast<TOut>(f(load<TIn>(p[0]), load<TIn>(p[1])));
    }
    std::fill_n(od, len, v);
  };

  // One row segment [col, col + len) of the row whose start pointers are o, p.
  // Not inlined: the row walk and the tiled walk share one copy.
  auto segment = [&](std::byte* o, const std::byte* const* p, int64_t len) __attribute__((noinline)) {
    TOut* od = reinterpret_cast<TOut*>(o);
    if (row_constant) return fill_row(od, p, len);
    if constexpr (N == 1) {
      if (dense && vec) return vec(p[0], o, len);
      if (dense) return dense1(od, reinterpret_cast<const TIn*>(p[0]), len, f);
      for (int64_t i = 0; i < len; ++i) store<TOut>(o + i * os, static_cast<TOut>(f(load<TIn>(p[0] + i * s1))));
    } else {
      const TIn* a = reinterpret_cast<const TIn*>(p[0]);
      const TIn* b = reinterpret_cast<const TIn*>(p[1]);
      if (dense) return rows2(od, a, b, len);
      if ((sb || sa) && vec2) return value_rows(od, a, b, sb, len);
      if (sb) return scalar_b(od, a, load<TIn>(p[1]), len, f);
      if (sa) return scalar_a(od, load<TIn>(p[0]), b, len, f);
      for (int64_t i = 0; i < len; ++i)
        store<TOut>(o + i * os, static_cast<TOut>(f(load<TIn>(p[0] + i * s1), load<TIn>(p[1] + i * s2))));
    }
  };
  // An operand that jumps more than a cache line per inner step (a transposed
  // tensor) would miss the cache on every element of a row: walk kTile x kTile
  // tiles of the two innermost dimensions instead, so the lines one row loads are
  // still there for the next rows of the tile.
  constexpr int64_t kTile = 64;
  bool scattered = false;
  for (size_t k = 0; k <= N; ++k) scattered = scattered || std::abs(step(k)) > 64;
  // A binary op whose one scattered input is the only one (out and the other input
  // dense along the row: a transposed tensor plus a contiguous one) copies each tile
  // of that input into a buffer, reading down its contiguous columns, so the tile's
  // rows then run through the SIMD dense loop.
  int gathered = -1;
  if constexpr (N == 2) {
    const bool far1 = std::abs(s1) > 64, far2 = std::abs(s2) > 64;
    if (out_dense && far1 != far2 && (far1 ? s2 : s1) == int64_t(sizeof(TIn))) gathered = far1 ? 0 : 1;
  }
  if (scattered && nd >= 2 && ((inner >= kTile && dims[nd - 2] >= kTile) || gathered >= 0)) {
    const int64_t R = dims[nd - 2], row_blocks = (R + kTile - 1) / kTile, outer2 = outer / R;
    const bool stream_out = gathered >= 0 && outer * inner * int64_t(sizeof(TOut)) >= kStreamingStoreBytes;
    auto tiles = [&](int64_t t0, int64_t t1) {
      for (int64_t t = t0; t < t1; ++t) {
        const int64_t r0 = (t % row_blocks) * kTile, r1 = std::min(R, r0 + kTile);
        std::byte* ob = out;
        const std::byte* pb[N];
        for (size_t k = 0; k < N; ++k) pb[k] = in[k];
        int64_t rest = t / row_blocks;
        for (size_t d = nd - 2; d-- > 0;) {
          const int64_t i = rest % dims[d];
          rest /= dims[d];
          ob += i * strides[0][d];
          for (size_t k = 0; k < N; ++k) pb[k] += i * strides[k + 1][d];
        }
        if constexpr (N == 2) {
          if (gathered >= 0) {  // see `gathered` above
            const int k = gathered;
            const int64_t rs = strides[k + 1][nd - 2], cs = step(k + 1);
            // kGatherCols columns of the tile's rows at a time, transposed into a
            // buffer that stays in L2; then each row runs through the dense loop
            // along kGatherCols contiguous elements of the output and the other input.
            constexpr int64_t kGatherCols = 1024;
            static thread_local std::vector<std::byte> strip_bytes;  // (not vector<TIn>: TIn may be bool)
            strip_bytes.resize(size_t(kTile * kGatherCols) * sizeof(TIn));
            TIn* strip = reinterpret_cast<TIn*>(strip_bytes.data());
            for (int64_t c0 = 0; c0 < inner; c0 += kGatherCols) {
              const int64_t len = std::min(kGatherCols, inner - c0);
              const std::byte* src = pb[k] + c0 * cs + r0 * rs;
              constexpr int64_t e = sizeof(TIn);
              const bool fast = rs == e && transpose_elements(e, strip_bytes.data(), kGatherCols * e, src, cs,
                                                              r1 - r0, len, false);
              if (!fast)
                for (int64_t c = 0; c < len; ++c)  // down the operand's contiguous columns
                  for (int64_t r = 0; r < r1 - r0; ++r) strip[size_t(r * kGatherCols + c)] = load<TIn>(src + c * cs + r * rs);
              for (int64_t r = r0; r < r1; ++r) {
                const TIn* other = reinterpret_cast<const TIn*>(pb[1 - k] + r * strides[2 - k][nd - 2] + c0 * step(2 - k));
                const TIn* row = strip + (r - r0) * kGatherCols;
                std::byte* o = ob + r * strides[0][nd - 2] + c0 * os;
                // A large output goes through a row buffer and streamed stores:
                // its rows are written 4 KiB at a time, far apart, and the cache's
                // read of each line before the write was a third of the traffic.
                alignas(64) TOut row_out[kGatherCols];
                TOut* dst = stream_out ? row_out : reinterpret_cast<TOut*>(o);
                if (k == 0) rows2(dst, row, other, len);
                else rows2(dst, other, row, len);
                if (stream_out) copy_streaming(o, reinterpret_cast<const std::byte*>(row_out), len * int64_t(sizeof(TOut)));
              }
            }
            if (stream_out && t + 1 == t1) store_fence();
            continue;
          }
        }
        for (int64_t c0 = 0; c0 < inner; c0 += kTile) {
          const int64_t len = std::min(kTile, inner - c0);
          for (int64_t r = r0; r < r1; ++r) {
            const std::byte* p[N];
            p[0] = pb[0] + r * strides[1][nd - 2] + c0 * s1;
            if constexpr (N == 2) p[1] = pb[1] + r * strides[2][nd - 2] + c0 * s2;
            segment(ob + r * strides[0][nd - 2] + c0 * os, p, len);
          }
        }
      }
    };
    return maybe_parallel(outer2 * row_blocks, std::max<int64_t>(1, grain / (kTile * inner)), tiles);
  }

  // Elements [begin, end) in row-major order of the collapsed shape.
  auto range = [&](int64_t begin, int64_t end) {
    int64_t row = begin / inner, col = begin % inner;
    std::vector<int64_t> idx(nd ? nd - 1 : 0, 0);
    for (size_t d = idx.size(), r = size_t(row); d-- > 0;) {
      idx[d] = int64_t(r % size_t(dims[d]));
      r /= size_t(dims[d]);
    }
    while (begin < end) {
      const int64_t len = std::min(inner - col, end - begin);
      std::byte* o = out + col * os;
      const std::byte* p[N];
      p[0] = in[0] + col * s1;
      if constexpr (N == 2) p[1] = in[1] + col * s2;
      for (size_t d = 0; d + 1 < nd; ++d) {
        o += idx[d] * strides[0][d];
        for (size_t k = 0; k < N; ++k) p[k] += idx[d] * strides[k + 1][d];
      }
      segment(o, p, len);
      begin += len;
      col = 0;
      for (size_t d = idx.size(); d-- > 0;) {  // odometer over the outer dimensions
        if (++idx[d] < dims[d]) break;
        idx[d] = 0;
      }
    }
  };
  maybe_parallel(outer * inner, grain, range);
}

}  // namespace lucid::cpu

#include "core/tensor_impl.h"

namespace lucid::cpu {

// The functors the loops call: one named type per (op, dtype), so the contiguous
// fast path and the strided loop share their instantiations.
template <typename Op, typename T>
struct BinaryFn {
  using C = opmath_t<T>;
  using Wide = BinaryFn<Op, C>;  // the same arithmetic on C rows (Note [16-bit rows])
  // (x or y may already be a C: a number kept in opmath, Note [Numbers in opmath])
  template <typename X, typename Y>
  auto operator()(X x, Y y) const { return Op()(C(x), C(y)); }
};
template <typename Op, typename T>
struct UnaryFn {
  using C = opmath_t<T>;
  using Wide = UnaryFn<Op, C>;  // the same arithmetic on C rows (Note [16-bit rows])
  auto operator()(T x) const { return Op()(C(x)); }
};

// Runs a binary functor over host operands that share one dtype; `out` is bool for
// comparisons and that dtype otherwise. a and b are already broadcast to out's shape.
// `vec` is the op's vector kernel for a's dtype (vec_binary) or nullptr: dense rows
// run it instead of the functor.
template <typename Op>
void run_binary(const char* name, TensorImpl& out, const TensorImpl& a, const TensorImpl& b,
                VecBinaryFn vec = nullptr) {
  visit_dtype(a.dtype(), [&]<typename T>() {
    using C = opmath_t<T>;
    if constexpr (!Op::template supports<C>) {
      fail<RuntimeError>("internal: ", name, " launched for dtype ", dtype_name(a.dtype()),
                         ", which ops::check_supported refuses");
    } else {
      using R = decltype(Op()(C(), C()));
      using TOut = std::conditional_t<std::is_same_v<R, bool>, bool, T>;
      if (out.is_contiguous() && a.is_contiguous() && b.is_contiguous()) {
        // Same shapes, dense: one flat loop, no stride bookkeeping (small tensors
        // are dominated by it).
        TOut* o = reinterpret_cast<TOut*>(out.host_ptr());
        const T* x = reinterpret_cast<const T*>(a.host_ptr());
        const T* y = reinterpret_cast<const T*>(b.host_ptr());
        if (vec && std::is_same_v<TOut, T>)
          maybe_parallel(out.numel(), kParallelGrain / 8, [=](int64_t i, int64_t e) { vec(o + i, x + i, y + i, e - i); });
        else
          maybe_parallel(out.numel(), kParallelGrain,
                         [=](int64_t i, int64_t e) { dense2(o + i, x + i, y + i, e - i, BinaryFn<Op, T>()); });
        return;
      }
      // One operand contiguous, the other a row repeated over the leading dimensions
      // (x + bias): row by row through the dense loop, without the general walk's
      // stride bookkeeping (which costs more than the arithmetic for small tensors).
      if (out.is_contiguous() && (a.is_contiguous() || b.is_contiguous())) {
        const bool row_is_b = a.is_contiguous();
        const TensorImpl& row = row_is_b ? b : a;
        const int64_t inner = repeated_block_len(out.shape(), row.stride(), row.itemsize());
        if (inner >= 16 && inner < out.numel()) {
          TOut* o = reinterpret_cast<TOut*>(out.host_ptr());
          const T* x = reinterpret_cast<const T*>(a.host_ptr());
          const T* y = reinterpret_cast<const T*>(b.host_ptr());
          auto rows = [=](TOut* ro, const T* ra, const T* rb) {
            if (vec && std::is_same_v<TOut, T>) vec(ro, ra, rb, inner);
            else dense2(ro, ra, rb, inner, BinaryFn<Op, T>());
          };
          maybe_parallel(out.numel() / inner, std::max<int64_t>(1, kParallelGrain / inner), [=](int64_t r, int64_t e) {
            for (; r < e; ++r) {
              if (row_is_b) rows(o + r * inner, x + r * inner, y);
              else rows(o + r * inner, x, y + r * inner);
            }
          });
          return;
        }
      }
      const std::byte* const in[2] = {a.host_ptr(), b.host_ptr()};
      elementwise_loop<TOut, T, 2>(out.host_ptr(), in, {out.stride(), a.stride(), b.stride()}, out.shape(),
                                   BinaryFn<Op, T>(), kParallelGrain, nullptr, std::is_same_v<TOut, T> ? vec : nullptr);
    }
  });
}

// `vec` is the op's vector kernel for a's dtype (vec_unary) or nullptr; `grain`
// is smaller for the costly float functions, which pay for a thread sooner.
template <typename Op>
void run_unary(const char* name, TensorImpl& out, const TensorImpl& a, VecUnaryFn vec = nullptr,
               int64_t grain = kParallelGrain) {
  visit_dtype(a.dtype(), [&]<typename T>() {
    using C = opmath_t<T>;
    if constexpr (!Op::template supports<C>) {
      fail<RuntimeError>("internal: ", name, " launched for dtype ", dtype_name(a.dtype()),
                         ", which ops::check_supported refuses");
    } else {
      using R = decltype(Op()(C()));
      using TOut = std::conditional_t<std::is_same_v<R, bool>, bool, T>;  // predicates write bool
      if (out.is_contiguous() && a.is_contiguous()) {
        TOut* o = reinterpret_cast<TOut*>(out.host_ptr());
        const T* x = reinterpret_cast<const T*>(a.host_ptr());
        if (vec && std::is_same_v<TOut, T>) {
          maybe_parallel(out.numel(), grain, [=](int64_t i, int64_t e) { vec(x + i, o + i, e - i); });
        } else {
          maybe_parallel(out.numel(), grain, [=](int64_t i, int64_t e) { dense1(o + i, x + i, e - i, UnaryFn<Op, T>()); });
        }
        return;
      }
      const std::byte* const in[1] = {a.host_ptr()};
      elementwise_loop<TOut, T, 1>(out.host_ptr(), in, {out.stride(), a.stride()}, out.shape(), UnaryFn<Op, T>(),
                                   grain, std::is_same_v<TOut, T> ? vec : nullptr);
    }
  });
}

}  // namespace lucid::cpu
