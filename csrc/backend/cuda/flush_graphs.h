// Replaying repeated flushes as CUDA graphs.
//
// Note [Flush graphs]
// A training step flushes the same list of calls every iteration (one flush at the end
// of backward, one at the end of optimizer.step), with new addresses each time. The
// pending list (core/pending.h) hands each list of kMinGraphCalls or more to
// run_list_as_graph, which keeps per device a table keyed by the list's signature
// (kernels, parameter kinds, operand sizes and dtypes):
//  - the first time a signature is seen, it declines: the list runs call by call (a
//    graph used once costs as much as launching directly, design study section 2.5);
//  - from the second time, it captures the calls into a graph (stream capture costs
//    about 1.2 us a launch against 5 for launching) and launches it: the first capture
//    is instantiated (3.6 ms for 1,000 nodes, once), later ones update the
//    instantiated graph in place (cudaGraphExecUpdate, 0.23 us a node), which is how
//    new addresses reach it. An update the driver refuses (another topology behind the
//    same signature) instantiates again.
// A call that needs the host while capturing (a read of a device value, a host wait,
// a library's host work) cannot be in a graph: refuse_in_capture() or CUDA itself
// invalidates the capture, nothing has executed, the flush runs the list call by call
// (Work::run is repeatable), and the signature is never captured again. A call that
// raises while captured is treated the same way (cuSOLVER's geev fails only because it
// is captured): the call-by-call run raises the error if it is real.
// The table is bounded (kMaxGraphs instantiated graphs, kMaxGraphNodes nodes, least
// recently used evicted first) and never throws when full: unlike MLX's cache, which
// raises after too many misses and leaves its encoder broken (design study 7.9.5).
// LUCID_CUDA_GRAPHS=0 or lucid.gpu.set_graph_replay(False) turns replay off.
//
// Note [Fixed replays]
// A replayed training step (Note [Replayed steps], core/pending.h) holds every tensor
// of its calls, so its launches are the same at every replay, except those of calls
// that refresh() (an optimizer's step counts are kernel arguments). Re-capturing the
// whole list and updating the graph at every replay, as a flush does, spent ~200 us
// of host time on the MLP 784-512-512-10 step, more than its kernels took: the step
// was bound by the host. replay_fixed() instead cuts the list into segments, runs of
// calls that do not refresh (captured once, at the first replay, then only launched)
// and the calls that do (launched anew each replay, between the segments' graphs).
// What a call's launch must not depend on for its graph to be replayed later:
//  - blocks it allocates and frees within the call (a table uploaded for the kernel,
//    param_table.h): by the next replay the block may hold another tensor. A segment
//    whose capture allocates is not made: the whole capture declines and replays as
//    flushes;
//  - a device error slot handed out per launch (device_error.h): captured launches
//    take kept slots, which every check reads and no other launch is given, until
//    the segments are dropped with their capture;
//  - host waits, host copies, library host work: refused in capture as for flushes.
// A ticket counter (block_ticket.h) is fine: the last block returns it to zero.
#pragma once

#include <memory>
#include <vector>

#include "core/pending.h"

namespace lucid::cuda {

inline constexpr size_t kMaxGraphs = 64;           // instantiated graphs per device
inline constexpr size_t kMaxGraphNodes = 65536;    // their nodes together (~10 KB each in the driver)
inline constexpr size_t kMaxGraphSignatures = 4096;  // signatures remembered per device

// core/pending.h's ListRunner for CUDA devices; installed by register_runtime().
pending::ListRun run_list_as_graph(int device, uint64_t signature, size_t calls, bool (*run_list)(void*), void* ctx);

// core/pending.h's ReplayRunner for CUDA devices (Note [Fixed replays]).
bool replay_fixed(int device, const std::vector<std::unique_ptr<pending::Work>>& ops, std::shared_ptr<void>& state,
                  bool (*run_calls)(void* ctx, size_t begin, size_t end), void* ctx);

// Called where a call would wait for the device or read from it on the host (those
// cannot be captured): while this thread captures a flush, abandons the capture and
// throws; otherwise does nothing. `what` names the wait for the internal message.
void refuse_in_capture(const char* what);

}  // namespace lucid::cuda
