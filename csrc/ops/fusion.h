// Note [Elementwise fusion]
// At a flush (core/pending.h), runs of consecutive recorded unary and binary calls
// over float tensors of one dtype and one element count become one FusedElementwise
// call (ops/prims/fused.h): a program of up to kFusedMaxInstrs steps over registers
// that each device's kernel interprets element by element with the elementwise table's
// own functors. Each step's result is rounded to the dtype as the unfused op would
// store it, so fused results are the unfused ones bit for bit.
//  - Operands: contiguous tensors of the run's element count, one-element tensors read
//    for every element, and numbers (constants of the program, in the compute type, so
//    a new learning rate is a new constant, not a new kernel).
//  - In place and aliasing: operands are matched by (storage, offset); a step writing a
//    storage makes later steps read its register. Two different places of one storage,
//    one of them written, stop the program (threads would race on the overlap).
//  - Outputs: a written storage is stored only if something besides the run's own calls
//    holds it (the user, autograd, a later call of the list); an intermediate that
//    dies with the run is never written. (It is still allocated: allocation happens
//    when an op is called, Note [Lazy GPU execution].)
// Why an interpreted program rather than NVRTC-generated code (the design study's
// 7.5): the kernels are compiled with lucid, so there is no compile latency on a cache
// miss, no cache to keep on disk and no toolkit headers needed at run time, and results
// are bit for bit the unfused ones by construction (the same functors, no contraction
// of one op's multiply into the next op's add). The price is a switch a step, the same
// for every thread, and registers in shared memory; docs/PERFORMANCE.md has what that
// costs against the bandwidth bound.
// LUCID_FUSION=0 or lucid.gpu.set_fusion(False) turns it off.
#pragma once

namespace lucid::ops {

// Installs the pass as the pending lists' rewriter (called when the CUDA backend loads).
void enable_elementwise_fusion();

}  // namespace lucid::ops
