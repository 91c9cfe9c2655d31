// The large-block cache (Note [Large-block cache] in core/storage.cpp): freed blocks
// of 128 KiB and more come back for the same rounded size, small ones are not
// cached, and empty_cache releases everything.
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
  { CpuStorage s = allocate_cpu((128 << 10) - 1); }
  EXPECT_EQ(cpu_cached_bytes(), 0u);
}

TEST(LargeBlockCache, MediumBlocksRoundToWholeUnits) {
  cpu_empty_cache();
  std::byte* first;
  {
    CpuStorage s = allocate_cpu((256 << 10) + 1);  // 256 KiB + 1 byte: five 64 KiB units
    first = s.ptr();
    s.ptr()[s.nbytes - 1] = std::byte{1};
  }
  EXPECT_EQ(cpu_cached_bytes(), size_t(320) << 10);
  {
    CpuStorage s = allocate_cpu(300 << 10);  // the same five units
    EXPECT_EQ(s.ptr(), first);
  }
  {
    CpuStorage s = allocate_cpu(200 << 10);  // four units: not that block
    EXPECT_NE(s.ptr(), first);
  }
  cpu_empty_cache();
  EXPECT_EQ(cpu_cached_bytes(), 0u);
}
