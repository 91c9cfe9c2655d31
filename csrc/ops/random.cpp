// The random ops (ops/random.h): argument checks, the host-side Philox reservation,
// and one fill primitive (ops/prims/random.h).
#include "ops/random.h"

#include <limits>
#include <type_traits>
#include <vector>

#include "core/error.h"
#include "ops/elementwise.h"  // (broadcast_shapes)
#include "ops/prims/random.h"
#include "ops/views.h"

namespace lucid::ops {

namespace {


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

// ---- argument checks ------------------------------------------------------------------

template <typename T>  // T: the element type whose limits apply (a complex type's part)
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

void check_uniform(Dtype d, double from, double to) {
  visit_dtype(d, [&]<typename T>() {
    if constexpr (kIsComplexValue<T>) check_uniform_bounds<typename T::value_type>(from, to, d);
    else if constexpr (kIsRealFloat<T>) check_uniform_bounds<T>(from, to, d);
    else not_implemented("uniform_", d);
  });
}

void check_normal(Dtype d, double std) {
  if (!is_floating(d) && !is_complex(d)) not_implemented("normal_", d);
  LUCID_CHECK(std >= 0.0, RuntimeError, "normal expects std >= 0.0, but found std ", std);
}

void check_integers(Dtype d, int64_t low, int64_t high) {
  if (is_complex(d)) not_implemented("random_", d);
  LUCID_CHECK(low < high, RuntimeError,
              "random_ expects 'from' to be less than 'to', but got from=", low, " >= to=", high);
  visit_dtype(d, [&]<typename T>() {
    if constexpr (!kIsComplexValue<T>) {
      int64_t lo, hi;
      if constexpr (kIsRealFloat<T>) {  // only integers the float type holds exactly
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
  });
}

void check_bernoulli(Dtype d, double p) {
  if (is_complex(d)) not_implemented("bernoulli_", d);
  LUCID_CHECK(p >= 0.0 && p <= 1.0, RuntimeError, "bernoulli_ expects p to be in [0, 1], but got p=", p);
}

// Everything of bernoulli with per-element probabilities but their values, then the
// values (one pass, before anything is drawn or written).
void check_bernoulli(Dtype d, const TensorPtr& probs, int64_t numel) {
  if (is_complex(d)) not_implemented("bernoulli_", d);
  LUCID_CHECK(is_floating(probs->dtype()), RuntimeError,
              "bernoulli expects probabilities of a floating dtype, but got ", dtype_name(probs->dtype()));
  LUCID_CHECK(probs->numel() == numel, RuntimeError, "bernoulli: expected ", numel,
              " probabilities, but got ", probs->numel());
  RandomCheck check;
  check.what = RandomArgument::Probabilities;
  launch(check, {}, {probs.get()});
}

void check_randperm(Dtype d, int64_t n) {
  if (d == Dtype::Bool || is_complex(d)) not_implemented("randperm", d);
  visit_dtype(d, [&]<typename T>() {
    if constexpr (kIsRealFloat<T>) {
      LUCID_CHECK(n <= (int64_t(1) << mantissa_digits<T>()), RuntimeError,
                  "randperm: n cannot be greater than 2^", mantissa_digits<T>(), " for dtype ",
                  dtype_name(d), ", but got n=", n);
    } else if constexpr (!kIsComplexValue<T> && !std::is_same_v<T, bool>) {
      LUCID_CHECK(n == 0 || n - 1 <= int64_t(std::numeric_limits<T>::max()), RuntimeError,
                  "randperm: n=", n, " is too large for result tensor type ", dtype_name(d));
    }
  });
}

// ---- launching ------------------------------------------------------------------------

// The fill `p` with its draw of `words` reserved from gen now (so the values do not
// depend on when its kernel runs), or of the words a fill of t takes (philox_words).
template <class P>
P drawn(P p, Generator& gen, uint64_t words) {
  p.draw = gen.draw(words);
  return p;
}
template <class P>
P drawn(P p, Generator& gen, RandomFill fill, const TensorImpl& t) {
  return drawn(p, gen, philox_words(fill, t.dtype(), t.numel()));
}

// Launches a fill into t: into t itself when contiguous, else into a contiguous
// tensor then written back; the version is bumped once either way.
void fill_in_place(const TensorPtr& t, const Primitive& fill, std::initializer_list<const TensorImpl*> ins = {}) {
  TensorPtr target = t->is_contiguous() ? t : TensorImpl::empty(t->shape(), t->dtype(), t->device());
  launch(fill, {target.get()}, ins);
  if (target == t) t->bump_version();
  else t->copy_from(*target);
}

// A new tensor (version 0), given to `fill` once `check` passed.
template <typename Check, typename Fill>
TensorPtr fresh(const Shape& shape, Dtype dtype, Device device, Check check, Fill fill) {
  TensorPtr t = TensorImpl::empty(shape, dtype, device);
  check();
  fill(t);
  return t;
}

RandomUniform uniform_fill(double from, double to) {
  RandomUniform p;
  p.from = from;
  p.to = to;
  return p;
}
RandomNormal normal_fill(double mean, double std) {
  RandomNormal p;
  p.mean = mean;
  p.std = std;
  return p;
}
RandomIntegers integers_fill(int64_t low, int64_t high) {
  RandomIntegers p;
  p.low = low;
  p.high = high;
  return p;
}
RandomBernoulli bernoulli_fill(double prob) {
  RandomBernoulli p;
  p.p = prob;
  return p;
}

}  // namespace

void uniform_(const TensorPtr& t, double from, double to, Generator& gen) {
  check_uniform(t->dtype(), from, to);
  fill_in_place(t, drawn(uniform_fill(from, to), gen, RandomFill::Uniform, *t));
}

void normal_(const TensorPtr& t, double mean, double std, Generator& gen) {
  check_normal(t->dtype(), std);
  fill_in_place(t, drawn(normal_fill(mean, std), gen, RandomFill::Normal, *t));
}

void random_(const TensorPtr& t, int64_t low, int64_t high, Generator& gen) {
  check_integers(t->dtype(), low, high);
  fill_in_place(t, drawn(integers_fill(low, high), gen, RandomFill::Integers, *t));
}

void bernoulli_(const TensorPtr& t, double prob, Generator& gen) {
  check_bernoulli(t->dtype(), prob);
  fill_in_place(t, drawn(bernoulli_fill(prob), gen, RandomFill::Bernoulli, *t));
}

void bernoulli_(const TensorPtr& t, const TensorPtr& probs, Generator& gen) {
  TensorPtr pr = probs->clone();  // contiguous
  check_bernoulli(t->dtype(), pr, t->numel());
  fill_in_place(t, drawn(RandomBernoulli{}, gen, RandomFill::Bernoulli, *t), {pr.get()});
}

TensorPtr uniform(const Shape& shape, Dtype dtype, Device device, double from, double to, Generator& gen) {
  return fresh(shape, dtype, device, [&] { check_uniform(dtype, from, to); }, [&](const TensorPtr& t) {
    launch(drawn(uniform_fill(from, to), gen, RandomFill::Uniform, *t), {t.get()}, {});
  });
}

TensorPtr normal(const Shape& shape, Dtype dtype, Device device, double mean, double std, Generator& gen) {
  return fresh(shape, dtype, device, [&] { check_normal(dtype, std); }, [&](const TensorPtr& t) {
    launch(drawn(normal_fill(mean, std), gen, RandomFill::Normal, *t), {t.get()}, {});
  });
}

TensorPtr integers(const Shape& shape, Dtype dtype, Device device, int64_t low, int64_t high, Generator& gen) {
  return fresh(shape, dtype, device, [&] { check_integers(dtype, low, high); }, [&](const TensorPtr& t) {
    launch(drawn(integers_fill(low, high), gen, RandomFill::Integers, *t), {t.get()}, {});
  });
}

TensorPtr bernoulli(const TensorPtr& probs, std::optional<double> prob, Generator& gen) {
  const Dtype dtype = probs->dtype();
  if (prob)
    return fresh(probs->shape(), dtype, probs->device(), [&] { check_bernoulli(dtype, *prob); },
                 [&](const TensorPtr& t) {
                   launch(drawn(bernoulli_fill(*prob), gen, RandomFill::Bernoulli, *t), {t.get()}, {});
                 });
  TensorPtr pr = probs->clone();  // contiguous
  return fresh(probs->shape(), dtype, probs->device(), [&] { check_bernoulli(dtype, pr, pr->numel()); },
               [&](const TensorPtr& t) {
                 launch(drawn(RandomBernoulli{}, gen, RandomFill::Bernoulli, *t), {t.get()}, {pr.get()});
               });
}

TensorPtr poisson(const TensorPtr& rates, Generator& gen) {
  LUCID_CHECK(is_floating(rates->dtype()), NotImplementedError, "\"poisson_cpu\" not implemented for '",
              scalar_type_name(rates->dtype()), "'");
  TensorPtr r = rates->clone();  // contiguous
  RandomCheck check;
  check.what = RandomArgument::PoissonRates;
  launch(check, {}, {r.get()});
  TensorPtr t = TensorImpl::empty(r->shape(), r->dtype(), r->device());
  launch(drawn(RandomPerElement{}, gen, element_stream_words()), {t.get()}, {r.get()});
  return t;
}

TensorPtr standard_gamma(const TensorPtr& alpha, Generator& gen) {
  LUCID_CHECK(is_floating(alpha->dtype()), NotImplementedError, "\"_standard_gamma\" not implemented for '",
              scalar_type_name(alpha->dtype()), "'");
  TensorPtr a = alpha->clone();  // contiguous
  TensorPtr t = TensorImpl::empty(a->shape(), a->dtype(), a->device());
  RandomPerElement gamma;
  gamma.law = ElementLaw::Gamma;
  launch(drawn(gamma, gen, element_stream_words()), {t.get()}, {a.get()});
  return t;
}

TensorPtr binomial(const TensorPtr& count, const TensorPtr& prob, Generator& gen) {
  LUCID_CHECK(is_floating(count->dtype()), ValueError, "binomial only supports floating-point dtypes for count, got: ",
              scalar_type_name(count->dtype()));
  LUCID_CHECK(prob->dtype() == count->dtype(), RuntimeError, "Found dtype ", scalar_type_name(prob->dtype()),
              " but expected ", scalar_type_name(count->dtype()));
  LUCID_CHECK(prob->device() == count->device(), RuntimeError,
              "Expected all tensors to be on the same device, but found at least two devices, ",
              count->device().str(), " and ", prob->device().str(), "!");
  const Shape shape = broadcast_shapes(count->shape(), prob->shape());
  TensorPtr n = expand(count, shape)->clone(), p = expand(prob, shape)->clone();  // contiguous
  TensorPtr t = TensorImpl::empty(shape, count->dtype(), count->device());
  RandomPerElement binomial;
  binomial.law = ElementLaw::Binomial;
  launch(drawn(binomial, gen, element_stream_words()), {t.get()}, {n.get(), p.get()});
  return t;
}

namespace {

// ReparamGrad over `ins` broadcast together, in their promoted (floating) dtype.
TensorPtr reparam_grad(std::initializer_list<TensorPtr> ins, bool dirichlet) {
  const char* name = dirichlet ? "_dirichlet_grad" : "_standard_gamma_grad";
  const TensorPtr& first = *ins.begin();
  Dtype dtype = first->dtype();
  Shape shape = first->shape();
  for (const TensorPtr& t : ins) {
    LUCID_CHECK(is_floating(t->dtype()), NotImplementedError, "\"", name, "\" not implemented for '",
                scalar_type_name(t->dtype()), "'");
    LUCID_CHECK(t->device() == first->device(), RuntimeError,
                "Expected all tensors to be on the same device, but found at least two devices, ",
                first->device().str(), " and ", t->device().str(), "!");
    dtype = promote_types(dtype, t->dtype());
    shape = broadcast_shapes(shape, t->shape());
  }
  std::vector<TensorPtr> dense;
  std::vector<const TensorImpl*> raw;
  for (const TensorPtr& t : ins) {
    dense.push_back(expand(t, shape)->clone(dtype, first->device()));
    raw.push_back(dense.back().get());
  }
  TensorPtr g = TensorImpl::empty(shape, dtype, first->device());
  ReparamGrad prim;
  prim.dirichlet = dirichlet;
  TensorImpl* out = g.get();
  launch(prim, Outputs(&out, 1), Inputs(raw.data(), raw.size()));
  return g;
}

}  // namespace

TensorPtr standard_gamma_grad(const TensorPtr& alpha, const TensorPtr& x) { return reparam_grad({alpha, x}, false); }

TensorPtr dirichlet_grad(const TensorPtr& x, const TensorPtr& alpha, const TensorPtr& total) {
  return reparam_grad({x, alpha, total}, true);
}

TensorPtr normal(const TensorPtr& mean, const TensorPtr& std, const Shape& shape, Dtype dtype, Device device,
                 Generator& gen) {
  // Both as float64 on the output's device, broadcast to `shape` (contiguous copies).
  TensorPtr m = expand(mean, shape)->clone(Dtype::F64, device), s = expand(std, shape)->clone(Dtype::F64, device);
  RandomCheck check;
  check.what = RandomArgument::StandardDeviations;
  launch(check, {}, {s.get()});
  TensorPtr z = TensorImpl::empty(shape, Dtype::F64, device);
  launch(drawn(RandomNormal{}, gen, RandomFill::Normal, *z), {z.get()}, {m.get(), s.get()});
  return dtype == Dtype::F64 ? z : z->clone(dtype);
}

TensorPtr randperm(int64_t n, Dtype dtype, Device device, Generator& gen) {
  LUCID_CHECK(n >= 0, RuntimeError, "randperm: n must be non-negative, got ", n);
  return fresh({n}, dtype, device, [&] { check_randperm(dtype, n); }, [&](const TensorPtr& t) {
    launch(drawn(RandomPermutation{}, gen, permutation_words(n)), {t.get()}, {});
  });
}

}  // namespace lucid::ops
