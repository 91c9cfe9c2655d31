#include "core/storage.h"

#include <cstdlib>
#include <new>

#include "core/error.h"

namespace lucid {

CpuStorage allocate_cpu(size_t nbytes) {
  // 64-byte alignment keeps SIMD loads aligned; aligned_alloc needs a multiple of it.
  size_t rounded = (nbytes + 63) / 64 * 64;
  void* p = std::aligned_alloc(64, rounded ? rounded : 64);
  LUCID_CHECK(p, RuntimeError, "out of host memory: failed to allocate ", nbytes, " bytes");
  CpuStorage s;
  s.data = DataPtr(static_cast<std::byte*>(p), [](std::byte* q) { std::free(q); });
  s.nbytes = nbytes;
  return s;
}

}  // namespace lucid
