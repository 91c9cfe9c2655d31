#include "core/storage.h"

#include <pthread.h>
#include <sys/mman.h>

#include <cstdlib>
#include <map>
#include <mutex>
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

// Note [Large-block cache]
// A fresh 64 MiB buffer costs page faults and zero-filling by the kernel on first
// touch, about a third of an elementwise op over it; a training loop frees and
// reallocates the same sizes every step. So freed blocks of 128 KiB and more are
// kept, keyed by size, and handed out again for the same size: no syscall, no page
// fault. Blocks below 2 MiB are rounded up to 64 KiB multiples; from 2 MiB they are
// 2 MiB-aligned multiples of 2 MiB. (glibc hands blocks this size back to the kernel
// on free, mmap'd or trimmed from the heap top, so without the cache a 64K-element
// op faulted its output in on every call, costing as much as the op.) The cache is
// bounded (kCacheLimit) and emptied by lucid's empty_cache; a forked child starts
// empty.
constexpr size_t kHuge = size_t(2) << 20;
constexpr size_t kCachedMin = size_t(128) << 10;
constexpr size_t kCachedUnit = size_t(64) << 10;
constexpr size_t kCacheLimit = size_t(2) << 30;

class LargeBlockCache {
 public:
  static LargeBlockCache& get() {
    static bool registered = (pthread_atfork(nullptr, nullptr, [] { instance = nullptr; }), true);
    (void)registered;
    if (!instance) instance = new LargeBlockCache();  // never destroyed: blocks may be freed at exit
    return *instance;
  }

  void* take(size_t rounded) {
    std::lock_guard<std::mutex> g(mutex_);
    auto it = free_.find(rounded);
    if (it == free_.end()) return nullptr;
    void* p = it->second;
    free_.erase(it);
    cached_ -= rounded;
    return p;
  }

  void give(void* p, size_t rounded) {
    {
      std::lock_guard<std::mutex> g(mutex_);
      if (cached_ + rounded <= kCacheLimit) {
        free_.emplace(rounded, p);
        cached_ += rounded;
        return;
      }
    }
    std::free(p);
  }

  size_t cached_bytes() {
    std::lock_guard<std::mutex> g(mutex_);
    return cached_;
  }

  void release_all() {
    std::multimap<size_t, void*> drop;
    {
      std::lock_guard<std::mutex> g(mutex_);
      drop.swap(free_);
      cached_ = 0;
    }
    for (auto& [size, p] : drop) std::free(p);
  }

 private:
  static inline LargeBlockCache* instance = nullptr;
  std::mutex mutex_;
  std::multimap<size_t, void*> free_;
  size_t cached_ = 0;
};

struct HeapBlock {
  VersionCounter counter;
  void* bytes = nullptr;
  size_t cached_size = 0;  // non-zero: a large block that goes back to the cache
  ~HeapBlock() {
    if (cached_size) LargeBlockCache::get().give(bytes, cached_size);
    else std::free(bytes);
  }
};

}  // namespace

size_t cpu_cached_bytes() { return LargeBlockCache::get().cached_bytes(); }
void cpu_empty_cache() { LargeBlockCache::get().release_all(); }

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
  const size_t align = nbytes >= kHuge ? kHuge : 64;
  const bool cached = nbytes >= kCachedMin;
  const size_t unit = nbytes >= kHuge ? kHuge : cached ? kCachedUnit : align;
  const size_t rounded = (nbytes + unit - 1) / unit * unit;
  auto block = std::make_shared<HeapBlock>();
  void* p = nullptr;
  if (cached) p = LargeBlockCache::get().take(rounded);  // Note [Large-block cache]
  if (!p) {
    p = std::aligned_alloc(align, rounded);
    if (!p && cached) {  // memory may be sitting in the cache: give it back and retry
      LargeBlockCache::get().release_all();
      p = std::aligned_alloc(align, rounded);
    }
    LUCID_CHECK(p, RuntimeError, "out of host memory: failed to allocate ", nbytes, " bytes");
    if (align == kHuge) madvise(p, rounded, MADV_HUGEPAGE);  // advice only: failure is harmless
  }
  block->bytes = p;
  if (cached) block->cached_size = rounded;
  s.data = DataPtr(block, static_cast<std::byte*>(p));
  s.version = std::shared_ptr<VersionCounter>(block, &block->counter);
  return s;
}

}  // namespace lucid
