// Primitives of the shape ops that move data (ops/shape_ops.cpp); the others are views
// or copies.
#pragma once

#include <vector>

#include "ops/primitive.h"

namespace lucid::ops {

// out (contiguous, src's shape) = src reversed along `dims`. ins: {src}.
struct Flip : PrimitiveOf<Prim::Flip, Flip> {
  std::vector<int64_t> dims;  // wrapped, each once
  const char* name() const override { return "flip"; }
};

// Zeroes, in place in out (contiguous, >= 2 dims), the elements of each trailing
// matrix above (lower: tril) or below (triu) the given diagonal. No ins.
struct Tri : PrimitiveOf<Prim::Tri, Tri> {
  int64_t diagonal = 0;
  bool lower = true;
  const char* name() const override { return lower ? "tril" : "triu"; }
};

}  // namespace lucid::ops
