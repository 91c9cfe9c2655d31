// A layer_norm / rms_norm or a softmax / log_softmax with the elementwise chains around
// it, run as one kernel: the call a GPU flush makes of a NormRows (or SoftmaxDim) call,
// the chain that computes its input (the prologue) and the chain that takes its result
// (the epilogue). Note [Fused norm rows] (ops/fusion_rows.cpp).
#pragma once

#include <cstdint>

#include "ops/prims/fused.h"
#include "ops/prims/reduce.h"
#include "ops/prims/seq.h"

namespace lucid::ops {

// The chains around a row op x -> y. The prologue runs once per element of x (x[e] is
// its out_reg[x_output]); the epilogue once per element of y, with y's value in
// in_reg[y_input] instead of a load. A side without a chain is the identity program:
// one input, stored as its one output. Every element operand is contiguous with x's
// element count, or one element (broadcast).
struct FusedRowChains {
  FusedProgram prologue, epilogue;
  uint8_t x_output = 0, y_input = 0;
  bool x_stored = false;  // something besides the fused calls reads x
  bool y_stored = false;  // ... or y (the identity epilogue stores y as its output)
  uint64_t variant = 0;   // the backend's kernel (FusedRowsVariant), never 0 once fused
  int64_t elements = 0;   // x's element count (a backend may index views narrower)

  // A hash of the chains' structure and the row op's own `fields` (Primitive::signature).
  uint64_t chains_signature(std::initializer_list<uint64_t> fields) const {
    uint64_t h = 1469598103934665603ull ^ variant;
    for (uint64_t v : fields) h = (h ^ v) * 1099511628211ull;
    for (uint64_t v : {uint64_t(x_output), uint64_t(y_input), uint64_t(x_stored), uint64_t(y_stored)})
      h = (h ^ v) * 1099511628211ull;
    for (const FusedProgram* p : {&prologue, &epilogue})
      for (char c : fused_structure(*p)) h = (h ^ uint8_t(c)) * 1099511628211ull;
    return h;
  }
  // Where y goes among outs (when y_stored), after the prologue's outputs.
  size_t y_out() const { return prologue.n_outputs - (x_stored ? 0 : 1); }
};

// outs: {the prologue's outputs in order, x's only when x_stored; y when y_stored;
//        [mean] (not rms); rstd; the epilogue's outputs in order};
// ins:  {the prologue's inputs in order; [weight]; [bias]; the epilogue's inputs in
//        order, but y}.
struct FusedNormRows : PrimitiveOf<Prim::FusedNormRows, FusedNormRows>, FusedRowChains {
  NormRows norm;
  const char* name() const override { return norm.rms ? "fused rms_norm" : "fused layer_norm"; }
  uint64_t signature() const override {
    return chains_signature({uint64_t(norm.rms), uint64_t(norm.has_weight), uint64_t(norm.has_bias)});
  }

  // The positions of the norm's own operands among outs and ins.
  size_t mean_out() const { return y_out() + (y_stored ? 1 : 0); }  // (when !norm.rms)
  size_t rstd_out() const { return mean_out() + (norm.rms ? 0 : 1); }
  size_t weight_in() const { return prologue.n_inputs; }  // (when has_weight)
  size_t bias_in() const { return weight_in() + (norm.has_weight ? 1 : 0); }
  size_t epilogue_in() const { return bias_in() + (norm.has_bias ? 1 : 0); }
  size_t epilogue_out() const { return rstd_out() + 1; }
  size_t out_count() const { return epilogue_out() + epilogue.n_outputs; }
  size_t in_count() const { return epilogue_in() + epilogue.n_inputs - 1; }
};

// A softmax / log_softmax over rows (softmax.inner == 1) with its chains.
// outs: {the prologue's outputs in order, x's only when x_stored; y when y_stored; the
//        epilogue's outputs in order};
// ins:  {the prologue's inputs in order; the epilogue's inputs in order, but y}.
struct FusedSoftmaxRows : PrimitiveOf<Prim::FusedSoftmaxRows, FusedSoftmaxRows>, FusedRowChains {
  SoftmaxDim softmax;
  const char* name() const override { return softmax.log ? "fused log_softmax" : "fused softmax"; }
  uint64_t signature() const override { return chains_signature({uint64_t(softmax.log)}); }

