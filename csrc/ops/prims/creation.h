// Primitives of the creation ops that compute their values (ops/creation.cpp): each
// fills its output (contiguous) on the output's device from parameters alone. No ins.
#pragma once

#include <optional>

#include "ops/primitive.h"

namespace lucid::ops {

// out[i] = start + i * step, cast to out's dtype. Computed in int64 when start and step
// are integers (exact past 2^53), else in double, as PyTorch's accumulate types do.
struct Arange : PrimitiveOf<Prim::Arange, Arange> {
  Scalar start = int64_t(0);
  Scalar step = int64_t(1);
  const char* name() const override { return "arange"; }
};

// out[i] = the i-th of out.numel() evenly spaced values from start to end, computed as
// PyTorch computes them (in out's dtype); with log_base, log_base ** that value.
struct Linspace : PrimitiveOf<Prim::Linspace, Linspace> {
  double start = 0;
  double end = 0;
  std::optional<double> log_base;  // logspace
  const char* name() const override { return log_base ? "logspace" : "linspace"; }
};

// out (2-d) = ones on the main diagonal, zeros elsewhere.
struct Eye : PrimitiveOf<Prim::Eye, Eye> {
  const char* name() const override { return "eye"; }
};

}  // namespace lucid::ops
