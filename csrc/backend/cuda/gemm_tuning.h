// Timing cuBLASLt's candidate algorithms for a product (gemm.cpp).
//
// Note [Tuned products]
// cuBLASLt's heuristic names one algorithm per product shape from a model of the GPU,
// and for the small products of a training step it is often not the fastest: the MLP
// 784-512-512-10 step's weight gradients ran split-K kernels plus a separate reduce
// kernel each. XLA times the candidates once per shape and keeps the fastest (JAX's
// jit runs tuned products); torch keeps the heuristic's pick unless TunableOp is on.
// With LUCID_GEMM_TUNING=1 lucid times them (off by default: see below): the first
// time a plan runs outside a CUDA graph capture, each of the
// heuristic's first kCandidates algorithms runs kReps times into scratch outputs (the
// real output and its epilogue vector are never written by a trial), timed with CUDA
// events, and the plan keeps the fastest. A candidate replaces the heuristic's pick only
// when at least 5% faster, so that timing noise does not flip a choice between two
// equal kernels (each algorithm's results are deterministic; two algorithms may round
// differently, so the pick decides the last bits of a product). Costs one host wait
// and under a millisecond once per shape: products whose pick takes over 0.25 ms are
// not tuned (tensor-core bound, where the heuristic's model is good).
// Why it is off by default: on the H200 (2026-12-05) the tuned MLP step was 0.82x JAX's
// jit against 0.78x untuned, within the runs' noise, and Nsight Compute timed several of
// the picked kernels (a 99-way split-K among them) at 2-3x the heuristic's in isolation:
// back-to-back repetitions of one product, its operands hot in L2 and its launches
// queued, favour kernels that a step, where each product follows other work, does not.
// Timing the candidates interleaved and after other work is the next step.
#pragma once

#include <cuda_runtime.h>

#include <functional>

namespace lucid::cuda {

inline constexpr int kCandidates = 8;

// Whether products are tuned (LUCID_GEMM_TUNING, read once).
bool gemm_tuning_enabled();

// Whether `stream` is being captured into a CUDA graph (no host waits then).
bool capturing(cudaStream_t stream);

// The index of the fastest of `count` candidates, where run(i) enqueues candidate i on
// `stream` once and returns false when it cannot run (it is then never chosen); 0 when
// none is 5% faster than candidate 0.
int fastest_candidate(int count, cudaStream_t stream, const std::function<bool(int)>& run);

}  // namespace lucid::cuda
