// Note [Flush graphs] (flush_graphs.h).
#include "backend/cuda/flush_graphs.h"

#include <cuda_runtime_api.h>

#include <cstdint>
#include <unordered_map>

#include "backend/cuda/caching_allocator.h"
#include "backend/cuda/check.h"
#include "backend/cuda/device_error.h"
#include "backend/cuda/device_guard.h"
#include "backend/cuda/stream.h"
#include "core/error.h"

namespace lucid::cuda {

namespace {

struct Seen {
  uint64_t last_use = 0;
  bool refused = false;           // a capture was abandoned, or graphs keep failing: never again
  int failures = 0;               // updates refused by the driver in a row
  cudaGraphExec_t exec = nullptr;  // the instantiated graph, once captured
  size_t nodes = 0;
};

// One per device. Only touched by run_list_as_graph, which the pending list calls while
// holding the device's flush lock: no lock of its own.
struct DeviceGraphs {
  std::unordered_map<uint64_t, Seen> seen;
  uint64_t clock = 0;
  size_t graphs = 0;
  size_t nodes = 0;

  void drop(Seen& s) {
    if (!s.exec) return;
    (void)cudaGraphExecDestroy(s.exec);  // one still running is freed when it completes
    s.exec = nullptr;
    --graphs;
    nodes -= s.nodes;
    s.nodes = 0;
  }

  // Makes room for a graph of `more` nodes, least recently used first, never `keep`.
  void make_room(size_t more, const Seen* keep) {
    while (graphs > 0 && (graphs >= kMaxGraphs || nodes + more > kMaxGraphNodes)) {
      Seen* oldest = nullptr;
      for (auto& [key, s] : seen)
        if (s.exec && &s != keep && (!oldest || s.last_use < oldest->last_use)) oldest = &s;
      if (!oldest) return;
      drop(*oldest);
    }
  }

