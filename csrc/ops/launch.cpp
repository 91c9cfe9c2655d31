// The (primitive, device) kernel table and launch (Note [The compute seam]); on a lazy
// GPU, launch records the call (Note [Lazy GPU execution], core/pending.h), and so does
// the CPU for a fusable call inside a compiled region (Note [Compiled CPU chains]).
#include <algorithm>
#include <array>
#include <atomic>
#include <memory>
#include <vector>

#include "core/error.h"
#include "core/pending.h"
#include "ops/fusion.h"
#include "ops/op_tally.h"
#include "ops/primitive.h"
#include "ops/recorded_launch.h"

namespace lucid::ops {

namespace {

constexpr const char* kPrimName[] = {
#define LUCID_PRIM_NAME(name) #name,
    LUCID_PRIMITIVES(LUCID_PRIM_NAME)
#undef LUCID_PRIM_NAME
};

constexpr size_t kDeviceTypes = 2;  // DeviceType::CPU, DeviceType::GPU

// Written at import (register_kernels of each backend), read-only afterwards.
struct Entry {
  Kernel kernel = nullptr;
  Check check = nullptr;
};
std::array<std::array<Entry, kDeviceTypes>, kPrimCount>& table() {
  static std::array<std::array<Entry, kDeviceTypes>, kPrimCount> t{};
  return t;
}

const char* device_type_name(DeviceType d) { return d == DeviceType::CPU ? "cpu" : "gpu"; }

// Primitives whose GPU kernel reads data back to raise an error about it (a check of
// random arguments): they run when called, so the error comes from the call, as in
// eager mode.
bool runs_when_called(Prim p) { return p == Prim::RandomCheck; }

}  // namespace

const char* prim_name(Prim p) { return kPrimName[size_t(p)]; }

namespace {
thread_local const char* t_running = nullptr;
thread_local OpTally* t_tally = nullptr;

void tally(const Primitive& p, Outputs outs, Inputs ins, bool recorded) {
  const TensorImpl* first = outs.empty() ? ins.front() : outs.front();
  t_tally->ops.push_back({p.name(), {first->shape().begin(), first->shape().end()}, first->dtype(),
                          first->device().type, recorded});
}
}  // namespace

void set_op_tally(OpTally* t) { t_tally = t; }
OpTally* op_tally() { return t_tally; }

namespace {
std::atomic<uint64_t> g_grad_sinks{0};
}  // namespace

void count_grad_sink() { g_grad_sinks.fetch_add(1, std::memory_order_relaxed); }
uint64_t grad_sinks() { return g_grad_sinks.load(std::memory_order_relaxed); }

const char* running_kernel_name() { return t_running; }

void run_kernel(Kernel k, const Primitive& p, Outputs outs, Inputs ins) {
  struct Running {
    const char* outer = t_running;
    ~Running() { t_running = outer; }
  } running;
  t_running = p.name();
  k(p, outs, ins);
}

void register_kernel(Prim p, DeviceType device, Kernel kernel, Check check) {
  table()[size_t(p)][size_t(device)] = {kernel, check};
}

bool has_kernel(Prim p, DeviceType device) { return kernel_of(p, device) != nullptr; }

Kernel kernel_of(Prim p, DeviceType device) { return table()[size_t(p)][size_t(device)].kernel; }

std::vector<std::pair<std::string, std::string>> registered_kernels() {
  std::vector<std::pair<std::string, std::string>> out;
  for (size_t p = 0; p < kPrimCount; ++p)
    for (DeviceType d : {DeviceType::CPU, DeviceType::GPU})
      if (table()[p][size_t(d)].kernel) out.emplace_back(kPrimName[p], device_type_name(d));
  return out;
}

void launch(const Primitive& p, Outputs outs, Inputs ins) {
  LUCID_CHECK(!outs.empty() || !ins.empty(), RuntimeError, "internal: ", p.name(), " launched with no tensors");
  const Device device = outs.empty() ? ins.front()->device() : outs.front()->device();
  // A kernel dereferences what it is given on its own device: a tensor elsewhere would
  // be a wild pointer, so this is checked here once instead of trusted in every op.
  auto same = [&](const TensorImpl* t) {
    LUCID_CHECK(t->device() == device, RuntimeError, "Expected all tensors to be on the same device, but found at "
                "least two devices, ", device.str(), " and ", t->device().str(), "! (in ", p.name(), ")");
  };
  for (const TensorImpl* t : outs) same(t);
  for (const TensorImpl* t : ins) same(t);
  const Entry& entry = table()[size_t(p.kind())][size_t(device.type)];
  const Kernel k = entry.kernel;
  if (!k) {
    if (device.is_gpu())
      fail<NotImplementedError>("no CUDA kernel for ", p.name(), " on ", device.str(),
                                " yet: move the tensors with .cpu()");
    fail<NotImplementedError>("internal: no CPU kernel for ", p.name());
  }
  if (entry.check) entry.check(p, outs, ins);
  const bool lazy_gpu = device.is_gpu() && pending::recording(device.index);
  // (A CPU call not recorded flushes the CPU's list when its kernel reads an operand.)
  const bool record = lazy_gpu ? !runs_when_called(p.kind())
                               : device.is_cpu() && pending::recording_cpu() && record_on_cpu(p, outs, ins);
  if (t_tally) tally(p, outs, ins, record);
  if (record) {
    auto call = std::make_unique<RecordedLaunch>(k, p, outs, ins);
    const size_t bytes = call->new_bytes();
    pending::record(device.is_gpu() ? device.index : pending::kCpu, std::move(call), bytes);
    return;
  }
  if (lazy_gpu) pending::flush(device.index);
  run_kernel(k, p, outs, ins);
}

void launch(const Primitive& p, std::initializer_list<TensorImpl*> outs,
            std::initializer_list<const TensorImpl*> ins) {
  launch(p, Outputs(outs.begin(), outs.size()), Inputs(ins.begin(), ins.size()));
}

}  // namespace lucid::ops
