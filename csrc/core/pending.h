// Note [Lazy GPU execution]
//
// A GPU op does not run when it is called: launch() (ops/launch.cpp) checks it, lets
// the op allocate its outputs and bump versions as in eager mode, and records the
// kernel call here, in the device's pending list, in program order. The list runs, in
// that order, on the device's one stream, at a flush:
//  - whenever anything reads or hands out the bytes of a GPU storage: data_ptr() from
//    outside a flush, every GpuRuntime entry that queues work or waits (copies, fills,
//    synchronize, events, the stream handle for DLPack; fills and copies within one GPU
//    are recorded instead, core/tensor_impl.cpp), hence item(), tolist(), repr,
//    numpy, save, cross-device copies and the data-dependent shapes that read a count;
//  - at lucid.eval(), Tensor.eval(), lucid.gpu.synchronize(), the end of backward()
//    and of optimizer.step();
//  - when the list holds kMaxPendingOps ops or keeps kMaxPendingBytes of outputs alive,
//    so that a program that never asks for a value never grows without bound.
// Program order on one stream keeps PyTorch's meaning of views, in-place writes and
// saved tensors with no dependency analysis: a recorded op holds snapshots (storage +
// metadata) of its operands, taken when it was called, so later metadata changes
// (set_data, transpose_) do not reach it and its operands' bytes stay alive.
//
// Errors about shapes, dtypes and devices are raised by the op when it is called; an
// error a kernel raises while the list runs is raised by the flush, naming the op, once
// the rest of the list has run (the calls after it may not depend on it).
// LUCID_LAZY=0, or lucid.gpu.set_lazy(False), runs every op when it is called, outside
// compiled regions: lucid.compile asked for its call's list (fused, replayed as a graph),
// so a region records with laziness off too, as the CPU's regions do.
//
// A compiled call (lucid.compile, python/lucid/compile) runs inside a region: the
// natural flush points (the end of backward() and of optimizer.step()) do not flush
// there and the op budget is kMaxRegionOps, so that the call's whole work (forward,
// backward, update) is one list, fused as one and replayed as one graph; the region's
// end flushes. Host reads and the byte budget still flush inside a region: each such
// flush is counted as a break (Stats::region_breaks, reported by lucid.compile.diagnose).
//
// The CPU has a list too (kCpu), used only inside compiled regions and only for the
// calls the fusion pass can fuse (ops/fusion.h: float elementwise chains): a compiled
// function's chains then run block by block in cache (Note [Compiled CPU chains]).
// Every other CPU op runs when called, and anything that touches a CPU storage's bytes
// (host_ptr(), data_ptr()) flushes the CPU list first, as data_ptr() does on the GPU.
//
// A backend may run a whole list its own way (the CUDA backend: captured into a CUDA
// graph and replayed when the list's signature repeats, Note [Flush graphs] in
// backend/cuda/flush_graphs.h) through the ListRunner seam below.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

namespace lucid {
class TensorImpl;
}

