#include "backend/cpu/random.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>
#include <utility>

namespace lucid::cpu {
namespace {

template <typename T>
constexpr bool kIsHalf = std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>;
template <typename T>
constexpr bool kIsFloat = kIsHalf<T> || std::is_floating_point_v<T>;
template <typename T>
constexpr bool kIsComplex = std::is_same_v<T, complex64>;

// The 16-bit types only convert from and to float, so conversions go through it.
template <typename T, typename V>
T cast_to(V v) {
  if constexpr (kIsHalf<T>) return T(float(v));
  else return static_cast<T>(v);
}
template <typename T>
double to_double(T v) {
  if constexpr (kIsHalf<T>) return double(float(v));
  else return double(v);
}

// std::numeric_limits knows nothing of Half and BFloat16.
template <typename T>
double max_finite() {
  if constexpr (std::is_same_v<T, Half>) return 65504.0;
  else if constexpr (std::is_same_v<T, BFloat16>) return 3.3895313892515355e38;
  else return double(std::numeric_limits<T>::max());
}
template <typename T>
int mantissa_digits() {  // every integer of magnitude <= 2^digits is exact
  if constexpr (std::is_same_v<T, Half>) return 11;
  else if constexpr (std::is_same_v<T, BFloat16>) return 8;
  else return std::numeric_limits<T>::digits;
}

[[noreturn]] void not_implemented(const char* op, Dtype d) {
  fail<NotImplementedError>(op, " is not implemented for dtype ", dtype_name(d));
}

// Host address of element 0, after checking the layout every kernel here assumes.
std::byte* host_data(const TensorImpl& t, const char* op) {
  LUCID_CHECK(!t.is_gpu_storage(), RuntimeError, op,
              ": the CPU kernel needs a tensor in host memory, but got one on ", t.device().str());
  LUCID_CHECK(t.is_contiguous(), RuntimeError, op, ": the CPU kernel needs a contiguous tensor");
  return t.host_ptr();
}

// Reserves one draw for n elements at kPerBlock elements per Philox block and calls
// fn(block, first element, elements in this block). Block b always serves elements
// [b*kPerBlock, (b+1)*kPerBlock), which is what makes element i a function of
// (seed, offset, i); a parallel version only has to split the range of b.
template <int kPerBlock, typename Fn>
void for_each_block(int64_t n, Generator& gen, Fn&& fn) {
  if (n <= 0) return;
  const uint64_t blocks = (uint64_t(n) + kPerBlock - 1) / kPerBlock;
  const PhiloxDraw draw = gen.draw(blocks * 4);
  for (uint64_t b = 0; b < blocks; ++b) {
    const int64_t first = int64_t(b) * kPerBlock;
    fn(draw.block(b), first, int(std::min<int64_t>(kPerBlock, n - first)));
  }
}

// ---- uniform ----------------------------------------------------------------------

template <typename T>  // T: the element type whose limits apply (float for complex64)
void check_uniform_bounds(double from, double to, Dtype d) {
  const double mx = max_finite<T>();
  LUCID_CHECK(from >= -mx && from <= mx, RuntimeError, "uniform_: from=", from,
              " is out of bounds for dtype ", dtype_name(d));
  LUCID_CHECK(to >= -mx && to <= mx, RuntimeError, "uniform_: to=", to,
              " is out of bounds for dtype ", dtype_name(d));
  LUCID_CHECK(from <= to, RuntimeError,
              "uniform_ expects to return a [from, to) range, but found from=", from, " > to=", to);
  LUCID_CHECK(to - from <= mx, RuntimeError, "uniform_ expects to-from <= the largest ",
              dtype_name(d), " (", mx, "), but found to=", to, " and from=", from,
              " which result in to-from to exceed the limit");
}

// Acc is float (24-bit uniforms, 4 per block) or double (53-bit, 2 per block).
template <typename T, typename Acc>
void uniform_fill(T* p, int64_t n, double from_d, double to_d, Generator& gen) {
  const Acc from = Acc(from_d), to = Acc(to_d), range = to - from;
  auto put = [&](int64_t i, Acc u) {
    T v = cast_to<T>(u * range + from);
    // u < 1, but u * range + from can still round up to `to` (always possible in
    // the 16-bit types); mapping it to `from` keeps the interval half-open.
    if (Acc(to_double(v)) >= to && from < to) v = cast_to<T>(from);
    p[i] = v;
  };
  if constexpr (std::is_same_v<Acc, float>) {
    for_each_block<4>(n, gen, [&](const Philox4& r, int64_t first, int count) {
      for (int k = 0; k < count; ++k) put(first + k, uniform_f32(r.x[k]));
    });
  } else {
    for_each_block<2>(n, gen, [&](const Philox4& r, int64_t first, int count) {
      for (int k = 0; k < count; ++k) put(first + k, uniform_f64(r.x[2 * k], r.x[2 * k + 1]));
    });
  }
}

// ---- normal -----------------------------------------------------------------------

// Box-Muller: two uniforms give two independent normals, r*cos(theta), r*sin(theta).
template <typename T, typename Acc>
void normal_fill(T* p, int64_t n, Acc mean, Acc stdv, Generator& gen) {
  constexpr Acc kTwoPi = Acc(6.283185307179586476925);
  auto pair = [&](int64_t i, int left, Acc u1, Acc u2) {
    // 1 - u1 lies in (0, 1], so log never sees 0 and r stays finite.
    const Acc r = std::sqrt(Acc(-2) * std::log(Acc(1) - u1)) * stdv;
    const Acc theta = kTwoPi * u2;
    p[i] = cast_to<T>(r * std::cos(theta) + mean);
    if (left > 1) p[i + 1] = cast_to<T>(r * std::sin(theta) + mean);
  };
  if constexpr (std::is_same_v<Acc, float>) {  // two pairs per block
    for_each_block<4>(n, gen, [&](const Philox4& r, int64_t first, int count) {
      pair(first, count, uniform_f32(r.x[0]), uniform_f32(r.x[1]));
      if (count > 2) pair(first + 2, count - 2, uniform_f32(r.x[2]), uniform_f32(r.x[3]));
    });
  } else {  // one pair of 53-bit uniforms per block
    for_each_block<2>(n, gen, [&](const Philox4& r, int64_t first, int count) {
      pair(first, count, uniform_f64(r.x[0], r.x[1]), uniform_f64(r.x[2], r.x[3]));
    });
  }
}

// ---- random (integers) --------------------------------------------------------------

template <typename T>
void check_random_bounds(int64_t low, int64_t high, Dtype d) {
  LUCID_CHECK(low < high, RuntimeError,
              "random_ expects 'from' to be less than 'to', but got from=", low, " >= to=", high);
  int64_t lo, hi;
  if constexpr (kIsFloat<T>) {  // only integers the float type holds exactly
    hi = int64_t(1) << mantissa_digits<T>();
    lo = -hi;
  } else {
    lo = int64_t(std::numeric_limits<T>::min());
    hi = int64_t(std::numeric_limits<T>::max());
  }
  LUCID_CHECK(low >= lo && low <= hi, RuntimeError, "random_ expects 'from' to be in [", lo, ", ",
              hi, "] for dtype ", dtype_name(d), ", but got from=", low);
  LUCID_CHECK(high - 1 >= lo && high - 1 <= hi, RuntimeError, "random_ expects 'to' - 1 to be in [",
              lo, ", ", hi, "] for dtype ", dtype_name(d), ", but got to=", high);
}

// One 64-bit word per element (two per block), mapped to [0, range) by bounded_u64.
template <typename T>
void random_fill(T* p, int64_t n, int64_t low, int64_t high, Generator& gen) {
  const uint64_t range = uint64_t(high) - uint64_t(low);  // exact even for the full int64 span
  for_each_block<2>(n, gen, [&](const Philox4& r, int64_t first, int count) {
    for (int k = 0; k < count; ++k) {
      const uint64_t w = (uint64_t(r.x[2 * k]) << 32) | r.x[2 * k + 1];
      p[first + k] = cast_to<T>(int64_t(uint64_t(low) + bounded_u64(w, range)));
    }
  });
}

// ---- bernoulli ------------------------------------------------------------------------

// A 53-bit uniform per element, so probabilities keep double resolution.
template <typename T, typename ProbAt>
void bernoulli_fill(T* p, int64_t n, const ProbAt& prob, Generator& gen) {
  for_each_block<2>(n, gen, [&](const Philox4& r, int64_t first, int count) {
    for (int k = 0; k < count; ++k)
      p[first + k] = cast_to<T>(uniform_f64(r.x[2 * k], r.x[2 * k + 1]) < prob(first + k) ? 1 : 0);
  });
}

// ---- randperm -----------------------------------------------------------------------

template <typename T>
void check_randperm_n(int64_t n, Dtype d) {
  if constexpr (kIsFloat<T>) {
    LUCID_CHECK(n <= (int64_t(1) << mantissa_digits<T>()), RuntimeError,
                "randperm: n cannot be greater than 2^", mantissa_digits<T>(), " for dtype ",
                dtype_name(d), ", but got n=", n);
  } else {
    LUCID_CHECK(n == 0 || n - 1 <= int64_t(std::numeric_limits<T>::max()), RuntimeError,
                "randperm: n=", n, " is too large for result tensor type ", dtype_name(d));
  }
}

// Fisher-Yates from the top: step s swaps slot i = n-1-s with a uniform j in [0, i].
// Each step takes one 64-bit word, two steps per Philox block.
template <typename T>
void randperm_fill(T* p, int64_t n, Generator& gen) {
  for (int64_t i = 0; i < n; ++i) p[i] = cast_to<T>(i);
  const uint64_t steps = n > 1 ? uint64_t(n - 1) : 0;
  const PhiloxDraw draw = gen.draw(steps * 2);
  Philox4 r{};
  for (uint64_t s = 0; s < steps; ++s) {
    if ((s & 1) == 0) r = draw.block(s >> 1);
    const int k = int(s & 1) * 2;
    const uint64_t w = (uint64_t(r.x[k]) << 32) | r.x[k + 1];
    const int64_t i = n - 1 - int64_t(s);
    std::swap(p[i], p[int64_t(bounded_u64(w, uint64_t(i) + 1))]);
  }
}

}  // namespace

void uniform_(TensorImpl& t, double from, double to, Generator& gen) {
  const Dtype d = t.dtype();
  visit_dtype(d, [&]<typename T>() {
    if constexpr (kIsComplex<T>) {  // torch: uniform_ on view_as_real(self)
      check_uniform_bounds<float>(from, to, d);
      auto* p = reinterpret_cast<float*>(host_data(t, "uniform_"));
      uniform_fill<float, float>(p, 2 * t.numel(), from, to, gen);
    } else if constexpr (kIsFloat<T>) {
      check_uniform_bounds<T>(from, to, d);
      using Acc = std::conditional_t<std::is_same_v<T, double>, double, float>;
      uniform_fill<T, Acc>(reinterpret_cast<T*>(host_data(t, "uniform_")), t.numel(), from, to,
                           gen);
    } else {
      not_implemented("uniform_", d);
    }
  });
}

void normal_(TensorImpl& t, double mean, double std, Generator& gen) {
  const Dtype d = t.dtype();
  if (!is_floating(d) && !is_complex(d)) not_implemented("normal_", d);
  LUCID_CHECK(std >= 0.0, RuntimeError, "normal expects std >= 0.0, but found std ", std);
  visit_dtype(d, [&]<typename T>() {
    if constexpr (kIsComplex<T>) {  // torch: each part ~ N(mean, std^2 / 2)
      auto* p = reinterpret_cast<float*>(host_data(t, "normal_"));
      normal_fill<float, float>(p, 2 * t.numel(), float(mean), float(std / std::sqrt(2.0)), gen);
    } else if constexpr (kIsFloat<T>) {
      using Acc = std::conditional_t<std::is_same_v<T, double>, double, float>;
      normal_fill<T, Acc>(reinterpret_cast<T*>(host_data(t, "normal_")), t.numel(), Acc(mean),
                          Acc(std), gen);
    }
  });
}

void random_(TensorImpl& t, int64_t low, int64_t high, Generator& gen) {
  const Dtype d = t.dtype();
  visit_dtype(d, [&]<typename T>() {
    if constexpr (kIsComplex<T>) {
      not_implemented("random_", d);
    } else {
      check_random_bounds<T>(low, high, d);
      random_fill<T>(reinterpret_cast<T*>(host_data(t, "random_")), t.numel(), low, high, gen);
    }
  });
}

void bernoulli_(TensorImpl& t, double p, Generator& gen) {
  const Dtype d = t.dtype();
  if (is_complex(d)) not_implemented("bernoulli_", d);
  LUCID_CHECK(p >= 0.0 && p <= 1.0, RuntimeError,
              "bernoulli_ expects p to be in [0, 1], but got p=", p);
  visit_dtype(d, [&]<typename T>() {
    if constexpr (!kIsComplex<T>) {
      bernoulli_fill<T>(
          reinterpret_cast<T*>(host_data(t, "bernoulli_")), t.numel(), [p](int64_t) { return p; },
          gen);
    }
  });
}

void bernoulli_tensor(TensorImpl& out, const TensorImpl& probs, Generator& gen) {
  const Dtype d = out.dtype();
  if (is_complex(d)) not_implemented("bernoulli_", d);
  LUCID_CHECK(is_floating(probs.dtype()), RuntimeError,
              "bernoulli expects probabilities of a floating dtype, but got ",
              dtype_name(probs.dtype()));
  LUCID_CHECK(probs.numel() == out.numel(), RuntimeError, "bernoulli: expected ", out.numel(),
              " probabilities, but got ", probs.numel());
  const int64_t n = out.numel();
  const std::byte* pb = host_data(probs, "bernoulli");
  std::byte* ob = host_data(out, "bernoulli_");
  visit_dtype(probs.dtype(), [&]<typename P>() {
    if constexpr (kIsFloat<P>) {
      const P* pp = reinterpret_cast<const P*>(pb);
      // Validate everything first, so a bad probability leaves out and gen untouched.
      for (int64_t i = 0; i < n; ++i) {
        const double q = to_double(pp[i]);
        LUCID_CHECK(q >= 0.0 && q <= 1.0, RuntimeError,
                    "Expected p_in >= 0 && p_in <= 1 to be true, but got false (probability ", q,
                    " at flat index ", i, ")");
      }
      auto prob = [pp](int64_t i) { return to_double(pp[i]); };
      visit_dtype(d, [&]<typename T>() {
        if constexpr (!kIsComplex<T>) bernoulli_fill<T>(reinterpret_cast<T*>(ob), n, prob, gen);
      });
    }
  });
}

void randperm_(TensorImpl& out, int64_t n, Generator& gen) {
  const Dtype d = out.dtype();
  if (d == Dtype::Bool || is_complex(d)) not_implemented("randperm", d);
  LUCID_CHECK(n >= 0, RuntimeError, "randperm: n must be non-negative, got ", n);
  LUCID_CHECK(out.numel() == n, RuntimeError, "randperm: expected an output of ", n,
              " elements, but got ", out.numel());
  visit_dtype(d, [&]<typename T>() {
    if constexpr (!kIsComplex<T> && !std::is_same_v<T, bool>) {
      check_randperm_n<T>(n, d);
      randperm_fill<T>(reinterpret_cast<T*>(host_data(out, "randperm")), n, gen);
    }
  });
}

TensorPtr randperm(int64_t n, Dtype dtype, Generator& gen) {
  LUCID_CHECK(n >= 0, RuntimeError, "randperm: n must be non-negative, got ", n);
  TensorPtr out = TensorImpl::empty({n}, dtype, Device::cpu());
  randperm_(*out, n, gen);
  return out;
}

}  // namespace lucid::cpu
