#include "backend/cpu/random.h"

#include "backend/common/gamma_grads.h"
#include "backend/common/random_values.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>
#include <utility>

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

// Calls fn(block, first element, elements in this block) for n elements at kPerBlock
// elements per Philox block of the draw. Block b always serves elements
// [b*kPerBlock, (b+1)*kPerBlock), which is what makes element i a function of
// (seed, offset, i): the pool splits the range of b, and the values never depend on
// the thread count. (fn writes its own elements only.)
template <int kPerBlock, typename Fn>
void for_each_block(int64_t n, const PhiloxDraw& draw, Fn&& fn) {
  if (n <= 0) return;
  const int64_t blocks = (n + kPerBlock - 1) / kPerBlock;
  parallel_for(blocks, kParallelGrain / (4 * kPerBlock), [&](int64_t b0, int64_t b1) {
    for (int64_t b = b0; b < b1; ++b) {
      const int64_t first = b * kPerBlock;
      fn(draw.block(uint64_t(b)), first, int(std::min<int64_t>(kPerBlock, n - first)));
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

// Box-Muller: two uniforms give two independent normals, r*cos(theta), r*sin(theta).
template <typename T, typename Acc>
void fill_normal(T* p, int64_t n, Acc mean, Acc stdv, const PhiloxDraw& draw) {
  auto pair = [&](int64_t i, int left, Acc u1, Acc u2) {
    Acc z0, z1;
    backend::normal_pair(u1, u2, mean, stdv, z0, z1);
    p[i] = cast_to<T>(z0);
    if (left > 1) p[i + 1] = cast_to<T>(z1);
  };
  if constexpr (std::is_same_v<Acc, float>) {  // two pairs per block
    for_each_block<4>(n, draw, [&](const Philox4& r, int64_t first, int count) {
      pair(first, count, uniform_f32(r.x[0]), uniform_f32(r.x[1]));
      if (count > 2) pair(first + 2, count - 2, uniform_f32(r.x[2]), uniform_f32(r.x[3]));
    });
  } else {  // one pair of 53-bit uniforms per block
    for_each_block<2>(n, draw, [&](const Philox4& r, int64_t first, int count) {
      pair(first, count, uniform_f64(r.x[0], r.x[1]), uniform_f64(r.x[2], r.x[3]));
    });
  }
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