  size_t epilogue_in() const { return prologue.n_inputs; }
  size_t epilogue_out() const { return y_out() + (y_stored ? 1 : 0); }
  size_t out_count() const { return epilogue_out() + epilogue.n_outputs; }
  size_t in_count() const { return epilogue_in() + epilogue.n_inputs - 1; }
};

// What a fused row reduction computes: MomentBlock's Sum, Mean and Norm1 (a sum of
// magnitudes), and ExtremumBlock's values-only max and min, over rows (inner == 1).
enum class RowReduce : uint8_t { Sum, Mean, AbsSum, Max, Min };

// A row reduction with the chain computing its input; no epilogue (the identity
// program: y is one element a row). outer rows of n > 0 elements.
// outs: {the prologue's outputs in order, x's only when x_stored; y};
// ins:  {the prologue's inputs in order}.
struct FusedReduceRows : PrimitiveOf<Prim::FusedReduceRows, FusedReduceRows>, FusedRowChains {
  RowReduce reduce = RowReduce::Sum;
  int64_t outer = 0, n = 0;
  const char* name() const override {
    static constexpr const char* kNames[] = {"fused sum", "fused mean", "fused norm", "fused amax", "fused amin"};
    return kNames[int(reduce)];
  }
  uint64_t signature() const override { return chains_signature({uint64_t(reduce)}); }

  size_t epilogue_in() const { return prologue.n_inputs; }
  size_t epilogue_out() const { return y_out(); }  // (y, the identity epilogue's output)
  size_t out_count() const { return epilogue_out() + 1; }
  size_t in_count() const { return epilogue_in(); }
};

// A norm's backward with the chain that takes dx (its epilogue), run as one kernel for
// dx and the chain, then the column sums of d weight and d bias.
// outs: {dx when dx_stored, [dweight], [dbias], the epilogue's outputs in order};
// ins:  {dy, x, [weight], [mean] (not rms), rstd, the epilogue's inputs in order, but dx}.
struct FusedNormRowsBackward : PrimitiveOf<Prim::FusedNormRowsBackward, FusedNormRowsBackward> {
  NormRowsBackward norm;
  FusedProgram epilogue;
  uint8_t dx_input = 0;
  bool dx_stored = false;  // something besides the fused calls reads dx
  uint64_t variant = 0;
  const char* name() const override { return norm.rms ? "fused rms_norm_backward" : "fused layer_norm_backward"; }
  uint64_t signature() const override {
    uint64_t h = 1469598103934665603ull ^ variant;
    for (uint64_t v : {uint64_t(norm.rms), uint64_t(norm.has_weight), uint64_t(norm.has_bias), uint64_t(dx_input),
                       uint64_t(dx_stored)})
      h = (h ^ v) * 1099511628211ull;
    for (char c : fused_structure(epilogue)) h = (h ^ uint8_t(c)) * 1099511628211ull;
    return h;
  }

  size_t dweight_out() const { return dx_stored ? 1 : 0; }  // (when has_weight)
  size_t dbias_out() const { return dweight_out() + (norm.has_weight ? 1 : 0); }
  size_t epilogue_out() const { return dbias_out() + (norm.has_bias ? 1 : 0); }
  size_t weight_in() const { return 2; }
  size_t mean_in() const { return weight_in() + (norm.has_weight ? 1 : 0); }
  size_t rstd_in() const { return mean_in() + (norm.rms ? 0 : 1); }
  size_t epilogue_in() const { return rstd_in() + 1; }
  size_t out_count() const { return epilogue_out() + epilogue.n_outputs; }
  size_t in_count() const { return epilogue_in() + epilogue.n_inputs - 1; }
};

// The backend's kernel for a fused norm, norm backward, softmax or row sum, chosen when
// the pass builds the call: 0 while it compiles or where the backend has none for it
// (rows too long to stage, sums it would split); the pass then leaves the calls unfused.
struct FusedRowsVariants {
  uint64_t (*norm)(const FusedNormRows& p, int device);
  uint64_t (*norm_backward)(const FusedNormRowsBackward& p, int device);
  uint64_t (*softmax)(const FusedSoftmaxRows& p, int device);
  uint64_t (*reduce)(const FusedReduceRows& p, int device);
};

}  // namespace lucid::ops
