// The large-block cache (Note [Large-block cache] in core/storage.cpp): freed large
// blocks come back for the same size, small ones are not cached, and empty_cache
// releases everything.
#include <gtest/gtest.h>

#include "core/storage.h"

using namespace lucid;

TEST(LargeBlockCache, ReusesFreedBlocksOfTheSameSize) {
  cpu_empty_cache();
  const size_t big = size_t(6) << 20;
  std::byte* first;
  {
    CpuStorage s = allocate_cpu(big);
    first = s.ptr();
    s.ptr()[big - 1] = std::byte{7};  // the whole block is usable
  }
  EXPECT_EQ(cpu_cached_bytes(), big);
  {
    CpuStorage s = allocate_cpu(big - 100);  // rounds to the same 2 MiB multiple
    EXPECT_EQ(s.ptr(), first);
    EXPECT_EQ(s.nbytes, big - 100);
    EXPECT_EQ(cpu_cached_bytes(), 0u);
    EXPECT_EQ(s.version->value.load(), 0u);  // a fresh counter for the new storage
  }
  cpu_empty_cache();
  EXPECT_EQ(cpu_cached_bytes(), 0u);
}

TEST(LargeBlockCache, SmallBlocksAreNotCached) {
  cpu_empty_cache();
  { CpuStorage s = allocate_cpu(1000); }
  { CpuStorage s = allocate_cpu(1 << 20); }
  EXPECT_EQ(cpu_cached_bytes(), 0u);
}
