// The CPU thread pool: every index covered exactly once, small ranges inline,
// nesting inline, exceptions carried to the caller, thread count changes.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <stdexcept>
#include <thread>
#include <vector>

#include "core/parallel.h"

using namespace lucid::cpu;

TEST(Parallel, CoversEveryIndexOnce) {
  for (int64_t n : {int64_t(1), int64_t(1000), int64_t(1) << 20, (int64_t(1) << 20) + 7}) {
    std::vector<std::atomic<int>> hits(static_cast<size_t>(n));
    parallel_for(n, 1024, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) hits[size_t(i)].fetch_add(1);
    });
    for (int64_t i = 0; i < n; ++i) ASSERT_EQ(hits[size_t(i)].load(), 1) << "n=" << n << " i=" << i;
  }
}

TEST(Parallel, SmallRangesRunOnTheCaller) {
  std::thread::id caller = std::this_thread::get_id(), ran;
  parallel_for(100, 1024, [&](int64_t b, int64_t e) {
    EXPECT_EQ(b, 0);
    EXPECT_EQ(e, 100);
    ran = std::this_thread::get_id();
  });
  EXPECT_EQ(ran, caller);
}

TEST(Parallel, NestedCallsRunInline) {
  std::atomic<int64_t> total{0};
  parallel_for(1 << 16, 1024, [&](int64_t b, int64_t e) {
    parallel_for(e - b, 1, [&](int64_t bb, int64_t ee) { total.fetch_add(ee - bb); });
  });
  EXPECT_EQ(total.load(), 1 << 16);
}

TEST(Parallel, ExceptionsReachTheCaller) {
  EXPECT_THROW(parallel_for(1 << 20, 1024, [](int64_t b, int64_t) {
                 if (b > 0) throw std::runtime_error("piece failed");
                 if (pool_threads() == 1) throw std::runtime_error("single thread");
               }),
               std::runtime_error);
  std::atomic<int64_t> total{0};  // the pool still works afterwards
  parallel_for(1 << 20, 1024, [&](int64_t b, int64_t e) { total.fetch_add(e - b); });
  EXPECT_EQ(total.load(), 1 << 20);
}

TEST(Parallel, ThreadCountCanChange) {
  int before = pool_threads();
  for (int n : {1, 3, before}) {
    set_pool_threads(n);
    EXPECT_EQ(pool_threads(), n);
    std::atomic<int64_t> total{0};
    parallel_for(1 << 20, 1024, [&](int64_t b, int64_t e) { total.fetch_add(e - b); });
    EXPECT_EQ(total.load(), 1 << 20);
  }
}

// Back-to-back jobs from several submitting threads, with workers that spin between
// jobs and some that sleep: a worker that wakes late must never claim a piece of a
// newer job under an older one's bookkeeping (each job's pieces run exactly once).
TEST(Parallel, BackToBackJobsFromSeveralThreads) {
  int before = pool_threads();
  set_pool_threads(4);
  auto submit = [](int jobs, std::atomic<int64_t>& bad) {
    for (int j = 0; j < jobs; ++j) {
      int64_t n = 2048 + (j % 7) * 1024;
      std::atomic<int64_t> covered{0};
      parallel_for(n, 1024, [&](int64_t b, int64_t e) { covered.fetch_add(e - b); });
      if (covered.load() != n) bad.fetch_add(1);
      if (j % 500 == 0) std::this_thread::sleep_for(std::chrono::milliseconds(1));  // let workers sleep
    }
  };
  std::atomic<int64_t> bad{0};
  std::thread other([&] { submit(3000, bad); });
  submit(3000, bad);
  other.join();
  EXPECT_EQ(bad.load(), 0);
  set_pool_threads(before);
}
