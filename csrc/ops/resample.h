// interpolate's engine op: separable resampling along one dim by K weighted taps per
// output position (the ResampleTaps primitive). index: int64 [K, out_size] with
// entries in [0, x.size(dim)); weight: [K, out_size] of x's dtype (float32 or
// float64). The two ops are each other's adjoint, so each one's VJP is the other and
// double backward works. nn/_functional_resample.py computes the taps with ATen's
// index formulas.
#pragma once

#include "core/tensor_impl.h"

namespace lucid::ops {

TensorPtr resample_taps(const TensorPtr& x, int64_t dim, const TensorPtr& index, const TensorPtr& weight);
// The adjoint: the result has size in_size along dim.
TensorPtr resample_taps_adjoint(const TensorPtr& g, int64_t dim, const TensorPtr& index, const TensorPtr& weight,
                                int64_t in_size);

}  // namespace lucid::ops
