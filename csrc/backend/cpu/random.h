// CPU kernels that fill a tensor with random values in place (torch's uniform_,
// normal_, random_, bernoulli_, randperm). Distributions and argument checks follow
// PyTorch; the bit stream is lucid's own Philox layout (core/generator.h), so values
// differ from torch's for the same seed.
//
// Kernels write bytes only: an in-place caller bumps the version counter, a
// creation function (rand, randn, ...) does not, so fresh tensors start at version 0.
// Every kernel needs a contiguous tensor in host memory (CpuStorage or SharedStorage),
// writes all its elements, bumps its version counter, and draws a fixed number of
// random words per element, so element i depends only on (seed, offset, i).
// Errors are RuntimeError, as in PyTorch, with lucid's dtype names.
#pragma once

#include <cstdint>

#include "core/dtype.h"
#include "core/generator.h"
#include "core/tensor_impl.h"

namespace lucid::cpu {

// [from, to) for floating dtypes; complex64 fills real and imaginary parts alike.
// Needs from <= to and to - from <= the dtype's max. A value that rounds up to `to`
// in the output dtype is replaced by `from` (as PyTorch's CUDA kernel does).
void uniform_(TensorImpl& t, double from, double to, Generator& gen);

// Normal(mean, std) by Box-Muller, floating dtypes and complex64 (each part gets
// std / sqrt(2), as torch.randn does for complex). Needs std >= 0.
void normal_(TensorImpl& t, double mean, double std, Generator& gen);

// Integers uniform in [low, high) for bool, integer and floating dtypes. Needs
// low < high, with low and high - 1 representable in the dtype (exactly, for floats).
void random_(TensorImpl& t, int64_t low, int64_t high, Generator& gen);

// 1 with probability p, else 0, for bool, integer and floating dtypes; p in [0, 1].
void bernoulli_(TensorImpl& t, double p, Generator& gen);

// out[i] = 1 with probability probs[i]. `probs` is a contiguous host tensor of a
// floating dtype with out's numel; every probability is checked before anything is
// written or drawn.
void bernoulli_tensor(TensorImpl& out, const TensorImpl& probs, Generator& gen);

// Writes a uniformly random permutation of 0..n-1 into `out` (numel n, integer or
// floating dtype able to hold n - 1 exactly). Fisher-Yates over the Philox stream.
void randperm_(TensorImpl& out, int64_t n, Generator& gen);
// A new contiguous CPU tensor of shape [n] filled by randperm_.
TensorPtr randperm(int64_t n, Dtype dtype, Generator& gen);

}  // namespace lucid::cpu
