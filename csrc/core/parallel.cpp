#include "core/parallel.h"

#include <pthread.h>
#include <sched.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <condition_variable>
#include <exception>
#include <memory>
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
// One job at a time (callers serialise on `submit_`). A job is split into equal
// pieces, one per thread, and piece p belongs to thread p (the caller is thread 0):
// the same thread gets the same part of the data on every call, so a kernel run
// again over the same tensors finds its part in its own core's cache (stealing
// pieces first-come first-served halved the speed of 256K-element ops). A piece
// whose owner is asleep, or has not started after kSteal, is run by the caller.
//
// Waking a sleeping thread (a futex) costs 5-50 us, as much as a 64K-element add,
// so after a job a worker spins for kSpin before it sleeps on a condition variable,
// and the caller spins while it waits for the last piece: a kernel followed by
// another (a chain of ops) hands its workers the next job in well under a
// microsecond. Spinning yields the core (sched_yield) after a short while, so a
// spinning worker never keeps a runnable thread off a core it needs.
//
// The job lives on the caller's stack. A worker publishes the job it is about to
// read in its slot and re-checks that it is still current (a hazard pointer); the
// caller retracts the job and waits until no slot names it before returning.
constexpr int kMaxPieces = 256;  // threads the pool will use at most

struct Job {
  const std::function<void(int64_t, int64_t)>* fn;
  int64_t n, pieces;
  std::atomic<int64_t> pending;
  std::atomic<bool> claimed[kMaxPieces];
  std::exception_ptr error;  // guarded by Pool::state_
};

