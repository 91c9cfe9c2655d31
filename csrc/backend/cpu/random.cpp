#include "backend/cpu/random.h"

#include "backend/common/gamma_grads.h"
#include "backend/common/random_values.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>
#include <utility>

#include "backend/cpu/elementwise.h"
#include "core/isa.h"
#include "core/parallel.h"

namespace lucid::cpu {
namespace {

template <typename T>
constexpr bool kIsComplex = kIsComplexValue<T>;

using backend::cast_to;  // the word-to-value rules both devices share
using backend::to_double;

// Host address of element 0, after checking the layout every kernel here assumes.
std::byte* host_data(const TensorImpl& t, const char* op) {
  LUCID_CHECK(!t.is_gpu_storage(), RuntimeError, op,
              ": the CPU kernel needs a tensor in host memory, but got one on ", t.device().str());
  LUCID_CHECK(t.is_contiguous(), RuntimeError, op, ": the CPU kernel needs a contiguous tensor");
  return t.host_ptr();
}

// Note [Philox in lanes]
// Philox4x32 is most of a fill's time (rand of 4M floats: 12 ms a block at a time). Its
// blocks are independent, so kLanes of them run side by side, a lane each, in arrays the
// compiler vectorises (the 32x32->64 products become vpmuludq); the loops are compiled for
// AVX2 and AVX-512 (core/isa.h) besides the baseline. Integer arithmetic only, so every
// version gives philox_block's bits (tests/cpp: PhiloxLanes).
constexpr int kLanes = 16;

// words[4 k + w] = word w of block first + k, for k < count.
[[gnu::always_inline]] inline void philox_lanes_body(uint64_t seed, uint64_t first, int64_t count, uint32_t* words) {
  constexpr uint32_t kM0 = 0xD2511F53u, kM1 = 0xCD9E8D57u, kW0 = 0x9E3779B9u, kW1 = 0xBB67AE85u;  // philox.h's
  for (int64_t s = 0; s < count; s += kLanes) {
    uint32_t c0[kLanes], c1[kLanes], c2[kLanes] = {}, c3[kLanes] = {};
    for (int l = 0; l < kLanes; ++l) {
      const uint64_t b = first + uint64_t(s + l);
      c0[l] = uint32_t(b), c1[l] = uint32_t(b >> 32);
    }
    uint32_t k0 = uint32_t(seed), k1 = uint32_t(seed >> 32);
    for (int round = 0; round < 10; ++round) {
      if (round > 0) k0 += kW0, k1 += kW1;
      for (int l = 0; l < kLanes; ++l) {
        const uint64_t p0 = uint64_t(kM0) * c0[l], p1 = uint64_t(kM1) * c2[l];
        const uint32_t n0 = uint32_t(p1 >> 32) ^ c1[l] ^ k0, n2 = uint32_t(p0 >> 32) ^ c3[l] ^ k1;
        c0[l] = n0, c1[l] = uint32_t(p1), c2[l] = n2, c3[l] = uint32_t(p0);
      }
    }
    const int m = int(std::min<int64_t>(kLanes, count - s));
    for (int l = 0; l < m; ++l) {
      uint32_t* w = words + 4 * (s + l);
      w[0] = c0[l], w[1] = c1[l], w[2] = c2[l], w[3] = c3[l];
    }
  }
}

void philox_lanes_base(uint64_t seed, uint64_t first, int64_t count, uint32_t* words) {
  philox_lanes_body(seed, first, count, words);
}
#if LUCID_X86_DISPATCH
LUCID_TARGET_AVX2 void philox_lanes_avx2(uint64_t seed, uint64_t first, int64_t count, uint32_t* words) {
  philox_lanes_body(seed, first, count, words);
}
LUCID_TARGET_AVX512 void philox_lanes_avx512(uint64_t seed, uint64_t first, int64_t count, uint32_t* words) {
  philox_lanes_body(seed, first, count, words);
}
#endif

}  // namespace

void philox_blocks(const PhiloxDraw& draw, uint64_t first, int64_t count, uint32_t* words) {
#if LUCID_X86_DISPATCH
  static const Isa isa = cpu_isa();
  if (isa == Isa::Avx512) return philox_lanes_avx512(draw.seed, draw.offset + first, count, words);
  if (isa == Isa::Avx2) return philox_lanes_avx2(draw.seed, draw.offset + first, count, words);
#endif
  philox_lanes_base(draw.seed, draw.offset + first, count, words);
}

namespace {

// Blocks a chunk: its words (4 a block) are drawn together, then handed out.
constexpr int64_t kChunkBlocks = 256;

// Calls fn(words, first element, elements) for n elements at kPerBlock elements per
// Philox block of the draw, a chunk of blocks at a time: words[4 k + w] is word w of the
// chunk's block k. Block b always serves elements [b*kPerBlock, (b+1)*kPerBlock), which
// is what makes element i a function of (seed, offset, i): the pool splits the range of
// b, and the values never depend on the thread count. (fn writes its own elements only.)
template <int kPerBlock, typename Fn>
void for_each_chunk(int64_t n, const PhiloxDraw& draw, Fn&& fn) {
  if (n <= 0) return;
  const int64_t blocks = (n + kPerBlock - 1) / kPerBlock;
  const int64_t chunks = (blocks + kChunkBlocks - 1) / kChunkBlocks;
  parallel_for(chunks, std::max<int64_t>(1, kParallelGrain / (4 * kPerBlock * kChunkBlocks)), [&](int64_t c0, int64_t c1) {
    alignas(64) uint32_t words[4 * kChunkBlocks];
    for (int64_t c = c0; c < c1; ++c) {
      const int64_t b0 = c * kChunkBlocks, count = std::min(kChunkBlocks, blocks - b0);
      philox_blocks(draw, uint64_t(b0), count, words);
      const int64_t first = b0 * kPerBlock;
      fn(static_cast<const uint32_t*>(words), first, std::min(count * kPerBlock, n - first));
    }
  });
}

// for_each_chunk a block at a time: fn(block, first element, elements in this block).
template <int kPerBlock, typename Fn>
void for_each_block(int64_t n, const PhiloxDraw& draw, Fn&& fn) {
  for_each_chunk<kPerBlock>(n, draw, [&](const uint32_t* words, int64_t first, int64_t count) {
    for (int64_t k = 0; k * kPerBlock < count; ++k) {
      const uint32_t* w = words + 4 * k;
      const Philox4 block{{w[0], w[1], w[2], w[3]}};
      fn(block, first + k * kPerBlock, int(std::min<int64_t>(kPerBlock, count - k * kPerBlock)));
    }
  });
}

// ---- uniform ----------------------------------------------------------------------

// Acc is float (24-bit uniforms, 4 per block) or double (53-bit, 2 per block).
template <typename T, typename Acc>
void fill_uniform(T* p, int64_t n, double from_d, double to_d, const PhiloxDraw& draw) {
  const Acc from = Acc(from_d), to = Acc(to_d);
  auto put = [&](int64_t i, Acc u) { p[i] = backend::uniform_value<T>(u, from, to); };
  if constexpr (std::is_same_v<Acc, float>) {
    for_each_block<4>(n, draw, [&](const Philox4& r, int64_t first, int count) {
      for (int k = 0; k < count; ++k) put(first + k, uniform_f32(r.x[k]));
    });
  } else {
    for_each_block<2>(n, draw, [&](const Philox4& r, int64_t first, int count) {
      for (int k = 0; k < count; ++k) put(first + k, uniform_f64(r.x[2 * k], r.x[2 * k + 1]));
    });
  }
}

// ---- normal -----------------------------------------------------------------------

// Box-Muller (backend::normal_pair's formula): two uniforms give two independent
// normals, r cos(theta) and r sin(theta), r = sqrt(-2 log(1 - u1)) std. A chunk's pairs
// go through the eager ops' row kernels (log, sqrt, cos, sin: the vector math of
// lucid.log and the rest), not the scalar libm calls of the GPU's kernel, so the last
// bits may differ from the GPU's, as its CUDA math library's do. (One libm call after
// another: randn of 4M floats took 42 ms, 3.4x torch's vectorised Box-Muller.)
template <typename T, typename Acc>
void fill_normal(T* p, int64_t n, Acc mean, Acc stdv, const PhiloxDraw& draw) {
  constexpr Dtype kAcc = std::is_same_v<Acc, float> ? Dtype::F32 : Dtype::F64;
  static const RowKernels log_rows = unary_rows(ops::UnaryOp::Log, kAcc), sqrt_rows = unary_rows(ops::UnaryOp::Sqrt, kAcc),
                          cos_rows = unary_rows(ops::UnaryOp::Cos, kAcc), sin_rows = unary_rows(ops::UnaryOp::Sin, kAcc);
  // float: two pairs a block (a 24-bit uniform a word); double: one (53 bits of two words)
  constexpr int kPerBlock = std::is_same_v<Acc, float> ? 4 : 2;
  for_each_chunk<kPerBlock>(n, draw, [&](const uint32_t* words, int64_t first, int64_t count) {
    constexpr int64_t kPairs = kChunkBlocks * kPerBlock / 2;
    alignas(64) Acc r[kPairs], theta[kPairs], c[kPairs], s[kPairs];
    const int64_t pairs = (count + 1) / 2;
    for (int64_t j = 0; j < pairs; ++j) {
      if constexpr (std::is_same_v<Acc, float>) {
        r[j] = Acc(1) - uniform_f32(words[2 * j]);
        theta[j] = Acc(6.283185307179586476925) * uniform_f32(words[2 * j + 1]);
      } else {
        r[j] = Acc(1) - uniform_f64(words[4 * j], words[4 * j + 1]);
        theta[j] = Acc(6.283185307179586476925) * uniform_f64(words[4 * j + 2], words[4 * j + 3]);
      }
    }
    log_rows.unary(r, r, pairs);
    for (int64_t j = 0; j < pairs; ++j) r[j] *= Acc(-2);
    sqrt_rows.unary(r, r, pairs);
    cos_rows.unary(theta, c, pairs);
    sin_rows.unary(theta, s, pairs);
    T* out = p + first;
    for (int64_t j = 0; j < count / 2; ++j) {
      const Acc radius = r[j] * stdv;
      out[2 * j] = cast_to<T>(radius * c[j] + mean);
      out[2 * j + 1] = cast_to<T>(radius * s[j] + mean);
    }
    if (count % 2) out[count - 1] = cast_to<T>(r[pairs - 1] * stdv * c[pairs - 1] + mean);
  });
}

// ---- random (integers) --------------------------------------------------------------

// One 64-bit word per element (two per block), mapped to [0, range) by bounded_u64.
template <typename T>
void fill_integers(T* p, int64_t n, int64_t low, int64_t high, const PhiloxDraw& draw) {
  const uint64_t range = uint64_t(high) - uint64_t(low);  // exact even for the full int64 span
  for_each_block<2>(n, draw, [&](const Philox4& r, int64_t first, int count) {
    for (int k = 0; k < count; ++k) {
      const uint64_t w = (uint64_t(r.x[2 * k]) << 32) | r.x[2 * k + 1];
      p[first + k] = cast_to<T>(int64_t(uint64_t(low) + bounded_u64(w, range)));
    }
  });
}

// ---- bernoulli ------------------------------------------------------------------------

// A 53-bit uniform per element, so probabilities keep double resolution.
template <typename T, typename ProbAt>
void fill_bernoulli(T* p, int64_t n, const ProbAt& prob, const PhiloxDraw& draw) {
  for_each_block<2>(n, draw, [&](const Philox4& r, int64_t first, int count) {
    for (int k = 0; k < count; ++k)
      p[first + k] = cast_to<T>(uniform_f64(r.x[2 * k], r.x[2 * k + 1]) < prob(first + k) ? 1 : 0);
  });
}

// f(P{}) for the element type P of a floating tensor.
template <typename F>
void with_floating(const TensorImpl& t, F&& f) {
  visit_dtype(t.dtype(), [&]<typename P>() {
    if constexpr (kIsRealFloat<P>) f(reinterpret_cast<const P*>(host_data(t, "bernoulli")));
  });
}

// ---- randperm -----------------------------------------------------------------------

}  // namespace

void uniform_fill(TensorImpl& t, double from, double to, const PhiloxDraw& draw) {
  visit_dtype(t.dtype(), [&]<typename T>() {
    if constexpr (kIsComplex<T>) {  // torch: uniform_ on view_as_real(self)
      using R = typename T::value_type;
      auto* p = reinterpret_cast<R*>(host_data(t, "uniform_"));
      fill_uniform<R, R>(p, 2 * t.numel(), from, to, draw);
    } else if constexpr (kIsRealFloat<T>) {
      using Acc = std::conditional_t<std::is_same_v<T, double>, double, float>;
      fill_uniform<T, Acc>(reinterpret_cast<T*>(host_data(t, "uniform_")), t.numel(), from, to, draw);
    }
  });
}

void normal_fill(TensorImpl& t, double mean, double std, const PhiloxDraw& draw) {
  visit_dtype(t.dtype(), [&]<typename T>() {
    if constexpr (kIsComplex<T>) {  // torch: each part ~ N(mean, std^2 / 2)
      using R = typename T::value_type;
      auto* p = reinterpret_cast<R*>(host_data(t, "normal_"));
      fill_normal<R, R>(p, 2 * t.numel(), R(mean), R(std / std::sqrt(2.0)), draw);
    } else if constexpr (kIsRealFloat<T>) {
      using Acc = std::conditional_t<std::is_same_v<T, double>, double, float>;
      fill_normal<T, Acc>(reinterpret_cast<T*>(host_data(t, "normal_")), t.numel(), Acc(mean), Acc(std), draw);
    }
  });
}

void normal_fill(TensorImpl& t, const TensorImpl& mean, const TensorImpl& std, const PhiloxDraw& draw) {
  auto* z = reinterpret_cast<double*>(host_data(t, "normal"));
  const auto* m = reinterpret_cast<const double*>(host_data(mean, "normal"));
  const auto* s = reinterpret_cast<const double*>(host_data(std, "normal"));
  const int64_t n = t.numel();
  fill_normal<double, double>(z, n, 0.0, 1.0, draw);
  for (int64_t i = 0; i < n; ++i) z[i] = m[i] + s[i] * z[i];
}

void integers_fill(TensorImpl& t, int64_t low, int64_t high, const PhiloxDraw& draw) {
  visit_dtype(t.dtype(), [&]<typename T>() {
    if constexpr (!kIsComplex<T>)
      fill_integers<T>(reinterpret_cast<T*>(host_data(t, "random_")), t.numel(), low, high, draw);
  });
}

void bernoulli_fill(TensorImpl& t, double p, const PhiloxDraw& draw) {
  visit_dtype(t.dtype(), [&]<typename T>() {
    if constexpr (!kIsComplex<T>)
      fill_bernoulli<T>(
          reinterpret_cast<T*>(host_data(t, "bernoulli_")), t.numel(), [p](int64_t) { return p; }, draw);
  });
}

void bernoulli_fill(TensorImpl& t, const TensorImpl& probs, const PhiloxDraw& draw) {
  std::byte* ob = host_data(t, "bernoulli_");
  with_floating(probs, [&](const auto* pp) {
    auto prob = [pp](int64_t i) { return to_double(pp[i]); };
    visit_dtype(t.dtype(), [&]<typename T>() {
      if constexpr (!kIsComplex<T>) fill_bernoulli<T>(reinterpret_cast<T*>(ob), t.numel(), prob, draw);
    });
  });
}

void randperm_fill(TensorImpl& t, const PhiloxDraw& draw) {
  visit_dtype(t.dtype(), [&]<typename T>() {
    if constexpr (!kIsComplex<T> && !std::is_same_v<T, bool>)
      backend::fisher_yates<T>(reinterpret_cast<T*>(host_data(t, "randperm")), t.numel(), draw);
  });
}

void check_probabilities(const TensorImpl& probs) {
  with_floating(probs, [&](const auto* pp) {
    for (int64_t i = 0, n = probs.numel(); i < n; ++i) {
      const double q = to_double(pp[i]);
      LUCID_CHECK(q >= 0.0 && q <= 1.0, RuntimeError,
                  "Expected p_in >= 0 && p_in <= 1 to be true, but got false (probability ", q,
                  " at flat index ", i, ")");
    }
  });
}

void check_poisson_rates(const TensorImpl& rates) {
  with_floating(rates, [&](const auto* rp) {
    for (int64_t i = 0, n = rates.numel(); i < n; ++i)
      LUCID_CHECK(to_double(rp[i]) >= 0.0, RuntimeError,
                  "invalid Poisson rate, expected rate to be non-negative, but got ", to_double(rp[i]));
  });
}

void element_fill(TensorImpl& t, ops::Inputs params, ops::ElementLaw law, const PhiloxDraw& draw) {
  std::byte* out = host_data(t, "random");
  with_floating(*params[0], [&]<typename P>(const P* a) {
    const P* b = params.size() > 1 ? reinterpret_cast<const P*>(host_data(*params[1], "random")) : nullptr;
    P* op = reinterpret_cast<P*>(out);
    parallel_for(t.numel(), 1024, [&](int64_t lo, int64_t hi) {
      for (int64_t i = lo; i < hi; ++i)
        op[i] = backend::element_sample<P>(law, draw, uint64_t(i), to_double(a[i]), b ? to_double(b[i]) : 0.0);
    });
  });
}

void reparam_grad(TensorImpl& g, const TensorImpl* const* ins, bool dirichlet) {
  const char* name = dirichlet ? "_dirichlet_grad" : "_standard_gamma_grad";
  std::byte* out = host_data(g, name);
  const std::byte* in[3] = {};
  for (int k = 0; k < (dirichlet ? 3 : 2); ++k) in[k] = host_data(*ins[k], name);
  with_floating(g, [&]<typename P>(const P*) {
    const P *a = reinterpret_cast<const P*>(in[0]), *b = reinterpret_cast<const P*>(in[1]),
            *c = reinterpret_cast<const P*>(in[2]);
    P* op = reinterpret_cast<P*>(out);
    parallel_for(g.numel(), 1024, [&](int64_t lo, int64_t hi) {
      for (int64_t i = lo; i < hi; ++i)
        op[i] = cast_to<P>(dirichlet ? backend::dirichlet_grad(to_double(a[i]), to_double(b[i]), to_double(c[i]))
                                     : backend::standard_gamma_grad(to_double(a[i]), to_double(b[i])));
    });
  });
}

void check_standard_deviations(const TensorImpl& std) {
  with_floating(std, [&](const auto* sp) {
    for (int64_t i = 0, n = std.numel(); i < n; ++i)
      LUCID_CHECK(to_double(sp[i]) >= 0.0, RuntimeError, "normal expects all elements of std >= 0.0, but found std ",
                  to_double(sp[i]));
  });
}

}  // namespace lucid::cpu
