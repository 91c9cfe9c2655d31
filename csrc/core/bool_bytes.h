// Foreign memory read as bool (a NumPy buffer, frombuffer, a checkpoint) must hold
// only the bytes 0 and 1: lucid's bool kernels read the byte as it is.
#pragma once

#include <cstddef>

#include "core/shape.h"

namespace lucid {

// The byte offset from `base` of the first byte, in row-major order over `shape`
// (byte strides, possibly negative), that is neither 0 nor 1; -1 when there is none.
int64_t find_non_bool_byte(const std::byte* base, const Shape& shape, const Stride& stride);

}  // namespace lucid