struct alignas(64) Slot {
  std::atomic<Job*> using_{nullptr};
  std::atomic<bool> sleeping{false};
};

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
    n = std::min(n, kMaxPieces);
    threads_.store(n);
    while (int(workers_.size()) < n - 1) {  // workers beyond n - 1 stay idle
      int id = int(workers_.size());
      workers_.emplace_back([this, id] { work(id); });
      workers_.back().detach();
    }
  }

  void run(int64_t n, int64_t grain, const std::function<void(int64_t, int64_t)>& fn) {
    int64_t pieces = std::min<int64_t>(threads(), n / std::max<int64_t>(grain, 1));
    if (pieces < 2 || t_in_parallel) return fn(0, n);
    std::lock_guard<std::mutex> submit(submit_);
    Job job;
    job.fn = &fn;
    job.n = n;
    job.pieces = pieces;
    job.pending.store(pieces, std::memory_order_relaxed);
    for (int64_t p = 0; p < pieces; ++p) job.claimed[p].store(false, std::memory_order_relaxed);
    current_.store(&job, std::memory_order_seq_cst);
    seq_.fetch_add(1, std::memory_order_seq_cst);
    if (sleepers_.load(std::memory_order_seq_cst) > 0) {
      std::lock_guard<std::mutex> g(state_);
      wake_.notify_all();
    }
    t_in_parallel = true;
    run_piece(job, 0);
    // The others' pieces: run those whose owner sleeps (or is slow) here.
    const auto start = std::chrono::steady_clock::now();
    for (int round = 0; job.pending.load(std::memory_order_acquire) != 0; ++round) {
      const bool late = round > kPauseRounds && std::chrono::steady_clock::now() - start > kSteal;
      for (int64_t p = 1; p < pieces; ++p)
        if (!job.claimed[p].load(std::memory_order_relaxed) &&
            (late || slots_[p - 1].sleeping.load(std::memory_order_relaxed)))
          run_piece(job, p);
      if (round < kPauseRounds) {
        cpu_relax();
      } else if (std::chrono::steady_clock::now() - start < kSpin) {
        sched_yield();
      } else {
        std::unique_lock<std::mutex> lock(state_);
        done_.wait(lock, [&] { return job.pending.load(std::memory_order_acquire) == 0; });
      }
    }
    t_in_parallel = false;
    current_.store(nullptr, std::memory_order_seq_cst);
    for (size_t w = 0; w < workers_.size(); ++w)  // no worker may still be reading the job
      while (slots_[w].using_.load(std::memory_order_seq_cst) == &job) cpu_relax();
    if (job.error) std::rethrow_exception(job.error);
  }

 private:
  static constexpr auto kSpin = std::chrono::microseconds(200);
  static constexpr auto kSteal = std::chrono::microseconds(50);
  static constexpr int kPauseRounds = 2000;  // ~ a few us of pause before yielding

  Pool() : threads_(std::min(kMaxPieces, default_threads())), slots_(new Slot[kMaxPieces]) {
    resize(threads());
  }

  // OMP_NUM_THREADS when it is a positive number, as torch reads it (so that
  // `OMP_NUM_THREADS=1 python train.py`, or several test workers on one machine, do
  // not each start a thread per core); else one thread per core.
  static int default_threads() {
    if (const char* env = std::getenv("OMP_NUM_THREADS")) {
      char* end = nullptr;
      const long n = std::strtol(env, &end, 10);
      if (end != env && *end == '\0' && n > 0) return int(std::min<long>(n, kMaxPieces));
    }
    return std::max(1, int(std::thread::hardware_concurrency()));
  }

  void run_piece(Job& job, int64_t p) {
    if (job.claimed[p].exchange(true, std::memory_order_acq_rel)) return;  // someone has it
    const int64_t n = job.n, pieces = job.pieces;
    try {
      (*job.fn)(n * p / pieces, n * (p + 1) / pieces);
    } catch (...) {
      std::lock_guard<std::mutex> g(state_);
      if (!job.error) job.error = std::current_exception();
    }
    if (job.pending.fetch_sub(1, std::memory_order_acq_rel) == 1) {
      std::lock_guard<std::mutex> g(state_);
      done_.notify_all();
    }
  }

  void work(int id) {
    Slot& slot = slots_[id];
    uint64_t seen = 0;
    auto has_job = [&] { return seq_.load(std::memory_order_seq_cst) != seen; };
    for (;;) {
      bool ready = false;
      for (int i = 0; i < kPauseRounds && !(ready = has_job()); ++i) cpu_relax();
      for (auto deadline = std::chrono::steady_clock::now() + kSpin;
           !ready && std::chrono::steady_clock::now() < deadline;)
        if (!(ready = has_job())) sched_yield();
      if (!ready) {
        std::unique_lock<std::mutex> lock(state_);
        slot.sleeping.store(true, std::memory_order_seq_cst);
        sleepers_.fetch_add(1, std::memory_order_seq_cst);
        wake_.wait(lock, has_job);
        sleepers_.fetch_sub(1, std::memory_order_relaxed);
        slot.sleeping.store(false, std::memory_order_seq_cst);
      }
      seen = seq_.load(std::memory_order_seq_cst);
      Job* job = current_.load(std::memory_order_seq_cst);
      if (!job) continue;
      slot.using_.store(job, std::memory_order_seq_cst);
      if (current_.load(std::memory_order_seq_cst) == job && id + 1 < job->pieces) {
        t_in_parallel = true;
        run_piece(*job, id + 1);
        t_in_parallel = false;
      }
      slot.using_.store(nullptr, std::memory_order_seq_cst);
    }
  }

  static inline Pool* instance = nullptr;
  std::mutex submit_;  // one job at a time
  std::mutex state_;   // guards sleeping, waking and job errors
  std::condition_variable wake_, done_;
  std::vector<std::thread> workers_;
  std::atomic<int> threads_;
  std::atomic<int> sleepers_{0};
  std::atomic<uint64_t> seq_{0};  // bumped per job: what spinning workers watch
  std::atomic<Job*> current_{nullptr};
  std::unique_ptr<Slot[]> slots_;
};

BlockingHooks g_blocking;

}  // namespace

LetOthersRun::LetOthersRun(bool when) : state_(when && g_blocking.release ? g_blocking.release() : nullptr) {}

LetOthersRun::~LetOthersRun() {
  if (state_) g_blocking.reacquire(state_);
}

void set_blocking_hooks(BlockingHooks hooks) { g_blocking = hooks; }

void parallel_for(int64_t n, int64_t grain, const std::function<void(int64_t, int64_t)>& fn) {
  if (n <= 0) return;
  if (n < 2 * grain || t_in_parallel) return fn(0, n);
  LetOthersRun unlocked;
  Pool::get().run(n, grain, fn);
}

bool in_parallel() { return t_in_parallel; }

int pool_threads() { return Pool::get().threads(); }

void set_pool_threads(int n) { Pool::get().resize(std::max(1, n)); }

}  // namespace lucid::cpu
