// Advanced indexing (PyTorch's aten::index / index_put_), nonzero and masked_select.
// The Python layer (python/lucid/_indexing.py) turns `t[key]` into basic views plus
// one call to index / index_put_ with a list of optional index tensors.
#pragma once

#include <vector>

#include "core/tensor_impl.h"

namespace lucid::ops {

// An index list: entry d indexes dimension d of self (after bool masks, which cover
// as many dimensions as they have, are expanded); null entries take the whole
// dimension; missing trailing entries are null. Index tensors are int64 or int32
// (negative values count from the end) or bool/uint8 masks.
using IndexList = std::vector<TensorPtr>;

// aten::index: the index tensors broadcast together to a shape B; the result has B
// in place of the indexed dimensions when those are adjacent, and B first otherwise.
TensorPtr index(const TensorPtr& self, const IndexList& indices);
// aten::index_put_: self[indices] = values (values broadcast to the indexing result,
// same dtype as self); accumulate adds instead, summing duplicate indices. Returns self.
TensorPtr index_put_(const TensorPtr& self, const IndexList& indices, const TensorPtr& values, bool accumulate);
// The out-of-place form: a copy of self with the write applied.
TensorPtr index_put(const TensorPtr& self, const IndexList& indices, const TensorPtr& values, bool accumulate);

// torch.nonzero: an (N, ndim) int64 tensor of the coordinates of nonzero elements.
TensorPtr nonzero(const TensorPtr& t);
// torch.masked_select: the elements of t where the bool mask (broadcast with t) is
// true, as a 1-d tensor.
TensorPtr masked_select(const TensorPtr& t, const TensorPtr& mask);

}  // namespace lucid::ops
