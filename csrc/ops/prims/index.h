// Primitives of the index ops: gather, scatter, index_select, index_add, masked_fill
// (ops/gather_ops.cpp), advanced indexing and nonzero (ops/index_ops.cpp).
//
// Index tensors arrive as int64 on the op's device. Only the kernels read index
// values, so only they check them: every index is checked before it is used, with the
// op's exception and message (RuntimeError for gather/scatter, IndexError for the
// rest, as PyTorch), and index_put_ checks all of them before it writes self.
#pragma once

#include <optional>
#include <vector>

#include "ops/primitive.h"

namespace lucid::ops {

// Maximum / Minimum: scatter_reduce's amax / amin, a NaN in src winning as in torch's
// (out = isnan(src) ? src : max(out, src), std::max's order); not for complex.
enum class ScatterReduce : uint8_t { Assign, Add, Multiply, Maximum, Minimum };

// out[i][j][k] = src[index[i][j][k]][j][k] (dim = 0), over index's shape (out's).
// ins: {src, index}; both at least 1-d, index no larger than src apart from dim.
struct Gather : PrimitiveOf<Prim::Gather, Gather> {
  int64_t dim = 0;
  const char* name() const override { return "gather"; }
};

// out[index[i][j][k]][j][k] (reduce)= src[i][j][k] (dim = 0), in index order: with
// repeated indices the last write wins. ins: {index, src} or {index} when src is a
// number, which broadcasts over index's shape.
struct Scatter : PrimitiveOf<Prim::Scatter, Scatter> {
  int64_t dim = 0;
  ScatterReduce reduce = ScatterReduce::Assign;
  std::optional<Scalar> value;  // src when it is a number, already converted to out's dtype
  const char* name() const override { return "scatter"; }
};

// out = src with its slices along dim picked by a 1-d index. ins: {src (at least
// 1-d), index (contiguous 1-d)}. IndexError "index out of range in self" for an
// index outside [0, src.size(dim)).
struct IndexSelect : PrimitiveOf<Prim::IndexSelect, IndexSelect> {
  int64_t dim = 0;
  const char* name() const override { return "index_select"; }
};

// out.select(dim, index[j]) += source.select(dim, j), in order. outs: {out (at least
// 1-d)}; ins: {index (contiguous 1-d), source (out's dtype, alpha applied)}. Errors as
// IndexSelect's.
struct IndexAdd : PrimitiveOf<Prim::IndexAdd, IndexAdd> {
  int64_t dim = 0;
  const char* name() const override { return "index_add"; }
};

// out[i] = value where mask[i]. ins: {mask (bool, broadcast to out's shape)}.
struct MaskedFill : PrimitiveOf<Prim::MaskedFill, MaskedFill> {
  Scalar value;  // already of out's dtype
  const char* name() const override { return "masked_fill"; }
};

// The loop of advanced indexing (Note [Advanced index placement], ops/index_ops.cpp),
// over the shape R of the indexing result. Element r of the result is self's element
// at byte offset
//   sum_d r[d] * self_stride[d] + sum_k wrap(idx_k[r]) * dim_stride[k]
// where idx_k[r], index tensor k's value at r, is read at byte offset
// sum_d r[d] * idx_stride[k][d] (0 on the dimensions it does not vary along), and
// negative values wrap by dim_size[k].
struct IndexLoop {
  Shape shape;                      // R
  Stride self_stride;               // bytes, one per dimension of R
  std::vector<Stride> idx_stride;   // bytes, one per dimension of R, per index tensor
  std::vector<int64_t> dim;         // the dimension of self each index tensor indexes
  std::vector<int64_t> dim_size;    // its size: indices must lie in [-size, size)
  std::vector<int64_t> dim_stride;  // its byte stride in self
  // Index only: the only index is 1-d, on dim 0 of a tensor with rows of at least 64
  // elements (x[idx] picking rows of a matrix, embeddings): rows are copied whole.
  bool whole_rows = false;
};

// out (contiguous, shape R, self's dtype) = self[indices]. ins: {self, index tensors}.
// IndexError "index i is out of bounds for dimension d with size n".
struct Index : PrimitiveOf<Prim::Index, Index> {
  IndexLoop loop;
  const char* name() const override { return "index"; }
};

// self[indices] = values (accumulate: +=, summing repeated indices in order). outs:
// {self}; ins: {values (self's dtype, broadcast to R), index tensors}. Errors as Index's.
struct IndexPut : PrimitiveOf<Prim::IndexPut, IndexPut> {
  IndexLoop loop;
  bool accumulate = false;
  const char* name() const override { return "index_put_"; }
};

// nonzero in two launches, since its result's shape depends on the data: the count,
// read on the host, sizes the result that the second fills.
// out (0-d int64) = the number of true elements. ins: {flags (bool, contiguous)}.
struct CountNonzero : PrimitiveOf<Prim::CountNonzero, CountNonzero> {
  const char* name() const override { return "nonzero"; }
};

// out (count, flags.ndim, int64) = the row-major coordinates of the true elements.
// ins: {flags (bool, contiguous)}.
struct Nonzero : PrimitiveOf<Prim::Nonzero, Nonzero> {
  const char* name() const override { return "nonzero"; }
};

}  // namespace lucid::ops
