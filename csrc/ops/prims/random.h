// Primitives of the random fills (ops/random.cpp).
//
// A fill carries the Philox key and first block it owns (a PhiloxDraw, by value): the
// op reserves the draw on the host when it is called, so the values do not depend on
// when a kernel runs, and element i is a function of (seed, offset, i) on every device
// (Note [Philox stream layout] in core/generator.h). Arguments are checked by the op
// before it draws; a kernel only reads the stream.
#pragma once

#include <cstdint>

#include "core/dtype.h"
#include "core/generator.h"
#include "ops/primitive.h"

namespace lucid::ops {

// The layout every device follows: how many 32-bit words a fill of `numel` elements
// of `dtype` takes. Uniform and normal fills of the float32-computed dtypes take one
// word per value, four values per Philox block (a complex element is two values, its
// parts'); float64 and complex128's parts take two words per value (a 53-bit uniform),
// two values per block, and so
// do integers and bernoulli (a 64-bit word, a 53-bit uniform). Whole blocks are taken.
enum class RandomFill { Uniform, Normal, Integers, Bernoulli };
inline uint64_t philox_words(RandomFill fill, Dtype dtype, int64_t numel) {
  const bool per_float = (fill == RandomFill::Uniform || fill == RandomFill::Normal) && dtype != Dtype::F64 &&
                         dtype != Dtype::C128;
  const int64_t values = is_complex(dtype) ? 2 * numel : numel;
  const int64_t per_block = per_float ? 4 : 2;
  return values <= 0 ? 0 : uint64_t((values + per_block - 1) / per_block) * 4;
}
// randperm: one 64-bit word per Fisher-Yates step, n - 1 steps.
inline uint64_t permutation_words(int64_t n) { return n > 1 ? uint64_t(n - 1) * 2 : 0; }
// poisson and _standard_gamma: element i reads its own stream (Note [Element streams],
// random_values.h), of which a call reserves kElementStreamBlocks blocks.
inline constexpr uint64_t kElementStreamBlocks = 256;
inline uint64_t element_stream_words() { return kElementStreamBlocks * 4; }

// Uniform in [from, to). outs: {t} (floating or complex64, contiguous).
struct RandomUniform : PrimitiveOf<Prim::RandomUniform, RandomUniform> {
  double from = 0, to = 1;
  PhiloxDraw draw{};
  const char* name() const override { return "uniform_"; }
};

// Normal(mean, std) by Box-Muller. outs: {t} (floating or complex64, contiguous).
// With ins {mean, std} (float64, t's shape, contiguous; t float64): t = mean + std * z
// with z ~ N(0, 1) (torch.normal(Tensor, Tensor)); the number parameters are unused.
struct RandomNormal : PrimitiveOf<Prim::RandomNormal, RandomNormal> {
  double mean = 0, std = 1;
  PhiloxDraw draw{};
  const char* name() const override { return "normal_"; }
};

// Integers uniform in [low, high). outs: {t} (not complex, contiguous).
struct RandomIntegers : PrimitiveOf<Prim::RandomIntegers, RandomIntegers> {
  int64_t low = 0, high = 1;
  PhiloxDraw draw{};
  const char* name() const override { return "random_"; }
};

// 1 with probability p, else 0. outs: {t} (not complex, contiguous); ins: {} or
// {probs} (floating, t's numel, contiguous), one probability per element, p unused.
struct RandomBernoulli : PrimitiveOf<Prim::RandomBernoulli, RandomBernoulli> {
  double p = 0.5;
  PhiloxDraw draw{};
  const char* name() const override { return "bernoulli_"; }
};

// A uniformly random permutation of 0..n-1. outs: {t [n]} (integer or floating,
// contiguous).
struct RandomPermutation : PrimitiveOf<Prim::RandomPermutation, RandomPermutation> {
  PhiloxDraw draw{};
  const char* name() const override { return "randperm"; }
};

// Samples whose element i follows a law with element i of its parameter tensors, each
// from its own stream (Note [Element streams]): Poisson(rate), a count (torch.poisson;
// no rate negative), Gamma(alpha, 1) (torch._standard_gamma; at least the dtype's
// smallest normal number, as torch's), or Binomial(count, prob) (torch.binomial).
// outs: {t} (floating, contiguous); ins: {rates}, {alphas} or {counts, probs} (t's
// dtype and numel, contiguous).
enum class ElementLaw { Poisson, Gamma, Binomial };
struct RandomPerElement : PrimitiveOf<Prim::RandomPerElement, RandomPerElement> {
  ElementLaw law = ElementLaw::Poisson;
  PhiloxDraw draw{};
  const char* name() const override {
    return law == ElementLaw::Poisson ? "poisson" : law == ElementLaw::Gamma ? "_standard_gamma" : "binomial";
  }
};

// The reparameterized gradients of the gamma family's samples (pathwise derivatives,
// backend/common/gamma_grads.h), elementwise: d x / d alpha of a standard Gamma(alpha)
// sample x (torch._standard_gamma_grad), ins {alpha, x}; or (dirichlet) that of a
// Beta(alpha, total - alpha) sample x over 1 - x, the piece a Dirichlet's gradient is
// made of (torch._dirichlet_grad), ins {x, alpha, total}. outs: {g}; every operand
// floating, of one dtype and numel, contiguous.
struct ReparamGrad : PrimitiveOf<Prim::ReparamGrad, ReparamGrad> {
  bool dirichlet = false;
  const char* name() const override { return dirichlet ? "_dirichlet_grad" : "_standard_gamma_grad"; }
};

// The checks of a tensor argument's values, run before the op draws, so a bad value
// leaves the generator untouched: RuntimeError for a probability outside [0, 1]
// (bernoulli), a negative standard deviation (normal) or a negative rate (poisson).
// ins: {t} (floating).
enum class RandomArgument { Probabilities, StandardDeviations, PoissonRates };
struct RandomCheck : PrimitiveOf<Prim::RandomCheck, RandomCheck> {
  RandomArgument what = RandomArgument::Probabilities;
  const char* name() const override {
    return what == RandomArgument::Probabilities ? "bernoulli" : what == RandomArgument::PoissonRates ? "poisson"
                                                                                                       : "normal";
  }
};

}  // namespace lucid::ops
