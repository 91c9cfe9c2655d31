// Note [Flush graphs] (flush_graphs.h).
#include "backend/cuda/flush_graphs.h"

#include <cuda_runtime_api.h>

#include <cstdint>
#include <unordered_map>

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

}  // namespace lucid::cuda
