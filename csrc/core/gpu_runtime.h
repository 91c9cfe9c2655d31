// The engine's view of a GPU. Core depends only on this interface; the CUDA backend
// (csrc/backend/cuda) implements it and registers itself at import, so core and the
// CPU build never include a CUDA header. Without a registered runtime every GPU
// request raises a RuntimeError saying that lucid has no GPU.
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/dtype.h"
#include "core/shape.h"
#include "core/storage.h"

namespace lucid {

enum class CopyKind { HostToDevice, DeviceToHost, DeviceToDevice };

struct MemoryStats {
  size_t allocated = 0;      // bytes handed to live tensors
  size_t max_allocated = 0;  // peak of `allocated` since start or reset
  size_t reserved = 0;       // bytes held from the driver, cached ones included
};

class GpuRuntime {
 public:
  virtual ~GpuRuntime() = default;
  virtual int device_count() = 0;
  virtual GpuStorage allocate(size_t nbytes, int device) = 0;
  virtual SharedStorage allocate_shared(size_t nbytes, int device) = 0;
  // Copies nbytes between host and device memory, ordered on the device's stream.
  // A copy to or from pageable host memory returns when the host side is done.
  virtual void copy(void* dst, const void* src, size_t nbytes, CopyKind kind, int device) = 0;
  // dst[i] = src[i] element-wise over `shape`, both on the device, byte strides,
  // same dtype. Used for contiguous(), clone() and copy_ between strided views.
  virtual void strided_copy(std::byte* dst, const Stride& dst_stride, const std::byte* src,
                            const Stride& src_stride, const Shape& shape, size_t itemsize,
                            int device) = 0;
  // dst[i] = cast(src[i]) between two dtypes, both on the device, byte strides, with
  // the host's cast rules (core/copy.h).
  virtual void cast_copy(std::byte* dst, const Stride& dst_stride, Dtype dst_dtype, const std::byte* src,
                         const Stride& src_stride, Dtype src_dtype, const Shape& shape, int device) = 0;
  // Writes the itemsize-byte pattern `bits` (a value already converted to the dtype)
  // into every element of `shape` at dst (byte strides). The value travels as a
  // kernel argument: no upload, so no host synchronisation (fill_, zeros, full, the
  // seeds and zero gradients of backward).
  virtual void fill(std::byte* dst, const Stride& stride, const Shape& shape, uint64_t bits, size_t itemsize,
                    int device) = 0;
  virtual void synchronize(int device) = 0;  // waits for all work queued on the device
  // Work queued on `waiting` from now on starts only after the work queued so far on
  // `producer` (an event, no host wait): copies between two GPUs (Note [Copies between
  // GPUs] in tensor_impl.cpp).
  virtual void order_after(int waiting, int producer) = 0;
  // The device's stream as an integer (a cudaStream_t), for DLPack consumers and
  // producers that must order their work with lucid's.
  virtual uintptr_t stream_handle(int device) = 0;
  // Events (lucid.gpu.Event): opaque handles (a cudaEvent_t) of `device`. record marks
  // the point the device's stream has reached; wait makes the stream wait for an event
  // (no host wait); query says whether it has passed; synchronize waits on the host (and
  // raises what the device reported, Note [Errors found on the device]); elapsed_ms is
  // the time between two recorded timing events.
  virtual uintptr_t event_create(int device, bool timing) = 0;
  virtual void event_destroy(uintptr_t event, int device) = 0;
  virtual void event_record(uintptr_t event, int device) = 0;
  virtual void event_wait(uintptr_t event, int device) = 0;
  virtual bool event_query(uintptr_t event, int device) = 0;
  virtual void event_synchronize(uintptr_t event, int device) = 0;
  virtual float event_elapsed_ms(uintptr_t start, uintptr_t end, int device) = 0;
  virtual MemoryStats memory_stats(int device) = 0;
  virtual void reset_peak_memory_stats(int device) = 0;
  virtual void empty_cache() = 0;
};

void register_gpu_runtime(GpuRuntime* runtime);
GpuRuntime* gpu_runtime_or_null();
// The runtime, checked to exist and to have `device`; raises otherwise.
GpuRuntime& gpu_runtime(int device = 0);

}  // namespace lucid
