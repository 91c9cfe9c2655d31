#include "core/storage.h"

#include <sys/mman.h>

#include <cstdlib>
#include <new>

#include "core/error.h"

namespace lucid {

namespace {

// Note [One block per storage]
// A tensor's bytes and its version counter live and die together, so they share one
// reference-counted block: the DataPtr and the counter are aliasing shared_ptrs into
// it. Tiny tensors (the scalars of a training loop's bookkeeping) keep their bytes
// inside the block too: one allocation instead of three (bytes, control block,
// counter), which is most of the fixed cost of a small op.
constexpr size_t kInlineBytes = 64;

struct InlineBlock {  // 16-byte aligned: an over-aligned type would cost a memalign
  VersionCounter counter;
  alignas(16) std::byte bytes[kInlineBytes];
};

struct HeapBlock {
  VersionCounter counter;
  void* bytes = nullptr;
  ~HeapBlock() { std::free(bytes); }
};

}  // namespace

CpuStorage allocate_cpu(size_t nbytes) {
  CpuStorage s{StorageBase{nullptr, nbytes, nullptr}};
  if (nbytes <= kInlineBytes) {
    auto block = std::make_shared<InlineBlock>();
    s.data = DataPtr(block, block->bytes);
    s.version = std::shared_ptr<VersionCounter>(block, &block->counter);
    return s;
  }
  // 64-byte alignment keeps SIMD loads aligned. Large buffers are 2 MiB aligned and
  // asked to be backed by huge pages: a fresh 64 MiB tensor then takes 32 page faults
  // instead of 16384, which otherwise cost more than the first pass over the data.
  constexpr size_t kHuge = size_t(2) << 20;
  size_t align = nbytes >= kHuge ? kHuge : 64;
  size_t rounded = (nbytes + align - 1) / align * align;
  auto block = std::make_shared<HeapBlock>();
  void* p = block->bytes = std::aligned_alloc(align, rounded);
  LUCID_CHECK(p, RuntimeError, "out of host memory: failed to allocate ", nbytes, " bytes");
  if (align == kHuge) madvise(p, rounded, MADV_HUGEPAGE);  // advice only: failure is harmless
  s.data = DataPtr(block, static_cast<std::byte*>(p));
  s.version = std::shared_ptr<VersionCounter>(block, &block->counter);
  return s;
}

}  // namespace lucid
