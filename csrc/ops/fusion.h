// Note [Elementwise fusion]
// At a flush (core/pending.h), runs of consecutive recorded unary, binary and where
// calls and copies (casts) over float tensors of one element count become one
// FusedElementwise call (ops/prims/fused.h): a program of up to kFusedMaxInstrs steps
// over registers that each device's kernel interprets element by element with the
// elementwise table's own functors. Each step's result is rounded to its dtype as the
// unfused op would store it, so fused results are the unfused ones bit for bit.
//  - Dtypes: a GPU program's share a compute type (float64, or float for float32 and
//    the 16-bit floats), so a cast between float32, float16 and bfloat16 is a step (it
//    rounds), and bool comes in as a where's condition or a cast's source (0 or 1). The
//    CPU's programs have one dtype (its calls record no copies).
//  - Operands: contiguous tensors of the run's element count, one-element tensors read
//    for every element, numbers (constants of the program, in the compute type, so
//    a new learning rate is a new constant, not a new kernel), and views of a call's
//    shape (ops::FusedRead::View): a bias row or a [B, 1] column expanded over a
//    batch, an attention mask over batch and heads, a transposed or sliced tensor,
//    read in place at an offset of up to kFusedMaxTerms terms (i / div % size * stride:
//    one per run of dimensions that steps evenly through memory). The terms' count is
//    the program's structure and their sizes its parameters, so a new batch size is not
//    a new kernel. The GPU's programs (and the norm pass's chains, Note [Fused norm
//    rows]) read any such view; the CPU's only contiguous rows repeated along the
//    leading dimensions (Note [Compiled CPU chains]).
//  - In place and aliasing: operands are matched by (storage, offset, view); a step
//    writing a storage makes later steps read its register. Two different places of one storage,
//    one of them written, stop the program (threads would race on the overlap).
//  - Outputs: a written storage is stored only if something besides the run's own calls
//    holds it (the user, autograd, a later call of the list); an intermediate that
//    dies with the run is never written. (It is still allocated: allocation happens
//    when an op is called, Note [Lazy GPU execution].)
// How a program runs: the CUDA backend compiles a kernel for each program with NVRTC
// (backend/cuda/fused_codegen.h, Note [Generated kernels]), in the background, and
// interprets the program until that kernel is ready (backend/cuda/fused_elementwise.cu).
// Generated code is each op's functor body in straight-line code, built like the unfused
// kernels with no contraction of one op's multiply into the next op's add, so every way
// gives the same bits. The CPU runs a program with the ops' own row kernels (below).
// LUCID_FUSION=0 or lucid.gpu.set_fusion(False) turns it off.
#pragma once

#include "ops/prims/fused.h"
#include "ops/prims/fused_rows.h"

namespace lucid::ops {

// Installs the pass as the pending lists' rewriter (called when the CPU backend loads).
void enable_elementwise_fusion();
// The CUDA backend's choice among its kernels for a program (ops/prims/fused.h).
void set_fused_variant(FusedVariant variant);
// The CUDA backend's kernels for a norm, a norm's backward and a softmax with their
// chains (Note [Fused norm rows], ops/fusion_rows.cpp).
void set_fused_rows_variants(const FusedRowsVariants& variants);
// Whether the rows pass (norms and softmax) runs (lucid.gpu.set_norm_fusion; on unless
// LUCID_NORM_FUSION=0 at start).
bool norm_fusion_enabled();
void set_norm_fusion_enabled(bool enabled);
// The dtypes a fused program computes in (the float ones).
bool fusable_dtype(Dtype d);

// Note [Compiled CPU chains]
// Inside a compiled region (lucid.compile, core/pending.h) the CPU records the calls this
// pass can fuse (there, also with an operand that repeats a row along the leading
// dimensions: a bias), and only those, in its own list (pending::kCpu); any other CPU op, and
// anything that reads a CPU storage's bytes, flushes it first (TensorImpl::host_ptr). At
// the flush, chains become programs as on the GPU, and the CPU's program kernel
// (backend/cpu/fused_elementwise.cpp) runs them block by block: each step is the op's own
// row kernel (the SIMD loop or vector math its eager kernel runs) over a block of a few
// thousand elements held in cache, so a chain reads its inputs and writes its outputs
// once, with the eager ops' bits. Calls on fewer than kCpuRecordMinElements elements run
// when called: their operands are in cache already, and recording costs more than it saves.
inline constexpr int64_t kCpuRecordMinElements = 16384;
// Whether launch() should record this CPU call (when pending::recording_cpu()).
bool record_on_cpu(const Primitive& p, Outputs outs, Inputs ins);

}  // namespace lucid::ops
