#include "core/parallel.h"

#include <pthread.h>
#include <sched.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace lucid::cpu {

namespace {

thread_local bool t_in_parallel = false;

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

// Note [Thread pool]
// One job at a time (callers serialise on `submit_`): the job is a function, a
// piece count and a claim counter. Every thread, the caller included, claims
// pieces until none are left; the caller then waits for the others to finish
// theirs. Static pieces of equal size suit elementwise kernels, whose cost per
// element is uniform.
//
// Waking a sleeping thread (a futex) costs 5-50 us, as much as a 64K-element add
// takes, so after a job a worker spins for kSpin before it sleeps on a condition
// variable, and the caller spins while it waits for the last piece: a kernel
// followed by another (the common case: a chain of ops) hands its workers the next
// job in well under a microsecond. Spinning yields the core (sched_yield) after a
// short while, so a spinning worker never keeps a runnable thread — BLAS's, or
// another process's — off a core it needs.
//
// Claiming is one compare-and-swap on a word that packs the job's generation, its
// piece count and the next piece: a worker that read an old job and runs late can
// neither claim a piece of the new job nor count the new job's pieces against the
// old one (with the count in a separate field, a late worker could read the new
// count while the word still named the old job, and run a piece that was not there).
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

  int threads() const { return threads_.load(std::memory_order_relaxed); }

  void resize(int n) {
    std::lock_guard<std::mutex> submit(submit_);
    threads_.store(n);
    // Workers beyond n - 1 stay idle: they only take jobs whose `workers` count
    // includes them. New ones start on demand.
    while (int(workers_.size()) < n - 1) {
      int id = int(workers_.size());
      workers_.emplace_back([this, id] { work(id); });
      workers_.back().detach();
    }
  }

  void run(int64_t n, int64_t grain, const std::function<void(int64_t, int64_t)>& fn) {
    int64_t pieces = std::min<int64_t>({threads(), n / std::max<int64_t>(grain, 1), kMaxPieces});
    if (pieces < 2 || t_in_parallel) return fn(0, n);
    std::lock_guard<std::mutex> submit(submit_);
    fn_.store(&fn, std::memory_order_relaxed);
    n_.store(n, std::memory_order_relaxed);
    pending_.store(pieces, std::memory_order_relaxed);
    error_ = nullptr;
    active_workers_.store(int(pieces) - 1, std::memory_order_relaxed);
    uint32_t gen = ++generation_;
    claim_.store(claim_word(gen, pieces, 0), std::memory_order_release);  // publishes the fields above
    job_.store(gen, std::memory_order_seq_cst);
    if (sleepers_.load(std::memory_order_seq_cst) > 0) {
      std::lock_guard<std::mutex> g(state_);
      wake_.notify_all();
    }
    take_pieces(gen);
    if (!spin_until([this] { return pending_.load(std::memory_order_acquire) == 0; })) {
      std::unique_lock<std::mutex> lock(state_);
      done_.wait(lock, [this] { return pending_.load(std::memory_order_acquire) == 0; });
    }
    if (error_) std::rethrow_exception(error_);
  }

 private:
  static constexpr int64_t kMaxPieces = 0xffff;  // the claim word's piece fields
  static constexpr auto kSpin = std::chrono::microseconds(200);
  static constexpr int kPauseRounds = 2000;  // ~ a few us of pause before yielding

  Pool() : threads_(std::max(1, int(std::thread::hardware_concurrency()))) { resize(threads()); }

  template <class Ready>
  static bool spin_until(Ready ready) {
    for (int i = 0; i < kPauseRounds; ++i) {
      if (ready()) return true;
      cpu_relax();
    }
    auto deadline = std::chrono::steady_clock::now() + kSpin;
    while (std::chrono::steady_clock::now() < deadline) {
      if (ready()) return true;
      sched_yield();
    }
    return ready();
  }

  // The claim word: generation (32 bits) | piece count (16) | next piece (16).
  static uint64_t claim_word(uint32_t gen, int64_t pieces, int64_t next) {
    return uint64_t(gen) << 32 | uint64_t(pieces) << 16 | uint64_t(next);
  }

  // Claims and runs pieces of job `gen` until none are left (or a newer job began).
  void take_pieces(uint32_t gen) {
    t_in_parallel = true;
    uint64_t c = claim_.load(std::memory_order_acquire);
    for (;;) {
      int64_t pieces = int64_t(c >> 16 & 0xffff), p = int64_t(c & 0xffff);
      if (uint32_t(c >> 32) != gen || p >= pieces) break;
      if (!claim_.compare_exchange_weak(c, c + 1, std::memory_order_acq_rel)) continue;
      // fn_ and n_ were written before the claim word was published, and cannot
      // change until this piece is done (the job ends when pending_ reaches zero).
      int64_t n = n_.load(std::memory_order_relaxed);
      try {
        (*fn_.load(std::memory_order_relaxed))(n * p / pieces, n * (p + 1) / pieces);
      } catch (...) {
        std::lock_guard<std::mutex> g(state_);
        if (!error_) error_ = std::current_exception();
      }
      if (pending_.fetch_sub(1, std::memory_order_acq_rel) == 1) {
        std::lock_guard<std::mutex> g(state_);
        done_.notify_all();
      }
      c = claim_.load(std::memory_order_acquire);
    }
    t_in_parallel = false;
  }

  void work(int id) {
    uint32_t seen = 0;
    for (;;) {
      auto has_job = [&] {
        uint32_t gen = job_.load(std::memory_order_seq_cst);
        if (gen == seen) return false;
        if (id < active_workers_.load(std::memory_order_relaxed)) return true;
        seen = gen;  // a job for fewer threads: not ours
        return false;
      };
      if (!spin_until(has_job)) {
        std::unique_lock<std::mutex> lock(state_);
        sleepers_.fetch_add(1, std::memory_order_seq_cst);
        wake_.wait(lock, has_job);
        sleepers_.fetch_sub(1, std::memory_order_relaxed);
      }
      seen = job_.load(std::memory_order_acquire);
      take_pieces(seen);
    }
  }

  static inline Pool* instance = nullptr;
  std::mutex submit_;  // one job at a time
  std::mutex state_;   // guards sleeping, waking and error_
  std::condition_variable wake_, done_;
  std::vector<std::thread> workers_;
  std::atomic<int> threads_;
  std::atomic<int> active_workers_{0};
  std::atomic<int> sleepers_{0};
  uint32_t generation_ = 0;  // written by the submitting thread only
  std::atomic<uint32_t> job_{0};
  std::atomic<uint64_t> claim_{0};
  std::atomic<const std::function<void(int64_t, int64_t)>*> fn_{nullptr};
  std::atomic<int64_t> n_{0}, pending_{0};
  std::exception_ptr error_;
};

}  // namespace

void parallel_for(int64_t n, int64_t grain, const std::function<void(int64_t, int64_t)>& fn) {
  if (n <= 0) return;
  if (n < 2 * grain) return fn(0, n);
  Pool::get().run(n, grain, fn);
}

bool in_parallel() { return t_in_parallel; }

int pool_threads() { return Pool::get().threads(); }

void set_pool_threads(int n) { Pool::get().resize(std::max(1, n)); }

}  // namespace lucid::cpu
