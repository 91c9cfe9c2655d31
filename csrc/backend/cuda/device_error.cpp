#include "backend/cuda/device_error.h"

#include <algorithm>
#include <atomic>
#include <mutex>
#include <string>
#include <vector>

#include <cuda_runtime_api.h>

#include "backend/cuda/check.h"
#include "backend/cuda/device_guard.h"
#include "backend/cuda/stream.h"
#include "core/error.h"
#include "ops/primitive.h"
#include "ops/prims/decompose.h"

namespace lucid::cuda {

namespace {

// Note [Naming the op that found an error]
// Each launch that may report an error gets its own slot, handed out in order since the
// last check, and the host notes which primitive's kernel asked for it (ops::
// running_kernel_name()). The check then names the op: with lazy execution the error
// is found at a read far from the op, often after a whole flush. Past kSlots launches
// between two checks the slots are handed out again; a slot two different ops shared
// names neither.
constexpr int kSlots = 256;
// Kept slots (Note [Fixed replays], flush_graphs.h): a launch captured into a graph
// that replays without its host code running again reports into the same slot at every
// replay, so its slot is never handed to another launch and every check reads it,
// until the graph's owner gives it back. Taken while a thread keeps slots
// (keep_error_slots); when all are taken, the graph is not made.
constexpr int kKeptSlots = 1024;

struct DeviceSlots {
  DeviceErrorSlot* slots = nullptr;  // kSlots of them, then kKeptSlots kept ones, mapped pinned memory
  int next = 0;                      // handed out since the last check
  bool wrapped = false;
  const char* names[kSlots] = {};    // the op each slot was handed to (null: two ops)
  const char* kept_names[kKeptSlots] = {};
  bool kept_taken[kKeptSlots] = {};
};

thread_local std::vector<DeviceErrorSlot*>* t_keeping = nullptr;

// Leaked, like the streams (stream.cpp): valid during interpreter shutdown.
DeviceSlots* g_devices[kMaxDevices];

std::mutex& slot_mutex() {
  static std::mutex* mu = new std::mutex();
  return *mu;
}

}  // namespace

DeviceErrorSlot* device_error_slot(int device) {
  check_device(device);
  std::lock_guard<std::mutex> lock(slot_mutex());
  DeviceSlots*& d = g_devices[device];
  if (!d) {
    DeviceGuard guard(device);
    void* p = nullptr;
    // Mapped pinned memory: with unified addressing the host pointer is the device's too.
    constexpr int kAll = kSlots + kKeptSlots;
    LUCID_CUDA_CHECK(cudaHostAlloc(&p, kAll * sizeof(DeviceErrorSlot), cudaHostAllocMapped | cudaHostAllocPortable));
    auto* made = new DeviceSlots();
    made->slots = static_cast<DeviceErrorSlot*>(p);
    for (int i = 0; i < kAll; ++i) made->slots[i] = DeviceErrorSlot{};
    d = made;
  }
  if (t_keeping) {
    const int k = int(std::find(std::begin(d->kept_taken), std::end(d->kept_taken), false) - std::begin(d->kept_taken));
    LUCID_CHECK(k < kKeptSlots, RuntimeError, "internal: every kept device error slot is taken");
    d->kept_taken[k] = true;
    d->kept_names[k] = ops::running_kernel_name();
    DeviceErrorSlot* slot = &d->slots[kSlots + k];
    t_keeping->push_back(slot);
    return slot;
  }
  const int i = d->next;
  const char* op = ops::running_kernel_name();
  if (d->wrapped && d->names[i] != op) d->names[i] = nullptr;
  else if (!d->wrapped) d->names[i] = op;
  d->next = i + 1 == kSlots ? 0 : i + 1;
  d->wrapped = d->wrapped || d->next == 0;
  return &d->slots[i];
}

std::vector<DeviceErrorSlot*>* keep_error_slots(std::vector<DeviceErrorSlot*>* into) {
  std::vector<DeviceErrorSlot*>* before = t_keeping;
  t_keeping = into;
  return before;
}

void release_error_slots(int device, const std::vector<DeviceErrorSlot*>& slots) {
  std::lock_guard<std::mutex> lock(slot_mutex());
  DeviceSlots* d = device >= 0 && device < kMaxDevices ? g_devices[device] : nullptr;
  if (!d) return;
  for (DeviceErrorSlot* slot : slots) {
    const std::ptrdiff_t k = slot - (d->slots + kSlots);
    if (k >= 0 && k < kKeptSlots) d->kept_taken[k] = false, d->kept_names[k] = nullptr;
  }
}

void raise_device_error(int device) {
  if (device < 0 || device >= kMaxDevices) return;
  int32_t code_value = 0, dim = 0;
  int64_t index = 0, size = 0;
  const char* op = nullptr;
  // Keeps the first error read and clears every slot read.
  auto take = [&](volatile DeviceErrorSlot* s, const char* name) {
    if (s->code != 0 && code_value == 0) {
      code_value = s->code;
      dim = s->dim;
      index = s->index;
      size = s->size;
      op = name;
    }
    s->code = 0;
  };
  {
    std::lock_guard<std::mutex> lock(slot_mutex());
    DeviceSlots* d = g_devices[device];
    if (!d) return;
    const int used = d->wrapped ? kSlots : d->next;
    for (int i = 0; i < used; ++i) take(&d->slots[i], d->names[i]);  // in the order handed out (unless wrapped)
    for (int k = 0; k < kKeptSlots; ++k)  // (after the others: a replayed graph runs after them)
      if (d->kept_taken[k]) take(&d->slots[kSlots + k], d->kept_names[k]);
    d->next = 0;
    d->wrapped = false;
  }
  const auto code = DeviceErrorCode(code_value);
  if (code == DeviceErrorCode::None) return;
  const std::string found = op ? str_cat(" (found on the GPU by ", op, "'s kernel, which ran before this read)")
                               : std::string(" (found on the GPU by a kernel that ran before this read)");
  switch (code) {
    case DeviceErrorCode::ZeroDivision: fail<RuntimeError>("ZeroDivisionError", found);
    case DeviceErrorCode::IndexOutOfRange:
      fail<IndexError>("index ", index, " is out of bounds for dimension ", dim, " with size ", size, found);
    case DeviceErrorCode::GatherOutOfRange:
      fail<RuntimeError>("index ", index, " is out of bounds for dimension ", dim, " with size ", size, found);
    case DeviceErrorCode::SliceOutOfRange: fail<IndexError>("index out of range in self", found);
    case DeviceErrorCode::CtcTargetOutOfRange:
      fail<RuntimeError>("ctc_loss(): target label ", index, " is out of the class range [0, ", size, ")", found);
    case DeviceErrorCode::TapOutOfRange:
      fail<IndexError>(dim ? "resample_taps_adjoint" : "resample_taps", "(): tap index ", index,
                       " is out of range for size ", size, found);
    case DeviceErrorCode::PivotOutOfRange:
      ops::fail_bad_ldl_pivot(dim, index, size);
    case DeviceErrorCode::ClassTargetOutOfRange: fail<IndexError>("Target ", index, " is out of bounds.", found);
    default: fail<RuntimeError>("internal: unknown device error code ", int(code));
  }
}

}  // namespace lucid::cuda
