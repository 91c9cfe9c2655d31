// Sorting (torch.sort / argsort and the ops built on them in python/lucid/_sort.py:
// topk, kthvalue, msort, median, nanmedian).
#pragma once

#include "core/tensor_impl.h"

namespace lucid::ops {

// The stable sorting permutation of x along dim: int64 positions, in ascending (or
// descending) order of the values, equal values in position order; NaN is the largest
// value and -0.0 equals 0.0, as torch.sort(stable=True). Real dtypes; a 0-d tensor
// gives 0. Integers, so no gradient: the sorted values are x.gather(dim, positions),
// whose gradient is the scatter torch's SortBackward0 is.
TensorPtr argsort(const TensorPtr& x, int64_t dim, bool descending);

}  // namespace lucid::ops
