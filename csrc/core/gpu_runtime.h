// The engine's view of a GPU. Core depends only on this interface; the CUDA backend
// (csrc/backend/cuda) implements it and registers itself at import, so core and the
// CPU build never include a CUDA header. Without a registered runtime every GPU
// request raises a RuntimeError saying that lucid has no GPU.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "core/dtype.h"
#include "core/shape.h"
#include "core/storage.h"

namespace lucid {

enum class CopyKind { HostToDevice, DeviceToHost, DeviceToDevice };

struct MemoryStats {
  size_t allocated = 0;      // bytes handed to live tensors
  size_t max_allocated = 0;  // peak of `allocated` since start or reset
  size_t reserved = 0;       // bytes held from the driver, cached ones included
  size_t max_reserved = 0;   // peak of `reserved` since start or reset
};

// What torch.cuda.get_device_properties reports of a GPU.
struct DeviceProperties {
  std::string name, uuid;
  int major = 0, minor = 0;
  int multi_processor_count = 0, max_threads_per_multi_processor = 0, warp_size = 0, regs_per_multiprocessor = 0;
  size_t total_memory = 0, l2_cache_size = 0;
  bool is_integrated = false, is_multi_gpu_board = false;
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
  virtual DeviceProperties properties(int device) = 0;
  // The device's free and total memory, as the driver counts them (cudaMemGetInfo).
  virtual std::pair<size_t, size_t> memory_info(int device) = 0;
  // A cap on what the caching allocator holds from the driver for `device`, as a
  // fraction of its total memory (torch.cuda.set_per_process_memory_fraction): a request
  // past it raises OutOfMemoryError. 1 (the default) is no cap beyond the device's.
  virtual void set_memory_fraction(double fraction, int device) = 0;
  virtual double memory_fraction(int device) = 0;
  // The GPU architectures this build carries code for: "sm_90" (machine code) and
  // "compute_90" (PTX the driver compiles for newer GPUs).
  virtual std::vector<std::string> arch_list() = 0;
  // NVTX annotations for profilers (Nsight Systems; nothing without one attached):
  // ranges nest per thread; push returns the depth before it, pop the depth after
  // (-1: no open range), as nvtxRangePushA / nvtxRangePop do.
  virtual int nvtx_range_push(const std::string& message) = 0;
  virtual int nvtx_range_pop() = 0;
  // A range that need not nest or end on the thread that started it (nvtxRangeStartA).
  virtual uint64_t nvtx_range_start(const std::string& message) = 0;
  virtual void nvtx_range_end(uint64_t id) = 0;
  virtual void nvtx_mark(const std::string& message) = 0;
};

void register_gpu_runtime(GpuRuntime* runtime);
GpuRuntime* gpu_runtime_or_null();
// The runtime, checked to exist and to have `device`; raises otherwise.
GpuRuntime& gpu_runtime(int device = 0);

}  // namespace lucid
