// Note [Errors found on the device]
// A kernel that meets bad data (an integer divisor of zero; later an index out of
// range) cannot throw, and PyTorch's device-side assert poisons the CUDA context for
// the rest of the process. lucid's kernels instead record the first such error in a
// small slot of pinned, mapped host memory (one per launch that may report, so that
// the error names its op: Note [Naming the op that found an error], device_error.cpp),
// skip the bad element, and carry on. The host reads the slots whenever it waits for
// the device's stream (a download, item(), tolist(), synchronize()) and raises the
// error there: the op is asynchronous, so the error surfaces at the next
// synchronisation point, and the process keeps working.
#pragma once

#include <cstdint>
#include <vector>

namespace lucid::cuda {

// What a kernel found, and the exception the host raises for it (the CPU's, word for
// word): IndexOutOfRange -> IndexError "index i is out of bounds for dimension d with
// size n" (advanced indexing); GatherOutOfRange -> the same words as a RuntimeError
// (gather, scatter); SliceOutOfRange -> IndexError "index out of range in self"
// (index_select, index_add); CtcTargetOutOfRange -> RuntimeError "ctc_loss(): target
// label i is out of the class range [0, n)" (index: the label, size: the classes);
// TapOutOfRange -> IndexError "<op>(): tap index i is out of range for size n" (resample
// taps; dim 0: resample_taps, 1: resample_taps_adjoint); PivotOutOfRange -> RuntimeError
// "linalg.ldl_solve: pivots[d] = i is not ..." (dim: the position, size: the order n);
// ClassTargetOutOfRange -> IndexError "Target i is out of bounds." (cross_entropy).
enum class DeviceErrorCode : int32_t {
  None = 0, ZeroDivision = 1, IndexOutOfRange = 2, GatherOutOfRange = 3, SliceOutOfRange = 4,
  CtcTargetOutOfRange = 5, TapOutOfRange = 6, PivotOutOfRange = 7, ClassTargetOutOfRange = 8
};

struct DeviceErrorSlot {
  int32_t code;  // DeviceErrorCode; the first kernel to set it wins (atomicCAS)
  int32_t dim;   // IndexOutOfRange: the dimension indexed
  int64_t index;  // IndexOutOfRange: the bad index
  int64_t size;   // IndexOutOfRange: the size of that dimension
};

// A slot of `device` for the launch about to be made, addressable by its kernels.
DeviceErrorSlot* device_error_slot(int device);
// Note [Fixed replays] (flush_graphs.h): while `into` is set on this thread,
// device_error_slot() hands out kept slots (never handed out again, read by every
// check) and appends them to it; returns the setting it replaces (null: none).
std::vector<DeviceErrorSlot*>* keep_error_slots(std::vector<DeviceErrorSlot*>* into);
// Gives back kept slots of `device` once nothing launches into them any more.
void release_error_slots(int device, const std::vector<DeviceErrorSlot*>& slots);
// Raises (and clears) the error a kernel of `device` recorded, if any. Call only after
// the device's stream has been waited for.
void raise_device_error(int device);

#if defined(__CUDACC__)
__device__ inline void report_device_error(DeviceErrorSlot* slot, DeviceErrorCode code, int32_t dim = 0,
                                           int64_t index = 0, int64_t size = 0) {
  if (atomicCAS(&slot->code, 0, int32_t(code)) == 0) {
    slot->dim = dim;
    slot->index = index;
    slot->size = size;
  }
}
#endif

}  // namespace lucid::cuda
