// lucid::GpuRuntime implemented with the CUDA runtime API. A thin facade: memory
// comes from the caching allocator, shared memory from pinned_memory, strided copies
// from the strided copy kernel, and all work goes on the per-device stream.
// Constructing it touches no CUDA API; contexts are created on first real use.
#pragma once

#include "core/gpu_runtime.h"

namespace lucid::cuda {

class CudaRuntime final : public GpuRuntime {
 public:
  int device_count() override;
  GpuStorage allocate(size_t nbytes, int device) override;
  SharedStorage allocate_shared(size_t nbytes, int device) override;
  void copy(void* dst, const void* src, size_t nbytes, CopyKind kind, int device) override;
  void strided_copy(std::byte* dst, const Stride& dst_stride, const std::byte* src,
                    const Stride& src_stride, const Shape& shape, size_t itemsize,
                    int device) override;
  void cast_copy(std::byte* dst, const Stride& dst_stride, Dtype dst_dtype, const std::byte* src,
                 const Stride& src_stride, Dtype src_dtype, const Shape& shape, int device) override;
  void fill(std::byte* dst, const Stride& stride, const Shape& shape, uint64_t bits, size_t itemsize,
            int device) override;
  void synchronize(int device) override;
  void order_after(int waiting, int producer) override;
  uintptr_t stream_handle(int device) override;
  uintptr_t event_create(int device, bool timing) override;
  void event_destroy(uintptr_t event, int device) override;
  void event_record(uintptr_t event, int device) override;
  void event_wait(uintptr_t event, int device) override;
  bool event_query(uintptr_t event, int device) override;
  void event_synchronize(uintptr_t event, int device) override;
  float event_elapsed_ms(uintptr_t start, uintptr_t end, int device) override;
  MemoryStats memory_stats(int device) override;
  void reset_peak_memory_stats(int device) override;
  void empty_cache() override;
  // device_info.cpp
  DeviceProperties properties(int device) override;
  std::pair<size_t, size_t> memory_info(int device) override;
  void set_memory_fraction(double fraction, int device) override;
  double memory_fraction(int device) override;
  std::vector<std::string> arch_list() override;
  int nvtx_range_push(const std::string& message) override;
  int nvtx_range_pop() override;
  uint64_t nvtx_range_start(const std::string& message) override;
  void nvtx_range_end(uint64_t id) override;
  void nvtx_mark(const std::string& message) override;
};

}  // namespace lucid::cuda
