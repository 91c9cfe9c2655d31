// The engine's CPU thread pool: persistent workers that split a range among
// themselves and the calling thread. Kernels call parallel_for for large sizes
// only; small ones run inline, with no allocation and no synchronisation.
#pragma once

#include <cstdint>
#include <functional>

namespace lucid::cpu {

// Runs fn(begin, end) over pieces of [0, n) that together cover it exactly once,
// each piece at least `grain` long (except the last). Runs fn(0, n) on the calling
// thread when one thread is configured, when n < 2 * grain, or when called from
// inside another parallel_for. Rethrows the first exception a piece threw, after
// every piece has finished. A region of at least 2 * grain (one worth threads) runs
// with the BlockingHooks' lock released, whatever the thread count, so that a long
// kernel never holds up the caller's other Python threads.
void parallel_for(int64_t n, int64_t grain, const std::function<void(int64_t, int64_t)>& fn);

// A parallel region may let the caller's other threads run meanwhile: the Python
// bindings install hooks that release the GIL for the region's duration and take
// it back after (the core has no Python). release returns what reacquire needs, or
// nullptr when there was nothing to release (the thread did not hold the GIL).
struct BlockingHooks {
  void* (*release)() = nullptr;
  void (*reacquire)(void*) = nullptr;
};
void set_blocking_hooks(BlockingHooks hooks);

// The BlockingHooks' lock (the GIL) released for a scope, when `when` holds: for
// long work that runs on the calling thread alone (one configured thread, or a
// product too small to split), which parallel_for does not see.
class LetOthersRun {
 public:
  explicit LetOthersRun(bool when = true);
  ~LetOthersRun();
  LetOthersRun(const LetOthersRun&) = delete;
  LetOthersRun& operator=(const LetOthersRun&) = delete;

 private:
  void* state_ = nullptr;
};

// Whether the calling thread is running a piece of a parallel_for (a nested
// parallel_for would run inline).
bool in_parallel();

// Threads the pool uses (the caller counts as one); set by lucid.set_num_threads,
// which also sets the BLAS library's count so the two never oversubscribe.
int pool_threads();
void set_pool_threads(int n);

// Elements below which an elementwise pass is not worth splitting (the cost of
// waking the workers, ~ a few microseconds, against ~1 ns per element).
inline constexpr int64_t kParallelGrain = 32768;

}  // namespace lucid::cpu
