// The (primitive, device) kernel table and launch (Note [The compute seam]); on a lazy
// GPU, launch records the call (Note [Lazy GPU execution], core/pending.h).
#include <algorithm>
#include <array>
#include <memory>
#include <vector>

#include "core/error.h"
#include "core/pending.h"
#include "ops/primitive.h"

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

// A launch kept for later: the kernel, a copy of the primitive, and snapshots of the
// operands (their storage and metadata as they were when the op was called, so that
// a later set_data or transpose_ does not reach the recorded call).
class RecordedLaunch final : public pending::Work {
 public:
  RecordedLaunch(Kernel kernel, const Primitive& p, Outputs outs, Inputs ins)
      : kernel_(kernel), prim_(p.clone()), n_outs_(outs.size()) {
    tensors_.reserve(outs.size() + ins.size());
    std::vector<const TensorImpl*> seen;
    seen.reserve(outs.size() + ins.size());
    auto add = [&](const TensorImpl* t) {
      // One snapshot per tensor: a kernel may tell an in-place call by identity
      // (outs[0] == ins[0], the scans do), which two snapshots would hide.
      for (size_t i = 0; i < seen.size(); ++i)
        if (t && seen[i] == t) {
          seen.push_back(t);
          tensors_.push_back(tensors_[i]);
          return;
        }
      seen.push_back(t);
      tensors_.push_back(snapshot(t));
    };
    for (const TensorImpl* t : outs) add(t);
    for (const TensorImpl* t : ins) add(t);
  }
  ~RecordedLaunch() override {
    for (size_t i = 0; i < tensors_.size(); ++i)
      if (tensors_[i] && std::find(tensors_.begin(), tensors_.begin() + i, tensors_[i]) == tensors_.begin() + i)
        storage_base(tensors_[i]->storage()).version->pending_uses.fetch_sub(1, std::memory_order_relaxed);
  }
  void run() override {
    std::vector<TensorImpl*> ptrs(tensors_.size());
    for (size_t i = 0; i < tensors_.size(); ++i) ptrs[i] = tensors_[i].get();
    kernel_(*prim_, Outputs(ptrs.data(), n_outs_),
            Inputs(const_cast<const TensorImpl* const*>(ptrs.data()) + n_outs_, ptrs.size() - n_outs_));
  }
  const char* name() const override { return prim_->name(); }
  uint64_t signature() const override {
    uint64_t h = reinterpret_cast<uintptr_t>(kernel_) ^ (uint64_t(prim_->kind()) << 48);
    auto mix = [&h](uint64_t v) { h = (h ^ v) * 0x100000001b3ull; };
    for (const TensorPtr& t : tensors_) {
      if (!t) {
        mix(~0ull);
        continue;
      }
      mix(uint64_t(t->dtype()) << 8 | uint64_t(t->ndim()));
      for (int64_t n : t->shape()) mix(uint64_t(n));
    }
    return h;
  }

  // Output storage this call is the first of the list to keep alive.
  size_t new_bytes() const {
    size_t bytes = 0;
    for (size_t i = 0; i < n_outs_; ++i)
      if (const TensorPtr& t = tensors_[i])
        if (storage_base(t->storage()).version->pending_uses.load(std::memory_order_relaxed) == 1)
          bytes += storage_base(t->storage()).nbytes;
    return bytes;
  }

 private:
  static TensorPtr snapshot(const TensorImpl* t) {
    if (!t) return nullptr;  // an absent optional operand
    storage_base(t->storage()).version->pending_uses.fetch_add(1, std::memory_order_relaxed);
    return std::make_shared<TensorImpl>(t->storage(), t->meta());
  }

  Kernel kernel_;
  std::unique_ptr<Primitive> prim_;
  size_t n_outs_;
  std::vector<TensorPtr> tensors_;  // outputs, then inputs
};

}  // namespace

const char* prim_name(Prim p) { return kPrimName[size_t(p)]; }

void register_kernel(Prim p, DeviceType device, Kernel kernel, Check check) {
  table()[size_t(p)][size_t(device)] = {kernel, check};
}

bool has_kernel(Prim p, DeviceType device) { return table()[size_t(p)][size_t(device)].kernel != nullptr; }

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
  if (device.is_gpu() && pending::recording(device.index)) {
    if (!runs_when_called(p.kind())) {
      auto call = std::make_unique<RecordedLaunch>(k, p, outs, ins);
      const size_t bytes = call->new_bytes();
      pending::record(device.index, std::move(call), bytes);
      return;
    }
    pending::flush(device.index);
  }
  k(p, outs, ins);
}

void launch(const Primitive& p, std::initializer_list<TensorImpl*> outs,
            std::initializer_list<const TensorImpl*> ins) {
  launch(p, Outputs(outs.begin(), outs.size()), Inputs(ins.begin(), ins.size()));
}

}  // namespace lucid::ops
