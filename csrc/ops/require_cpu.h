// The one check of every op that has no GPU kernel yet: a tensor off the CPU raises
// NotImplementedError naming the op and the device, never a silent fallback.
#pragma once

#include "core/tensor_impl.h"

namespace lucid::ops {

void require_cpu(const char* op, const Device& device);
inline void require_cpu(const char* op, const TensorImpl& t) { require_cpu(op, t.device()); }
inline void require_cpu(const char* op, const TensorPtr& t) { require_cpu(op, t->device()); }

}  // namespace lucid::ops
