// CPU kernels of the index ops (gather, scatter, masked_fill) and of flip and tril/triu.
// They move whole elements: only the reductions of scatter look at the dtype.
// The ops layer (ops/gather_ops.cpp) has already checked shapes and dtypes; these
// kernels still check every index they read, so bad input never reads or writes
// out of bounds.
#pragma once

#include <vector>

#include "core/tensor_impl.h"
#include "ops/prims/index.h"

namespace lucid::cpu {

using ops::ScatterReduce;

// out[i][j][k] = src[index[i][j][k]][j][k] (dim = 0), over index's shape; out has
// index's shape. RuntimeError for an index outside [0, src.size(dim)).
void gather(TensorImpl& out, const TensorImpl& src, const TensorImpl& index, int64_t dim);

// index_select by whole slices: out.select(dim, j) = src.select(dim, index[j]), each
// a strided copy; for slices long enough that a copy per slice beats gather's
// per-element index loads. `index` holds out.size(dim) checked indices.
void index_select_slices(TensorImpl& out, const TensorImpl& src, const int64_t* index, int64_t dim);

// index_add by whole slices, for a contiguous out and src: out.select(dim, index[j]) +=
// src.select(dim, j), j ascending (scatter's bits, in its order), by the add op's row
// kernel for slices (the elements after `dim`) of 16 elements and more, else element by
// element. False, having done nothing, where that does not apply (dtype, layout).
// `index` holds src.size(dim) checked indices.
bool index_add_slices(TensorImpl& out, const TensorImpl& src, const int64_t* index, int64_t dim);

// out[index[i][j][k]][j][k] (op)= src[i][j][k] (dim = 0), over index's shape. src
// has out's dtype and may be a broadcast value (stride 0 everywhere).
void scatter(TensorImpl& out, int64_t dim, const TensorImpl& index, const TensorImpl& src, ScatterReduce mode);

// out[i] = value where mask[i]; mask (bool) is already broadcast to out's shape and
// value is a one-element tensor of out's dtype.
void masked_fill(TensorImpl& out, const TensorImpl& mask, const TensorImpl& value);

// out (contiguous) = src reversed along each of `dims` (wrapped, distinct).
void flip(TensorImpl& out, const TensorImpl& src, const std::vector<int64_t>& dims);

// Zeroes, in a contiguous tensor of >= 2 dims, the elements of each trailing matrix
// above (lower=true: tril) or below (triu) the given diagonal.
void tri_zero(TensorImpl& out, int64_t diagonal, bool lower);

}  // namespace lucid::cpu
