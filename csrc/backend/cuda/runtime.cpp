#include "backend/cuda/runtime.h"

#include <cuda_runtime_api.h>

#include "backend/cuda/cast_kernel.cuh"
#include "backend/cuda/caching_allocator.h"
#include "backend/cuda/check.h"
#include "backend/cuda/device_error.h"
#include "backend/cuda/device_guard.h"
#include "backend/cuda/flush_graphs.h"
#include "backend/cuda/pinned_memory.h"
#include "backend/cuda/stream.h"
#include "backend/cuda/strided_copy.h"
#include "core/copy.h"
#include "core/pending.h"

namespace lucid::cuda {

int CudaRuntime::device_count() { return cuda::device_count(); }

GpuStorage CudaRuntime::allocate(size_t nbytes, int device) {
  try {
    return CachingAllocator::instance().allocate(nbytes, device);
  } catch (const OutOfMemoryError&) {
    // Recorded calls keep their operands alive: running them frees what they were
    // the last to use (Note [Lazy GPU execution]). Inside a flush there is nothing to run.
    if (!pending::has_pending(device) || pending::in_flush()) throw;
  }
  pending::flush(device);
  return CachingAllocator::instance().allocate(nbytes, device);
}

SharedStorage CudaRuntime::allocate_shared(size_t nbytes, int device) {
  return allocate_pinned_mapped(nbytes, device);
}

void CudaRuntime::copy(void* dst, const void* src, size_t nbytes, CopyKind kind, int device) {
  pending::StreamTurn turn(device);  // Note [Lazy GPU execution]: recorded work first
  if (nbytes == 0) return;
  check_device(device);
  LUCID_CHECK(dst != nullptr && src != nullptr, RuntimeError,
              "internal: GPU copy of ", nbytes, " bytes with a null pointer");
  if (kind != CopyKind::DeviceToDevice) refuse_in_capture("a copy between host and device");
  DeviceGuard guard(device);
  cudaStream_t s = stream(device);
  // cudaMemcpyDefault lets CUDA infer the direction from the pointers (unified
  // addressing, always on for 64-bit sm_90 builds). It accepts everything the
  // explicit kinds do, plus a shared storage's pinned pointer on either side and a
  // copy between two GPUs; `kind` still decides whether we wait below.
  LUCID_CUDA_CHECK(cudaMemcpyAsync(dst, src, nbytes, cudaMemcpyDefault, s));
  // The host side may be pageable memory the caller reads or frees as soon as we
  // return (a NumPy array, a temporary vector), so host copies are synchronous.
  // Device-to-device stays queued: later work on the same stream is ordered after it.
  if (kind != CopyKind::DeviceToDevice) {
    LUCID_CUDA_CHECK(cudaStreamSynchronize(s));
    raise_device_error(device);  // Note [Errors found on the device]
  }
}

void CudaRuntime::strided_copy(std::byte* dst, const Stride& dst_stride, const std::byte* src,
                               const Stride& src_stride, const Shape& shape, size_t itemsize,
                               int device) {
  pending::StreamTurn turn(device);  // Note [Lazy GPU execution]: recorded work first
  cuda::strided_copy(dst, dst_stride, src, src_stride, shape, itemsize, device);
}

void CudaRuntime::cast_copy(std::byte* dst, const Stride& dst_stride, Dtype dst_dtype, const std::byte* src,
                            const Stride& src_stride, Dtype src_dtype, const Shape& shape, int device) {
  pending::StreamTurn turn(device);  // Note [Lazy GPU execution]: recorded work first
  static_assert(int(CastType::C128) == int(Dtype::C128) && int(CastType::F16) == int(Dtype::F16),
                "CastType must mirror lucid::Dtype");
  for (int64_t s : shape)
    if (s == 0) return;
  Stride ds = dst_stride, ss = src_stride;
  Shape dims = collapse_dims(shape, {&ds, &ss});
  if (dims.empty()) dims = {1}, ds = {0}, ss = {0};  // a single element
  LUCID_CHECK(dims.size() <= size_t(kMaxCopyDims), RuntimeError, "cast on gpu supports at most ",
              kMaxCopyDims, " non-mergeable dimensions; got ", dims.size());
  StridedCopyParams p;
  p.ndim = int(dims.size());
  int64_t numel = 1;
  for (size_t d = 0; d < dims.size(); ++d) {
    p.sizes[d] = dims[d];
    p.dst_strides[d] = ds[d];
    p.src_strides[d] = ss[d];
    numel *= dims[d];
  }
  check_device(device);
  DeviceGuard guard(device);
  const bool contiguous = dims.size() == 1 && ds[0] == int64_t(dtype_size(dst_dtype)) &&
                          ss[0] == int64_t(dtype_size(src_dtype));  // byte strides
  if (contiguous && launch_contiguous_cast(dst, CastType(int(dst_dtype)), src, CastType(int(src_dtype)), numel,
                                           stream(device))) {
    LUCID_CUDA_CHECK(cudaGetLastError());
    return;
  }
  LUCID_CUDA_CHECK(launch_strided_cast(dst, CastType(int(dst_dtype)), src, CastType(int(src_dtype)), numel, p,
                                       stream(device)));
}

void CudaRuntime::fill(std::byte* dst, const Stride& stride, const Shape& shape, uint64_t bits, size_t itemsize,
                       int device) {
  pending::StreamTurn turn(device);  // Note [Lazy GPU execution]: recorded work first
  LUCID_CHECK(itemsize == 1 || itemsize == 2 || itemsize == 4 || itemsize == 8, RuntimeError,
              "internal: GPU fill of ", itemsize, "-byte items");
  // The copy planner with a source that never moves (stride 0 on the same address).
  const StridedCopyPlan plan = plan_strided_copy(dst, stride, dst, Stride(shape.size(), 0), shape, itemsize);
  if (plan.numel == 0) return;
  LUCID_CHECK(dst != nullptr, RuntimeError, "internal: GPU fill with a null pointer");
  LUCID_CHECK(plan.elem_size == itemsize, RuntimeError, "internal: GPU fill of a view not aligned to its items");
  check_device(device);
  DeviceGuard guard(device);
  bool bytes_repeat = true;  // every byte of the pattern alike: a memset does it
  for (size_t i = 1; i < itemsize; ++i) bytes_repeat = bytes_repeat && ((bits >> (8 * i)) & 0xff) == (bits & 0xff);
  if (plan.contiguous && bytes_repeat) {
    LUCID_CUDA_CHECK(cudaMemsetAsync(dst, int(bits & 0xff), size_t(plan.numel) * itemsize, stream(device)));
    return;
  }
  LUCID_CUDA_CHECK(launch_strided_fill(dst, bits, plan.numel, itemsize, plan.params, stream(device)));
}

void CudaRuntime::order_after(int waiting, int producer) {
  pending::flush(waiting);
  pending::flush(producer);
  if (waiting == producer) return;  // one stream per device: already in order
  check_device(waiting);
  check_device(producer);
  cudaEvent_t done = nullptr;
  {
    DeviceGuard guard(producer);
    LUCID_CUDA_CHECK(cudaEventCreateWithFlags(&done, cudaEventDisableTiming));
    LUCID_CUDA_CHECK(cudaEventRecord(done, stream(producer)));
  }
  DeviceGuard guard(waiting);
  LUCID_CUDA_CHECK(cudaStreamWaitEvent(stream(waiting), done, 0));
  LUCID_CUDA_CHECK(cudaEventDestroy(done));  // released once the wait is satisfied
}

void CudaRuntime::synchronize(int device) {
  pending::StreamTurn turn(device);  // Note [Lazy GPU execution]: recorded work first
  // All of lucid's work on a device is on its one stream, so waiting for the stream
  // is waiting for the device (cheaper than cudaDeviceSynchronize, and it does not
  // wait for other libraries' streams).
  sync_stream(device);
}

uintptr_t CudaRuntime::stream_handle(int device) {
  pending::flush(device);  // Note [Lazy GPU execution]: recorded work first
  DeviceGuard guard(device);
  return reinterpret_cast<uintptr_t>(stream(device));
}

namespace {
cudaEvent_t as_event(uintptr_t e) { return reinterpret_cast<cudaEvent_t>(e); }
}  // namespace

uintptr_t CudaRuntime::event_create(int device, bool timing) {
  check_device(device);
  DeviceGuard guard(device);
  cudaEvent_t e = nullptr;
  LUCID_CUDA_CHECK(cudaEventCreateWithFlags(&e, timing ? cudaEventDefault : cudaEventDisableTiming));
  return reinterpret_cast<uintptr_t>(e);
}

void CudaRuntime::event_destroy(uintptr_t event, int device) {
  DeviceGuard guard(device);
  cudaEventDestroy(as_event(event));  // from a destructor: nothing to report
}

void CudaRuntime::event_record(uintptr_t event, int device) {
  pending::StreamTurn turn(device);  // Note [Lazy GPU execution]: recorded work first
  DeviceGuard guard(device);
  LUCID_CUDA_CHECK(cudaEventRecord(as_event(event), stream(device)));
}

void CudaRuntime::event_wait(uintptr_t event, int device) {
  pending::StreamTurn turn(device);  // Note [Lazy GPU execution]: recorded work first
  DeviceGuard guard(device);
  LUCID_CUDA_CHECK(cudaStreamWaitEvent(stream(device), as_event(event), 0));
}

bool CudaRuntime::event_query(uintptr_t event, int device) {
  pending::flush(device);  // Note [Lazy GPU execution]: recorded work first
  DeviceGuard guard(device);
  const cudaError_t status = cudaEventQuery(as_event(event));
  if (status == cudaErrorNotReady) {
    cudaGetLastError();  // not an error: clear it
    return false;
  }
  LUCID_CUDA_CHECK(status);
  return true;
}

void CudaRuntime::event_synchronize(uintptr_t event, int device) {
  pending::flush(device);  // Note [Lazy GPU execution]: recorded work first
  DeviceGuard guard(device);
  LUCID_CUDA_CHECK(cudaEventSynchronize(as_event(event)));
  raise_device_error(device);  // Note [Errors found on the device]
}

float CudaRuntime::event_elapsed_ms(uintptr_t start, uintptr_t end, int device) {
  DeviceGuard guard(device);
  float ms = 0;
  LUCID_CUDA_CHECK(cudaEventElapsedTime(&ms, as_event(start), as_event(end)));
  return ms;
}

MemoryStats CudaRuntime::memory_stats(int device) {
  return CachingAllocator::instance().stats(device);
}

void CudaRuntime::reset_peak_memory_stats(int device) {
  CachingAllocator::instance().reset_peak(device);
}

void CudaRuntime::empty_cache() {
  CachingAllocator::instance().empty_cache();
  release_cached_pinned_memory();
}

}  // namespace lucid::cuda
