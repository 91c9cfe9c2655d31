#include "backend/cpu/parallel.h"

#include <pthread.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace lucid::cpu {

namespace {

thread_local bool t_in_parallel = false;

// Note [Thread pool]
// One job at a time (callers serialise on `submit_`): the job is a function, a
// piece count and an atomic next-piece counter. Workers sleep on a condition
// variable between jobs and wake on a generation change; every thread, the caller
// included, takes pieces until none are left, and the caller waits for the others
// to finish theirs. Static pieces of equal size suit elementwise kernels, whose
// cost per element is uniform.
class Pool {
 public:
  // Never destroyed: workers sleep in it until the process ends. A forked child
  // (a DataLoader worker) has none of the parent's threads and maybe a mutex some
  // thread held at fork time, so it starts a fresh pool.
  static Pool& get() {
    static bool registered = (pthread_atfork(nullptr, nullptr, [] { instance = nullptr; }), true);
    (void)registered;
    if (!instance) instance = new Pool();
    return *instance;
  }

  int threads() {
    std::lock_guard<std::mutex> g(state_);
    return threads_;
  }

  void resize(int n) {
    std::lock_guard<std::mutex> submit(submit_);
    {
      std::lock_guard<std::mutex> g(state_);
      threads_ = n;
    }
    // Workers beyond n - 1 stay asleep: they only take jobs whose `workers` count
    // includes them. New ones start on demand.
    std::lock_guard<std::mutex> g(state_);
    while (int(workers_.size()) < n - 1) {
      int id = int(workers_.size());
      workers_.emplace_back([this, id] { work(id); });
      workers_.back().detach();
    }
  }

  void run(int64_t n, int64_t grain, const std::function<void(int64_t, int64_t)>& fn) {
    int threads = this->threads();
    int64_t pieces = std::min<int64_t>(threads, n / std::max<int64_t>(grain, 1));
    if (pieces < 2 || t_in_parallel) return fn(0, n);
    std::lock_guard<std::mutex> submit(submit_);
    {
      std::lock_guard<std::mutex> g(state_);
      fn_ = &fn;
      n_ = n;
      pieces_ = pieces;
      next_.store(0);
      pending_ = pieces;
      error_ = nullptr;
      active_workers_ = int(pieces) - 1;
      ++generation_;
    }
    wake_.notify_all();
    take_pieces();
    std::unique_lock<std::mutex> lock(state_);
    done_.wait(lock, [this] { return pending_ == 0; });
    fn_ = nullptr;
    if (error_) std::rethrow_exception(error_);
  }

 private:
  Pool() : threads_(std::max(1, int(std::thread::hardware_concurrency()))) { resize(threads_); }

  void take_pieces() {
    t_in_parallel = true;
    for (int64_t p; (p = next_.fetch_add(1)) < pieces_;) {
      int64_t begin = n_ * p / pieces_, end = n_ * (p + 1) / pieces_;
      try {
        (*fn_)(begin, end);
      } catch (...) {
        std::lock_guard<std::mutex> g(state_);
        if (!error_) error_ = std::current_exception();
      }
      std::lock_guard<std::mutex> g(state_);
      if (--pending_ == 0) done_.notify_all();
    }
    t_in_parallel = false;
  }

  void work(int id) {
    uint64_t seen = 0;
    for (;;) {
      {
        std::unique_lock<std::mutex> lock(state_);
        wake_.wait(lock, [&] { return generation_ != seen && id < active_workers_; });
        seen = generation_;
      }
      take_pieces();
    }
  }

  static inline Pool* instance = nullptr;
  std::mutex submit_;  // one job at a time
  std::mutex state_;
  std::condition_variable wake_, done_;
  std::vector<std::thread> workers_;
  int threads_;
  int active_workers_ = 0;
  uint64_t generation_ = 0;
  const std::function<void(int64_t, int64_t)>* fn_ = nullptr;
  int64_t n_ = 0, pieces_ = 0, pending_ = 0;
  std::atomic<int64_t> next_{0};
  std::exception_ptr error_;
};

}  // namespace

void parallel_for(int64_t n, int64_t grain, const std::function<void(int64_t, int64_t)>& fn) {
  if (n <= 0) return;
  if (n < 2 * grain) return fn(0, n);
  Pool::get().run(n, grain, fn);
}

int pool_threads() { return Pool::get().threads(); }

void set_pool_threads(int n) { Pool::get().resize(std::max(1, n)); }

}  // namespace lucid::cpu