  // Forgets signatures seen once and never captured when there are too many.
  void trim() {
    if (seen.size() <= kMaxGraphSignatures) return;
    for (auto it = seen.begin(); it != seen.end();)
      it = (!it->second.exec && !it->second.refused) ? seen.erase(it) : std::next(it);
  }
};

DeviceGraphs& graphs_of(int device) {
  static DeviceGraphs* all = new DeviceGraphs[kMaxDevices];  // leaked: flushes may come at exit
  return all[device];
}

// The capture this thread is making, if any.
struct Capture {
  bool abandoned = false;
};
thread_local Capture* t_capture = nullptr;

constexpr int kMaxUpdateFailures = 3;

}  // namespace

void refuse_in_capture(const char* what) {
  if (!t_capture) return;
  t_capture->abandoned = true;
  fail<RuntimeError>("internal: ", what, " while a flush is captured into a CUDA graph ",
                     "(the flush runs again without one)");
}

pending::ListRun run_list_as_graph(int device, uint64_t signature, size_t, bool (*run_list)(void*), void* ctx) {
  using pending::ListRun;
  if (device < 0 || device >= kMaxDevices) return ListRun::Declined;
  DeviceGraphs& dg = graphs_of(device);
  dg.trim();
  auto [it, first_time] = dg.seen.try_emplace(signature);
  Seen& entry = it->second;
  entry.last_use = ++dg.clock;
  if (first_time || entry.refused) return ListRun::Declined;

  DeviceGuard guard(device);
  cudaStream_t s = stream(device);
  if (cudaStreamBeginCapture(s, cudaStreamCaptureModeRelaxed) != cudaSuccess) {
    (void)cudaGetLastError();
    entry.refused = true;
    return ListRun::Declined;
  }
  Capture capture;
  t_capture = &capture;
  const bool clean = run_list(ctx);  // (never throws)
  t_capture = nullptr;
  cudaGraph_t graph = nullptr;
  const cudaError_t ended = cudaStreamEndCapture(s, &graph);
  auto abandon = [&] {
    (void)cudaGetLastError();  // the invalidated capture's error is not the program's
    if (graph) (void)cudaGraphDestroy(graph);
    dg.drop(entry);
    entry.refused = true;
    return ListRun::Abandoned;
  };
  if (ended != cudaSuccess || !graph || capture.abandoned || !clean) return abandon();

  size_t nodes = 0;
  if (cudaGraphGetNodes(graph, nullptr, &nodes) != cudaSuccess) return abandon();
  if (nodes == 0) {  // the calls queued nothing (empty tensors)
    (void)cudaGraphDestroy(graph);
    return ListRun::Ran;
  }
  if (entry.exec) {
    cudaGraphExecUpdateResultInfo info{};
    if (cudaGraphExecUpdate(entry.exec, graph, &info) == cudaSuccess) {
      entry.failures = 0;
    } else {  // another topology behind this signature: instantiate it
      (void)cudaGetLastError();
      dg.drop(entry);
      if (++entry.failures >= kMaxUpdateFailures) return abandon();
    }
  }
  if (!entry.exec) {
    dg.make_room(nodes, &entry);
    if (cudaGraphInstantiate(&entry.exec, graph, 0) != cudaSuccess) {
      entry.exec = nullptr;
      return abandon();
    }
    ++dg.graphs;
    dg.nodes += nodes;
    entry.nodes = nodes;
  }
  (void)cudaGraphDestroy(graph);
  graph = nullptr;
  if (cudaGraphLaunch(entry.exec, s) != cudaSuccess) return abandon();  // (nothing was queued)
  return ListRun::Ran;
}

namespace {

// A capture's segments (Note [Fixed replays]): calls [begin, end) replayed by `exec`,
// or launched directly when exec is null (calls that refresh).
struct FixedReplay {
  struct Segment {
    size_t begin = 0, end = 0;
    cudaGraphExec_t exec = nullptr;
  };
  int device = -1;
  std::vector<Segment> segments;
  std::vector<DeviceErrorSlot*> error_slots;  // kept for the graphs' launches
  ~FixedReplay() {
    for (Segment& g : segments)
      if (g.exec) (void)cudaGraphExecDestroy(g.exec);  // one still running is freed when it completes
    release_error_slots(device, error_slots);
  }
};

// Captures calls [begin, end) into an instantiated graph; null when they cannot be
// (nothing has executed either way).
cudaGraphExec_t capture_segment(cudaStream_t s, size_t begin, size_t end,
                                bool (*run_calls)(void*, size_t, size_t), void* ctx, FixedReplay& made) {
  if (cudaStreamBeginCapture(s, cudaStreamCaptureModeRelaxed) != cudaSuccess) {
    (void)cudaGetLastError();
    return nullptr;
  }
  Capture capture;
  t_capture = &capture;
  std::vector<DeviceErrorSlot*>* before = keep_error_slots(&made.error_slots);
  const size_t allocations = CachingAllocator::allocations_on_this_thread();
  const bool clean = run_calls(ctx, begin, end);  // (never throws)
  const bool allocated = CachingAllocator::allocations_on_this_thread() != allocations;
  keep_error_slots(before);
  t_capture = nullptr;
  cudaGraph_t graph = nullptr;
  const cudaError_t ended = cudaStreamEndCapture(s, &graph);
  cudaGraphExec_t exec = nullptr;
  if (ended == cudaSuccess && graph && clean && !capture.abandoned && !allocated &&
      cudaGraphInstantiate(&exec, graph, 0) != cudaSuccess)
    exec = nullptr;
  (void)cudaGetLastError();  // (an invalidated capture's error is not the program's)
  if (graph) (void)cudaGraphDestroy(graph);
  return exec;
}

}  // namespace

bool replay_fixed(int device, const std::vector<std::unique_ptr<pending::Work>>& ops, std::shared_ptr<void>& state,
                  bool (*run_calls)(void* ctx, size_t begin, size_t end), void* ctx) {
  if (device < 0 || device >= kMaxDevices) return false;
  DeviceGuard guard(device);
  cudaStream_t s = stream(device);
  if (!state) {  // the first replay: capture every segment (nothing runs yet)
    auto made = std::make_shared<FixedReplay>();
    made->device = device;
    for (size_t i = 0; i < ops.size();) {
      size_t end = i + 1;
      const bool refreshes = ops[i]->refreshes();
      while (end < ops.size() && ops[end]->refreshes() == refreshes) ++end;
      FixedReplay::Segment segment{i, end, nullptr};
      if (!refreshes && !(segment.exec = capture_segment(s, i, end, run_calls, ctx, *made))) return false;
      made->segments.push_back(segment);
      i = end;
    }
    state = std::move(made);
  }
  for (const FixedReplay::Segment& g : static_cast<FixedReplay*>(state.get())->segments) {
    if (g.exec) LUCID_CUDA_CHECK(cudaGraphLaunch(g.exec, s));
    else run_calls(ctx, g.begin, g.end);  // (an error is kept by the caller; the rest still run)
  }
  return true;
}

}  // namespace lucid::cuda
