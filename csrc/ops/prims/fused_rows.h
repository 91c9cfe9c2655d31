// A layer_norm / rms_norm with the elementwise chains around it, run as one kernel: the
// call a GPU flush makes of a NormRows call, the chain that computes its input (the
// prologue) and the chain that takes its result (the epilogue). Note [Fused norm rows]
// (ops/fusion_rows.cpp).
#pragma once

#include <cstdint>

#include "ops/prims/fused.h"
#include "ops/prims/seq.h"

namespace lucid::ops {

// The prologue runs once per element of x (x[e] is its out_reg[x_output]); the epilogue
// once per element of y, with y's value in in_reg[y_input] instead of a load. A side
// without a chain is the identity program: one input, stored as its one output.
// outs: {the prologue's outputs in order, x's only when x_stored; y when y_stored;
//        [mean] (not rms); rstd; the epilogue's outputs in order};
// ins:  {the prologue's inputs in order; [weight]; [bias]; the epilogue's inputs in
//        order, but y}.
// Every element operand is contiguous with x's element count, or one element (broadcast).
struct FusedNormRows : PrimitiveOf<Prim::FusedNormRows, FusedNormRows> {
  NormRows norm;
  FusedProgram prologue, epilogue;
  uint8_t x_output = 0, y_input = 0;
  bool x_stored = false;  // something besides the fused calls reads x
  bool y_stored = false;  // ... or y (the identity epilogue stores y as its output)
  uint64_t variant = 0;   // the backend's kernel (FusedRowsVariant), never 0 once fused
  const char* name() const override { return norm.rms ? "fused rms_norm" : "fused layer_norm"; }
  uint64_t signature() const override {
    uint64_t h = 1469598103934665603ull ^ variant;
    for (uint64_t v : {uint64_t(norm.rms), uint64_t(norm.has_weight), uint64_t(norm.has_bias), uint64_t(x_output),
                       uint64_t(y_input), uint64_t(x_stored), uint64_t(y_stored)})
      h = (h ^ v) * 1099511628211ull;
    for (const FusedProgram* p : {&prologue, &epilogue})
      for (char c : fused_structure(*p)) h = (h ^ uint8_t(c)) * 1099511628211ull;
    return h;
  }

  // The positions of the norm's own operands among outs and ins.
  size_t y_out() const { return prologue.n_outputs - (x_stored ? 0 : 1); }  // (when y_stored)
  size_t mean_out() const { return y_out() + (y_stored ? 1 : 0); }          // (when !norm.rms)
  size_t rstd_out() const { return mean_out() + (norm.rms ? 0 : 1); }
  size_t weight_in() const { return prologue.n_inputs; }  // (when has_weight)
  size_t bias_in() const { return weight_in() + (norm.has_weight ? 1 : 0); }
  size_t epilogue_in() const { return bias_in() + (norm.has_bias ? 1 : 0); }
  size_t out_count() const { return rstd_out() + 1 + epilogue.n_outputs; }
  size_t in_count() const { return epilogue_in() + epilogue.n_inputs - 1; }
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

// The backend's kernel for a fused norm or norm backward, chosen when the pass builds
// the call: 0 while it compiles or where the backend has none for it (rows too long to
// stage); the pass then leaves the calls unfused.
using FusedRowsVariant = uint64_t (*)(const FusedNormRows& p, int device);
using FusedRowsBackwardVariant = uint64_t (*)(const FusedNormRowsBackward& p, int device);

}  // namespace lucid::ops
