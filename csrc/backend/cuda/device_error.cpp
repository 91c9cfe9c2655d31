#include "backend/cuda/device_error.h"

#include <atomic>
#include <mutex>

#include <cuda_runtime_api.h>

#include "backend/cuda/check.h"
#include "backend/cuda/device_guard.h"
#include "backend/cuda/stream.h"
#include "ops/prims/decompose.h"

namespace lucid::cuda {

namespace {

// Leaked, like the streams (stream.cpp): valid during interpreter shutdown.
std::atomic<DeviceErrorSlot*> g_slots[kMaxDevices];

std::mutex& slot_mutex() {
  static std::mutex* mu = new std::mutex();
  return *mu;
}

}  // namespace

DeviceErrorSlot* device_error_slot(int device) {
  check_device(device);
  if (DeviceErrorSlot* s = g_slots[device].load(std::memory_order_acquire)) return s;
  std::lock_guard<std::mutex> lock(slot_mutex());
  if (DeviceErrorSlot* s = g_slots[device].load(std::memory_order_acquire)) return s;
  DeviceGuard guard(device);
  void* p = nullptr;
  // Mapped pinned memory: with unified addressing the host pointer is the device's too.
  LUCID_CUDA_CHECK(cudaHostAlloc(&p, sizeof(DeviceErrorSlot), cudaHostAllocMapped | cudaHostAllocPortable));
  auto* slot = static_cast<DeviceErrorSlot*>(p);
  *slot = DeviceErrorSlot{};
  g_slots[device].store(slot, std::memory_order_release);
  return slot;
}

void raise_device_error(int device) {
  if (device < 0 || device >= kMaxDevices) return;
  DeviceErrorSlot* slot = g_slots[device].load(std::memory_order_acquire);
  if (!slot) return;
  volatile DeviceErrorSlot* s = slot;
  const auto code = DeviceErrorCode(s->code);
  if (code == DeviceErrorCode::None) return;
  const int32_t dim = s->dim;
  const int64_t index = s->index, size = s->size;
  s->code = 0;
  switch (code) {
    case DeviceErrorCode::ZeroDivision: fail<RuntimeError>("ZeroDivisionError");
    case DeviceErrorCode::IndexOutOfRange:
      fail<IndexError>("index ", index, " is out of bounds for dimension ", dim, " with size ", size);
    case DeviceErrorCode::GatherOutOfRange:
      fail<RuntimeError>("index ", index, " is out of bounds for dimension ", dim, " with size ", size);
    case DeviceErrorCode::SliceOutOfRange: fail<IndexError>("index out of range in self");
    case DeviceErrorCode::CtcTargetOutOfRange:
      fail<RuntimeError>("ctc_loss(): target label ", index, " is out of the class range [0, ", size, ")");
    case DeviceErrorCode::TapOutOfRange:
      fail<IndexError>(dim ? "resample_taps_adjoint" : "resample_taps", "(): tap index ", index,
                       " is out of range for size ", size);
    case DeviceErrorCode::PivotOutOfRange:
      ops::fail_bad_ldl_pivot(dim, index, size);
    default: fail<RuntimeError>("internal: unknown device error code ", int(code));
  }
}

}  // namespace lucid::cuda
