// PyTorch's type promotion for ops mixing tensors and Python numbers
// (torch.result_type). Three priority classes: tensors with dimensions, 0-d
// tensors, and Python numbers ("wrapped numbers"); a lower class only matters when
// it brings a higher category (bool < integer < floating < complex).
#pragma once

#include <optional>

#include "core/dtype.h"

namespace lucid::ops {

class ResultType {
 public:
  explicit ResultType(Dtype default_float) : default_float_(default_float) {}
  void add_tensor(Dtype d, bool zero_dim);
  // A Python number of the given kind: bool, int, float or complex.
  void add_scalar(DtypeKind kind);
  Dtype result() const;

 private:
  Dtype default_float_;
  std::optional<Dtype> dim_, zero_, wrapped_;
};

}  // namespace lucid::ops

namespace lucid::ops {

// torch.can_cast: no complex to non-complex, no floating to integral, nothing but
// bool to bool.
bool can_cast(Dtype from, Dtype to);

}  // namespace lucid::ops
