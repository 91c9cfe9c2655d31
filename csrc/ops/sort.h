// Sorting (torch.sort / argsort and the ops built on them in python/lucid/_sort.py:
// topk, kthvalue, msort, median, nanmedian).
#pragma once

#include <utility>

#include "core/tensor_impl.h"

namespace lucid::ops {

// The stable sorting permutation of x along dim: int64 positions, in ascending (or
// descending) order of the values, equal values in position order; NaN is the largest
// value and -0.0 equals 0.0, as torch.sort(stable=True). Real dtypes; a 0-d tensor
// gives 0. Integers, so no gradient: the sorted values are x.gather(dim, positions),
// whose gradient is the scatter torch's SortBackward0 is.
TensorPtr argsort(const TensorPtr& x, int64_t dim, bool descending);

// The same sort's values and positions from one pass (torch.sort's results): the values
// are x's own (-0.0 and NaN payloads kept). Not differentiable: python/lucid/_sort.py
// takes argsort and gather for an input that needs a gradient.
std::pair<TensorPtr, TensorPtr> sort(const TensorPtr& x, int64_t dim, bool descending);

// The first k of argsort's positions along dim (largest: of the descending order), the
// CPU selecting them without sorting: torch.topk's indices, sorted, ties in position
// order. 0 <= k <= the dim's size.
TensorPtr topk_positions(const TensorPtr& x, int64_t k, int64_t dim, bool largest);

// torch.searchsorted: where each of values goes in `boundaries`, sorted along its last
// dim (1-d, shared by every value, or with values' leading dims): the count of
// boundaries below the value (right: at most it), int64, NaN the largest value. Both
// compared in their promoted dtype; same device.
TensorPtr searchsorted(const TensorPtr& boundaries, const TensorPtr& values, bool right);

}  // namespace lucid::ops
