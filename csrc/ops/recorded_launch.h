// A kernel call recorded on a lazy GPU (Note [Lazy GPU execution], core/pending.h):
// what launch() keeps, and what a flush's fusion pass (ops/fusion.cpp) reads.
#pragma once

#include <algorithm>
#include <memory>
#include <span>
#include <vector>

#include "core/pending.h"
#include "ops/primitive.h"
#include "ops/prims/optim.h"

namespace lucid::ops {

// Runs kernel k, naming p as the running kernel meanwhile (running_kernel_name()).
void run_kernel(Kernel k, const Primitive& p, Outputs outs, Inputs ins);

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
    run_kernel(kernel_, *prim_, Outputs(ptrs.data(), n_outs_),
               Inputs(const_cast<const TensorImpl* const*>(ptrs.data()) + n_outs_, ptrs.size() - n_outs_));
  }
  const char* name() const override { return prim_->name(); }
  uint64_t signature() const override {
    uint64_t h = reinterpret_cast<uintptr_t>(kernel_) ^ (uint64_t(prim_->kind()) << 48);
    auto mix = [&h](uint64_t v) { h = (h ^ v) * 0x100000001b3ull; };
    mix(prim_->signature());
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

  // Note [Replayed steps] (core/pending.h): an optimizer's step takes the next step's
  // arguments (advancing its step counts); random numbers are not replayed.
  void refresh() override {
    if (prim_->kind() == Prim::OptimStep)
      if (auto& step = static_cast<optim::OptimStep&>(*prim_); step.next) step.args = step.next();
  }
  bool refreshes() const override {
    return prim_->kind() == Prim::OptimStep && static_cast<const optim::OptimStep&>(*prim_).next;
  }
  bool replayable() const override {
#define LUCID_RANDOM_KIND(name) prim_->kind() != Prim::name&&
    return LUCID_RANDOM_PRIMITIVES(LUCID_RANDOM_KIND) true;
#undef LUCID_RANDOM_KIND
  }

  const Primitive& prim() const { return *prim_; }
  Kernel kernel() const { return kernel_; }
  // Snapshots of the outputs, then of the inputs (null: an absent optional operand).
  std::span<const TensorPtr> outputs() const { return {tensors_.data(), n_outs_}; }
  std::span<const TensorPtr> inputs() const { return {tensors_.data() + n_outs_, tensors_.size() - n_outs_}; }

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

}  // namespace lucid::ops
