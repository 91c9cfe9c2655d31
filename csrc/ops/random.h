// Random fills and random creation functions (torch's uniform_, normal_, random_,
// bernoulli_, rand, randn, randint, bernoulli, normal, randperm). Each checks its
// arguments, then reserves its Philox draw from the generator (so a call that fails
// consumes no randomness) and launches a fill primitive on the tensor's device
// (ops/prims/random.h). Errors are PyTorch's: RuntimeError for bad arguments,
// NotImplementedError for a dtype a sampler does not support.
#pragma once

#include <optional>

#include "core/generator.h"
#include "core/tensor_impl.h"

namespace lucid::ops {

// In place: every element of t is written and its version bumped once; a
// non-contiguous t is filled through a contiguous copy.
void uniform_(const TensorPtr& t, double from, double to, Generator& gen);
void normal_(const TensorPtr& t, double mean, double std, Generator& gen);
void random_(const TensorPtr& t, int64_t low, int64_t high, Generator& gen);
void bernoulli_(const TensorPtr& t, double p, Generator& gen);
// t[i] = 1 with probability probs[i] (floating, t's numel; every one checked first).
void bernoulli_(const TensorPtr& t, const TensorPtr& probs, Generator& gen);

// New tensors on `device`, at version 0.
TensorPtr uniform(const Shape& shape, Dtype dtype, Device device, double from, double to, Generator& gen);
TensorPtr normal(const Shape& shape, Dtype dtype, Device device, double mean, double std, Generator& gen);
TensorPtr integers(const Shape& shape, Dtype dtype, Device device, int64_t low, int64_t high, Generator& gen);
// Like probs (shape, dtype, device): probability p for every element, or probs[i].
TensorPtr bernoulli(const TensorPtr& probs, std::optional<double> p, Generator& gen);
// torch.poisson: a Poisson(rate) count per element, of rates' dtype (floating) and shape.
TensorPtr poisson(const TensorPtr& rates, Generator& gen);
// torch._standard_gamma: a Gamma(alpha, 1) sample per element, of alpha's dtype
// (floating) and shape (Note [Element streams]).
TensorPtr standard_gamma(const TensorPtr& alpha, Generator& gen);
// torch.binomial: a Binomial(count, prob) sample per element of their broadcast shape,
// of count's (floating) dtype, which prob's must be.
TensorPtr binomial(const TensorPtr& count, const TensorPtr& prob, Generator& gen);
// torch._standard_gamma_grad / _dirichlet_grad: the samples' pathwise derivatives
// (ops/prims/random.h, ReparamGrad), over the operands broadcast, in their promoted dtype.
TensorPtr standard_gamma_grad(const TensorPtr& alpha, const TensorPtr& x);
TensorPtr dirichlet_grad(const TensorPtr& x, const TensorPtr& alpha, const TensorPtr& total);
// torch.normal(Tensor mean, Tensor std): mean + std * z with z ~ N(0, 1), mean and std
// broadcast to `shape`, computed in float64, then cast to `dtype`.
TensorPtr normal(const TensorPtr& mean, const TensorPtr& std, const Shape& shape, Dtype dtype, Device device,
                 Generator& gen);
TensorPtr randperm(int64_t n, Dtype dtype, Device device, Generator& gen);

}  // namespace lucid::ops
