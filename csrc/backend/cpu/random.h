// CPU kernels that fill a tensor with random values (torch's uniform_, normal_,
// random_, bernoulli_, randperm) from a Philox draw the op reserved (ops/random.cpp,
// ops/prims/random.h). Distributions follow PyTorch; the bit stream is lucid's own
// Philox layout (core/generator.h), so values differ from torch's for the same seed.
//
// Every kernel needs a contiguous tensor in host memory (CpuStorage or SharedStorage),
// writes all its elements (bytes only: the op bumps versions) and takes a fixed number
// of random words per element (ops::philox_words), so element i depends only on
// (seed, offset, i). The op checks the arguments; these kernels assume them valid.
#pragma once

#include <cstdint>

#include "core/generator.h"
#include "core/tensor_impl.h"
#include "ops/prims/random.h"  // (ElementLaw, Inputs)

namespace lucid::cpu {

// words[4 k + w] = word w of the draw's block first + k (draw.block(first + k)), for k
// < count: Note [Philox in lanes] (random.cpp).
void philox_blocks(const PhiloxDraw& draw, uint64_t first, int64_t count, uint32_t* words);

// [from, to) for floating dtypes; complex64 fills real and imaginary parts alike.
// A value that rounds up to `to` in the output dtype is replaced by `from` (as
// PyTorch's CUDA kernel does).
void uniform_fill(TensorImpl& t, double from, double to, const PhiloxDraw& draw);

// Normal(mean, std) by Box-Muller, floating dtypes and complex64 (each part gets
// std / sqrt(2), as torch.randn does for complex).
void normal_fill(TensorImpl& t, double mean, double std, const PhiloxDraw& draw);
// float64 t = mean + std * z, z ~ N(0, 1); mean and std float64 with t's numel.
void normal_fill(TensorImpl& t, const TensorImpl& mean, const TensorImpl& std, const PhiloxDraw& draw);

// Integers uniform in [low, high) for bool, integer and floating dtypes.
void integers_fill(TensorImpl& t, int64_t low, int64_t high, const PhiloxDraw& draw);

// 1 with probability p, else 0, for bool, integer and floating dtypes.
void bernoulli_fill(TensorImpl& t, double p, const PhiloxDraw& draw);
// t[i] = 1 with probability probs[i] (a floating tensor with t's numel).
void bernoulli_fill(TensorImpl& t, const TensorImpl& probs, const PhiloxDraw& draw);

// A uniformly random permutation of 0..n-1 into t (numel n, integer or floating
// dtype able to hold n - 1 exactly). Fisher-Yates over the Philox stream.
void randperm_fill(TensorImpl& t, const PhiloxDraw& draw);

// RuntimeError at the first probability outside [0, 1] / negative standard deviation
// of a floating tensor.
void check_probabilities(const TensorImpl& probs);
void check_standard_deviations(const TensorImpl& std);
void check_poisson_rates(const TensorImpl& rates);
// t[i] = a sample of `law` with the params' element i (RandomPerElement, Note [Element
// streams]); t and params floating, of one dtype and numel, contiguous.
void element_fill(TensorImpl& t, ops::Inputs params, ops::ElementLaw law, const PhiloxDraw& draw);
// g = ReparamGrad's gradient (ops/prims/random.h) of ins {alpha, x}, or (dirichlet)
// {x, alpha, total}.
void reparam_grad(TensorImpl& g, const TensorImpl* const* ins, bool dirichlet);

}  // namespace lucid::cpu
