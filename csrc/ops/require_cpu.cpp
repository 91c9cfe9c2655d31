// Transitional (issue 19): the guard of the op families not yet moved onto the compute
// seam (ops/primitive.h). Deleted with require_cpu.h when the last caller is gone.
#include "ops/require_cpu.h"

#include "core/error.h"

namespace lucid::ops {

void require_cpu(const char* op, const Device& device) {
  LUCID_CHECK(device.is_cpu(), NotImplementedError, "no CUDA kernel for ", op, " on ", device.str(),
              " yet: move the tensors with .cpu()");
}

}  // namespace lucid::ops
