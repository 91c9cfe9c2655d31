// Shared storage: pinned host memory mapped into the GPU's address space.
//
// The CPU reads and writes it through the host pointer, kernels through the device
// pointer, with no copy in between (storage.h, Note [Storage kinds]). It is plain
// page-locked host memory, so it is counted in no device's memory statistics.
// Blocks are cached (Note [Cached pinned blocks] in pinned_memory.cpp): a DataLoader
// with pin_memory=True pins a batch every step.
#pragma once

#include <cstddef>

#include "core/storage.h"

namespace lucid::cuda {

// Allocates nbytes of mapped pinned memory for `device`; data is the host address,
// device_ptr the address kernels on `device` use. Throws lucid::RuntimeError when
// the host cannot pin that much memory.
SharedStorage allocate_pinned_mapped(size_t nbytes, int device);

// Frees the cached pinned blocks (lucid.gpu.empty_cache()), waiting for the last
// queued use of each.
void release_cached_pinned_memory();

}  // namespace lucid::cuda
