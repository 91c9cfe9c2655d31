#include "core/storage.h"

#include <sys/mman.h>

#include <cstdlib>
#include <new>

#include "core/error.h"

namespace lucid {

CpuStorage allocate_cpu(size_t nbytes) {
  // 64-byte alignment keeps SIMD loads aligned. Large buffers are 2 MiB aligned and
  // asked to be backed by huge pages: a fresh 64 MiB tensor then takes 32 page faults
  // instead of 16384, which otherwise cost more than the first pass over the data.
  constexpr size_t kHuge = size_t(2) << 20;
  size_t align = nbytes >= kHuge ? kHuge : 64;
  size_t rounded = (nbytes + align - 1) / align * align;
  void* p = std::aligned_alloc(align, rounded ? rounded : align);
  if (p && align == kHuge) madvise(p, rounded, MADV_HUGEPAGE);  // advice only: failure is harmless
  LUCID_CHECK(p, RuntimeError, "out of host memory: failed to allocate ", nbytes, " bytes");
  CpuStorage s;
  s.data = DataPtr(static_cast<std::byte*>(p), [](std::byte* q) { std::free(q); });
  s.nbytes = nbytes;
  return s;
}

}  // namespace lucid
