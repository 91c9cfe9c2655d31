// The pending lists of Note [Lazy GPU execution] (core/pending.h).
#include "core/pending.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <mutex>
#include <vector>

#include "core/error.h"

namespace lucid::pending {

namespace detail {
std::atomic<size_t> g_pending[kLists];
}

namespace {

struct DeviceList {
  std::mutex lock;  // guards ops and bytes (record may come from several threads)
  std::vector<std::unique_ptr<Work>> ops;
  size_t bytes = 0;
  // Held while a flush runs, so that two threads' flushes of one device run one
  // after the other, each list in order; and by a StreamTurn. Recursive: a thread
  // holding a StreamTurn may flush (a data_ptr() in the work it queues).
  std::recursive_mutex running;
  std::atomic<size_t> flushes{0};
  std::atomic<size_t> graph_runs{0};
  std::atomic<size_t> graph_abandoned{0};
  std::atomic<size_t> fused_calls{0};
  std::atomic<size_t> region_breaks{0};
  std::atomic<size_t> replays{0};
  std::atomic<size_t> fixed_replays{0};
};

DeviceList& list(int device) {
  static DeviceList lists[kLists];
  return lists[device];
}

bool switched_off(const char* variable) {
  const char* v = std::getenv(variable);
  return v && (std::strcmp(v, "0") == 0 || std::strcmp(v, "false") == 0 || std::strcmp(v, "off") == 0);
}

std::atomic<bool> g_lazy{!switched_off("LUCID_LAZY")};
std::atomic<bool> g_graphs{!switched_off("LUCID_CUDA_GRAPHS")};
std::atomic<bool> g_fusion{!switched_off("LUCID_FUSION")};
std::atomic<ListRunner> g_runner{nullptr};
std::atomic<ReplayRunner> g_replay_runner{nullptr};
std::atomic<ListRewriter> g_rewriter{nullptr};
std::atomic<BreakObserver> g_break_observer{nullptr};
thread_local bool t_in_flush = false;
thread_local int t_region_depth = 0;     // compiled regions this thread is inside
thread_local bool t_region_ending = false;  // the outermost region's own flush is running
thread_local size_t t_breaks = 0;           // breaks of this thread's outermost region

// Re-raises the error a kernel threw with the name of its op, keeping its type (the
// Python exception it maps to).
template <typename E>
[[noreturn]] void raise_as(const E& e, const char* op) {
  throw E(str_cat(e.what(), " (raised by ", op, ", which ran at a flush of the lazy GPU queue; with LUCID_LAZY=0 ",
                  "it is raised where ", op, " is called)"));
}

[[noreturn]] void rethrow_named(std::exception_ptr error, const char* op) {
  try {
    std::rethrow_exception(error);
  } catch (const OutOfMemoryError& e) {  // (before RuntimeError, its base)
    raise_as(e, op);
  } catch (const TypeError& e) {
    raise_as(e, op);
  } catch (const ValueError& e) {
    raise_as(e, op);
  } catch (const IndexError& e) {
    raise_as(e, op);
  } catch (const NotImplementedError& e) {
    raise_as(e, op);
  } catch (const RuntimeError& e) {
    raise_as(e, op);
  } catch (...) {
    throw;  // anything else as it is
  }
}

}  // namespace

bool lazy_enabled() { return g_lazy.load(std::memory_order_relaxed); }

void set_lazy(bool enabled) {
  if (!enabled) flush_all();
  g_lazy.store(enabled, std::memory_order_relaxed);
}

bool in_flush() { return t_in_flush; }

ListRunner set_list_runner(ListRunner runner) { return g_runner.exchange(runner, std::memory_order_acq_rel); }
void set_replay_runner(ReplayRunner runner) { g_replay_runner.store(runner, std::memory_order_release); }
void set_list_rewriter(ListRewriter rewriter) { g_rewriter.store(rewriter, std::memory_order_release); }
bool fusion_enabled() { return g_fusion.load(std::memory_order_relaxed); }
void set_fusion_enabled(bool enabled) { g_fusion.store(enabled, std::memory_order_relaxed); }
bool graphs_enabled() { return g_graphs.load(std::memory_order_relaxed); }
void set_graphs_enabled(bool enabled) { g_graphs.store(enabled, std::memory_order_relaxed); }

bool recording(int device) {
  const bool lazy = g_lazy.load(std::memory_order_relaxed) || t_region_depth;  // (a region records regardless)
  return lazy && !t_in_flush && device >= 0 && device < kMaxDevices;
}

bool recording_cpu() { return t_region_depth && !t_in_flush && fusion_enabled(); }

void record(int device, std::unique_ptr<Work> work, size_t new_bytes) {
  DeviceList& l = list(device);
  bool full;
  {
    std::lock_guard g(l.lock);
    l.ops.push_back(std::move(work));
    l.bytes += new_bytes;
    detail::g_pending[device].store(l.ops.size(), std::memory_order_relaxed);
    full = l.ops.size() >= (t_region_depth ? kMaxRegionOps : kMaxPendingOps) || l.bytes >= kMaxPendingBytes;
  }
  if (full) flush(device);
}

namespace {

// The device's list, taken out of it; the caller holds l.running.
std::vector<std::unique_ptr<Work>> take(DeviceList& l, int device) {
  std::vector<std::unique_ptr<Work>> ops;
  std::lock_guard g(l.lock);
  ops.swap(l.ops);
  l.bytes = 0;
  detail::g_pending[device].store(0, std::memory_order_relaxed);
  return ops;
}

uint64_t signature_of(const std::vector<std::unique_ptr<Work>>& ops) {
  uint64_t signature = ops.size();
  for (const std::unique_ptr<Work>& w : ops) signature = (signature ^ w->signature()) * 0x100000001b3ull;
  return signature;
}

// Runs `ops` in order, fused first when `rewrite`; releases each call once queued
// unless `keep` (a capture, which runs again). The caller holds l.running.
void run_ops(DeviceList& l, int device, std::vector<std::unique_ptr<Work>>& ops, bool rewrite, bool keep) {
  if (ops.empty()) return;
  l.flushes.fetch_add(1, std::memory_order_relaxed);
  t_in_flush = true;
  struct Leave {
    ~Leave() { t_in_flush = false; }
  } leave;
  // A call that throws is skipped and the rest still run: the calls after it may not
  // depend on it, and their tensors must not be left unwritten. The first error is
  // raised once the list has run.
  struct Pass {
    std::vector<std::unique_ptr<Work>>* ops;
    std::exception_ptr first_error;
    const char* failed_op = nullptr;
    void run(bool release) {
      first_error = nullptr;
      for (std::unique_ptr<Work>& w : *ops) {
        try {
          w->run();
        } catch (...) {
          if (!first_error) first_error = std::current_exception(), failed_op = w->name();
        }
        if (release) w.reset();  // releases its operands as soon as their kernel is queued
      }
    }
  } pass{&ops, nullptr, nullptr};
  if (const ListRewriter rewriter = g_rewriter.load(std::memory_order_acquire); rewrite && rewriter && fusion_enabled())
    l.fused_calls.fetch_add(rewriter(device, ops), std::memory_order_relaxed);
  const ListRunner runner = device == kCpu ? nullptr : g_runner.load(std::memory_order_acquire);
  ListRun how = ListRun::Declined;
  if (runner && ops.size() >= kMinGraphCalls && graphs_enabled()) {
    const uint64_t signature = signature_of(ops);
    // The runner keeps every call's operands until it is done (a graph built from the
    // calls runs after they return); an abandoned attempt executed nothing.
    how = runner(device, signature, ops.size(), [](void* p) {
      static_cast<Pass*>(p)->run(false);
      return !static_cast<Pass*>(p)->first_error;
    }, &pass);
    if (how == ListRun::Ran) l.graph_runs.fetch_add(1, std::memory_order_relaxed);
    if (how == ListRun::Abandoned) l.graph_abandoned.fetch_add(1, std::memory_order_relaxed);
  }
  if (how != ListRun::Ran) pass.run(!keep);
  if (!keep) ops.clear();  // (a graph the runner launched is queued ahead of any reuse of their memory)
  if (pass.first_error) rethrow_named(pass.first_error, pass.failed_op);
}

// Runs the device's list; the caller holds l.running.
void run_locked(DeviceList& l, int device) {
  std::vector<std::unique_ptr<Work>> ops = take(l, device);
  if (ops.empty()) return;
  // (The CPU's list is flushed by every CPU op it cannot fuse: not a break.)
  if (t_region_depth && !t_region_ending && device != kCpu) {
    l.region_breaks.fetch_add(1, std::memory_order_relaxed);
    ++t_breaks;
    if (const BreakObserver observe = g_break_observer.load(std::memory_order_acquire)) observe(device);
  }
  run_ops(l, device, ops, true, false);
}

}  // namespace

void flush_slow(int device) {
  DeviceList& l = list(device);
  std::lock_guard run(l.running);
  run_locked(l, device);
}

StreamTurn::StreamTurn(int device) {
  if (in_flush() || device < 0 || device >= kMaxDevices) return;
  DeviceList& l = list(device);
  l.running.lock();
  device_ = device;
  try {
    if (has_pending(device)) run_locked(l, device);
  } catch (...) {
    l.running.unlock();
    throw;
  }
}

StreamTurn::~StreamTurn() {
  if (device_ >= 0) list(device_).running.unlock();
}

void flush_all() {
  for (int d = 0; d < kLists; ++d) flush(d);
}

void flush_at_boundary() {
  if (!t_region_depth) flush_all();
}

void enter_region() {
  if (!t_region_depth++) t_breaks = 0;
}

void exit_region() { exit_region_reporting(false); }

RegionEnd exit_region_reporting(bool capture) {
  LUCID_CHECK(t_region_depth > 0, RuntimeError, "internal: a compiled region ended that had not begun");
  RegionEnd end;
  if (--t_region_depth) return end;
  struct Ending {
    Ending() { t_region_ending = true; }
    ~Ending() { t_region_ending = false; }
  } ending;
  end.breaks = t_breaks;
  int devices = 0;
  for (int d = 0; d < kMaxDevices; ++d) devices += has_pending(d);
  // The first error of any device's list is raised once every list has run. (The CPU's
  // list runs first: it is never captured, and no GPU call can be waiting for it.)
  std::exception_ptr first_error;
  try {
    flush(kCpu);
  } catch (...) {
    first_error = std::current_exception();
  }
  for (int d = 0; d < kMaxDevices; ++d) {
    if (!has_pending(d)) continue;
    DeviceList& l = list(d);
    std::lock_guard run(l.running);
    std::vector<std::unique_ptr<Work>> ops = take(l, d);
    const uint64_t signature = signature_of(ops);
    end.signature = (end.signature ^ signature) * 0x100000001b3ull;
    try {
      const bool replayable = std::all_of(ops.begin(), ops.end(), [](const auto& w) { return w->replayable(); });
      if (capture && devices == 1 && end.breaks == 0 && replayable) {
        auto kept = std::make_unique<Capture>();
        kept->device = d;
        kept->signature = signature;
        kept->ops = std::move(ops);
        end.capture = std::move(kept);
        run_ops(l, d, end.capture->ops, true, true);  // fused once, here; kept as fused
      } else {
        run_ops(l, d, ops, true, false);
      }
    } catch (...) {
      end.capture.reset();  // a capture whose run raised is not kept
      if (!first_error) first_error = std::current_exception();
    }
  }
  if (first_error) std::rethrow_exception(first_error);
  return end;
}

void replay(Capture& capture) {
  flush(capture.device);  // what was recorded before (the new inputs' copies)
  DeviceList& l = list(capture.device);
  std::lock_guard run(l.running);
  for (std::unique_ptr<Work>& w : capture.ops) w->refresh();
  l.replays.fetch_add(1, std::memory_order_relaxed);
  const ReplayRunner runner = g_replay_runner.load(std::memory_order_acquire);
  if (runner && !capture.fixed_declined && graphs_enabled() && !capture.ops.empty()) {
    struct Calls {
      std::vector<std::unique_ptr<Work>>* ops;
      std::exception_ptr first_error;
      const char* failed_op = nullptr;
    } calls{&capture.ops, nullptr, nullptr};
    auto run_calls = [](void* ctx, size_t begin, size_t end) {
      auto& c = *static_cast<Calls*>(ctx);
      bool clean = true;
      for (size_t i = begin; i < end; ++i) {
        try {
          (*c.ops)[i]->run();
        } catch (...) {
          clean = false;
          if (!c.first_error) c.first_error = std::current_exception(), c.failed_op = (*c.ops)[i]->name();
        }
      }
      return clean;
    };
    t_in_flush = true;
    struct Leave {
      ~Leave() { t_in_flush = false; }
    } leave;
    if (runner(capture.device, capture.ops, capture.fixed, run_calls, &calls)) {
      l.flushes.fetch_add(1, std::memory_order_relaxed);
      l.graph_runs.fetch_add(1, std::memory_order_relaxed);
      l.fixed_replays.fetch_add(1, std::memory_order_relaxed);
      if (calls.first_error) rethrow_named(calls.first_error, calls.failed_op);
      return;
    }
    capture.fixed_declined = true;
    capture.fixed.reset();
  }
  run_ops(l, capture.device, capture.ops, false, true);
}

bool in_region() { return t_region_depth > 0; }

void set_break_observer(BreakObserver observer) { g_break_observer.store(observer, std::memory_order_release); }

Stats stats(int device) {
  LUCID_CHECK(device >= 0 && device < kLists, RuntimeError, "invalid GPU index ", device);
  DeviceList& l = list(device);
  std::lock_guard g(l.lock);
  return {l.ops.size(), l.bytes, l.flushes.load(std::memory_order_relaxed),
          l.graph_runs.load(std::memory_order_relaxed), l.graph_abandoned.load(std::memory_order_relaxed),
          l.fused_calls.load(std::memory_order_relaxed), l.region_breaks.load(std::memory_order_relaxed),
          l.replays.load(std::memory_order_relaxed), l.fixed_replays.load(std::memory_order_relaxed)};
}

}  // namespace lucid::pending
