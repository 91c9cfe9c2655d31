// The dtype of Python floats in tensor creation and promotion
// (torch.set_default_dtype). Kept in the engine so ops and creation agree.
#pragma once

#include "core/dtype.h"

namespace lucid {

Dtype default_dtype();
void set_default_dtype(Dtype d);  // TypeError unless floating point

}  // namespace lucid