namespace lucid::pending {

inline constexpr size_t kMaxPendingOps = 1024;
// Output bytes the list may keep alive. Outputs are allocated when an op is called, so
// a recorded chain holds its intermediates until the flush; the budget lets a chain of
// eight ops on 64 MiB tensors reach the flush whole (and fuse), while a program that
// never reads a value stays bounded. (Past it, an allocation that fails flushes too.)
inline constexpr size_t kMaxPendingBytes = size_t(1) << 30;
inline constexpr int kMaxDevices = 16;
// The CPU's list (after the GPUs' 0..kMaxDevices-1): a `device` argument below may be it.
inline constexpr int kCpu = kMaxDevices;
inline constexpr int kLists = kMaxDevices + 1;
// The op budget inside a compiled region: a Transformer's training step is a few
// thousand calls, which a single list (and graph) holds well.
inline constexpr size_t kMaxRegionOps = 16384;

// One recorded call: runs it, names it for errors. run() may be called twice when a
// backend's attempt to run the list its way is abandoned before anything executed
// (ListRun::Abandoned), so it must not change host state that a second run would see.
struct Work {
  virtual ~Work() = default;
  virtual void run() = 0;
  virtual const char* name() const = 0;
  // Mixes what decides the launches of run() (kernel, parameters' kind, operand sizes
  // and dtypes) into a hash: equal lists of equal calls give equal signatures.
  virtual uint64_t signature() const { return 0; }
  // Before a captured list runs again (Note [Replayed steps]): a call whose arguments
  // derive from host state brings them up to date (an optimizer's step counts).
  virtual void refresh() {}
  // Whether refresh() may change what run() launches: such a call is launched anew at
  // every replay, while the others of a capture replay from a graph made once (Note
  // [Fixed replays], backend/cuda/flush_graphs.h).
  virtual bool refreshes() const { return false; }
  // Whether the call may run again from a capture: false for a call whose result was
  // decided when it was recorded and must differ next time (random numbers).
  virtual bool replayable() const { return true; }
  // A copy between two tensors of one device (a recorded copy_, a cast when their
  // dtypes differ): true, with its destination and source (snapshots the call holds),
  // for the fusion pass (ops/fusion.cpp); false for any other call.
  virtual bool copy_operands(const TensorImpl** dst, const TensorImpl** src) const {
    (void)dst, (void)src;
    return false;
  }
};

// What a backend's ListRunner did with a list.
enum class ListRun {
  Declined,   // nothing: the flush runs the list call by call
  Ran,        // ran every call its way (as a graph it replayed or built)
  Abandoned,  // began, but nothing executed (a call needed the host): the flush runs it call by call
};
// run_list(ctx) runs every call of the list once, holding on to their operands, and
// never throws (the flush keeps the first error); it returns false if a call raised (a
// library may fail only because it is being captured: the runner then abandons, and
// the calls run again one by one, raising for real). `signature` hashes the whole list.
using ListRunner = ListRun (*)(int device, uint64_t signature, size_t calls, bool (*run_list)(void*), void* ctx);
ListRunner set_list_runner(ListRunner runner);  // returns the one it replaces

// A pass that may replace runs of a list's calls by fewer calls doing the same work
// (elementwise fusion, ops/fusion.cpp), before the list runs; returns how many calls
// it replaced.
using ListRewriter = size_t (*)(int device, std::vector<std::unique_ptr<Work>>& list);
void set_list_rewriter(ListRewriter rewriter);
// Whether lists go through the rewriter (LUCID_FUSION=0 turns it off).
bool fusion_enabled();
void set_fusion_enabled(bool enabled);

// Whether lists may go to the backend's runner (LUCID_CUDA_GRAPHS=0 turns it off).
bool graphs_enabled();
void set_graphs_enabled(bool enabled);
// Lists shorter than this are run call by call: a graph saves little on them.
inline constexpr size_t kMinGraphCalls = 3;

bool lazy_enabled();
void set_lazy(bool enabled);  // turning it off flushes every device first

// True while this thread runs a flush: launch() then runs kernels at once (a kernel
// built from other ops), and data_ptr() does not flush again.
bool in_flush();

// Should an op on GPU `device` be recorded rather than run? (Lazy, and not in a flush.)
bool recording(int device);
// Should a fusable CPU op be recorded? (Inside a compiled region, fusion on, not in a flush.)
bool recording_cpu();

// Appends to the device's list; flushes it when a budget is reached. `new_bytes`: the
// bytes of output storage the list now keeps alive that it did not before.
void record(int device, std::unique_ptr<Work> work, size_t new_bytes);

namespace detail {
extern std::atomic<size_t> g_pending[kLists];  // ops in each device's list
}
inline bool has_pending(int device) {
  return device >= 0 && device < kLists && detail::g_pending[device].load(std::memory_order_relaxed) != 0;
}

// Runs the device's list in order. A no-op when it is empty or when called inside a
// flush (the kernel being run is what asked).
void flush_slow(int device);
inline void flush(int device) {
  if (has_pending(device) && !in_flush()) flush_slow(device);
}
void flush_all();  // every GPU's list and the CPU's

// The end of backward() and of optimizer.step(): flush_all() outside a compiled region,
// nothing inside one.
void flush_at_boundary();

// A compiled call's region on this thread (nestable; the outermost one's end flushes
// every device, raising what the flush raises).
void enter_region();
void exit_region();
bool in_region();

// Note [Replayed steps]
// A training step compiled by lucid.compile.fused_step runs its Python at its first
// calls only. Its third call's region is captured: the list it recorded, rewritten by
// fusion once, is kept (with every tensor it holds) after it runs, and a later call
// replays it (refresh(), then the list again, as a graph) without running Python or
// recording anything. What makes this safe is the caller's (python/lucid/compile/
// _replay.py): the capture is used only while the inputs' signature, the parameters'
// and optimizer state's storages, the optimizer's hyperparameters, grad mode and
// autocast are those of the capture, and only if the list of the call before it had
// the same signature (no call that differs from step to step, other than what
// refresh() updates), no break and no random numbers.
struct Capture {
  int device = -1;
  uint64_t signature = 0;  // of the list as recorded (before fusion)
  std::vector<std::unique_ptr<Work>> ops;  // as fusion rewrote them
  std::shared_ptr<void> fixed;  // the backend's ReplayRunner state (its graphs), once made
  bool fixed_declined = false;  // the runner declined: replays run as flushes
  Capture() = default;
  Capture(const Capture&) = delete;
  Capture& operator=(const Capture&) = delete;
};
struct RegionEnd {
  uint64_t signature = 0;  // of the lists the region's end ran (0: none), recorded order
  size_t breaks = 0;       // this region's breaks (flushes before its end)
  std::unique_ptr<Capture> capture;  // when asked for and possible
};
// exit_region() that also reports the region's signature and breaks, and, when
// `capture` and the region recorded on one GPU, without a break, only replayable
// calls, keeps the list it runs as a Capture.
RegionEnd exit_region_reporting(bool capture);
// Runs a capture again: the device's recorded work first, then refresh() and every
// call of the capture, in order: through the backend's ReplayRunner when it takes the
// capture, else as a flush (one graph, from the second replay).
void replay(Capture& capture);
// A backend's way to replay a capture (Note [Fixed replays], backend/cuda/
// flush_graphs.h): runs every call of `ops` once, in order, keeping what it needs in
// `state` between replays; run_calls(ctx, begin, end) runs ops[begin, end) as a flush
// does (an error is kept, the rest still run) and returns false if one raised. Returns
// false (nothing executed) to decline the capture for good.
using ReplayRunner = bool (*)(int device, const std::vector<std::unique_ptr<Work>>& ops, std::shared_ptr<void>& state,
                              bool (*run_calls)(void* ctx, size_t begin, size_t end), void* ctx);
void set_replay_runner(ReplayRunner runner);
// Called at every break of a compiled region (a flush inside it, other than its end),
// on the flushing thread, before the list runs: lucid.compile.diagnose names the line
// that asked (null: none).
using BreakObserver = void (*)(int device);
void set_break_observer(BreakObserver observer);

// For work queued on a device's stream outside a flush (copies, fills, event records,
// waits): runs the device's list first, then keeps other threads' flushes of the
// device waiting until destroyed, so that the work neither overtakes recorded calls
// nor lands inside another thread's capture of a list (Note [Flush graphs]). Inside a
// flush it does nothing (the kernel being run is what queues the work).
class StreamTurn {
 public:
  explicit StreamTurn(int device);
  ~StreamTurn();
  StreamTurn(const StreamTurn&) = delete;
  StreamTurn& operator=(const StreamTurn&) = delete;

 private:
  int device_ = -1;  // whose flushes wait; -1: none
};

struct Stats {
  size_t ops = 0;      // recorded, not yet run
  size_t bytes = 0;    // output storage they keep alive
  size_t flushes = 0;  // since the process started
  size_t graph_runs = 0;       // flushes the backend's runner ran (replayed as graphs)
  size_t graph_abandoned = 0;  // flushes it began and gave back (then run call by call)
  size_t fused_calls = 0;      // calls the rewriter replaced (by fused kernels)
  size_t region_breaks = 0;    // flushes inside a compiled region, other than its end
  size_t replays = 0;          // captured steps run again (Note [Replayed steps])
  size_t fixed_replays = 0;    // of those, launched from graphs captured once (Note [Fixed replays])
};
Stats stats(int device);

}  // namespace lucid::pending
