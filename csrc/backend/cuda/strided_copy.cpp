#include "backend/cuda/strided_copy.h"

#include <vector>

#include <cuda_runtime_api.h>

#include "backend/cuda/check.h"
#include "backend/cuda/device_guard.h"
#include "backend/cuda/stream.h"

namespace lucid::cuda {

namespace {

struct Dim {
  int64_t size;
  int64_t dst;  // byte strides
  int64_t src;
};

bool divides(size_t a, int64_t v) { return v % static_cast<int64_t>(a) == 0; }

// Widest power of two <= 16 that divides the item size, both addresses and every
// stride of a dim that is actually walked: the largest access that is aligned for
// every element of the copy.
size_t pick_elem_size(const std::byte* dst, const std::byte* src, const std::vector<Dim>& dims,
                      size_t itemsize) {
  const auto dst_addr = static_cast<int64_t>(reinterpret_cast<uintptr_t>(dst) & 0xff);
  const auto src_addr = static_cast<int64_t>(reinterpret_cast<uintptr_t>(src) & 0xff);
  for (size_t a = 16; a > 1; a /= 2) {
    if (itemsize % a != 0 || !divides(a, dst_addr) || !divides(a, src_addr)) continue;
    bool ok = true;
    for (const Dim& d : dims) ok = ok && divides(a, d.dst) && divides(a, d.src);
    if (ok) return a;
  }
  return 1;
}

}  // namespace

StridedCopyPlan plan_strided_copy(const std::byte* dst, const Stride& dst_stride,
                                  const std::byte* src, const Stride& src_stride,
                                  const Shape& shape, size_t itemsize) {
  LUCID_CHECK(itemsize > 0, RuntimeError, "internal: strided_copy with item size 0");
  LUCID_CHECK(dst_stride.size() == shape.size() && src_stride.size() == shape.size(),
              RuntimeError, "internal: strided_copy got ", shape.size(), " dims but ",
              dst_stride.size(), " dst strides and ", src_stride.size(), " src strides");
  StridedCopyPlan plan;

  // 1. Drop size-1 dims; any 0-size dim means there is nothing to copy.
  std::vector<Dim> dims;
  dims.reserve(shape.size() + 1);
  for (size_t d = 0; d < shape.size(); ++d) {
    LUCID_CHECK(shape[d] >= 0, RuntimeError, "internal: strided_copy with negative size ",
                shape[d]);
    if (shape[d] == 0) return plan;
    if (shape[d] != 1) dims.push_back({shape[d], dst_stride[d], src_stride[d]});
  }

  // 2. Element size of the kernel; split items that are wider than it.
  const size_t elem = pick_elem_size(dst, src, dims, itemsize);
  const auto e = static_cast<int64_t>(elem);
  if (elem < itemsize) dims.push_back({static_cast<int64_t>(itemsize / elem), e, e});
  if (dims.empty()) dims.push_back({1, e, e});  // a single element (0-d tensor)

  // 3. Merge from the innermost dim outwards. merged[0] is the innermost.
  std::vector<Dim> merged;
  merged.reserve(dims.size());
  merged.push_back(dims.back());
  for (size_t k = dims.size() - 1; k-- > 0;) {
    const Dim& outer = dims[k];
    Dim& inner = merged.back();
    if (outer.dst == inner.dst * inner.size && outer.src == inner.src * inner.size)
      inner.size *= outer.size;  // the pair walks memory like one dim of the inner stride
    else
      merged.push_back(outer);
  }
  // 4. Widen the element over a contiguous innermost run: a [S, B, E] <-> [B, S, E]
  //    transpose of 16-bit data moves 16 bytes per thread, not 2 (the index arithmetic,
  //    a 64-bit division per dim, costs the same per element whatever its width).
  size_t wide = elem;
  Dim& run = merged.front();
  if (run.dst == e && run.src == e && merged.size() > 1) {
    const auto dst_addr = static_cast<int64_t>(reinterpret_cast<uintptr_t>(dst) & 0xff);
    const auto src_addr = static_cast<int64_t>(reinterpret_cast<uintptr_t>(src) & 0xff);
    for (size_t a = 16; a > elem; a /= 2) {
      bool ok = divides(a, run.size * e) && divides(a, dst_addr) && divides(a, src_addr);
      for (size_t k = 1; ok && k < merged.size(); ++k) ok = divides(a, merged[k].dst) && divides(a, merged[k].src);
      if (ok) {
        wide = a;
        break;
      }
    }
    if (wide > elem) {
      run.size = run.size * e / static_cast<int64_t>(wide);
      run.dst = run.src = static_cast<int64_t>(wide);
    }
  }
  LUCID_CHECK(merged.size() <= static_cast<size_t>(kMaxCopyDims), RuntimeError,
              "strided copy supports at most ", kMaxCopyDims,
              " non-mergeable dimensions; got ", merged.size());

  plan.elem_size = wide;
  plan.params.ndim = static_cast<int>(merged.size());
  plan.numel = 1;
  for (size_t k = 0; k < merged.size(); ++k) {
    const Dim& d = merged[merged.size() - 1 - k];  // params are outermost first
    plan.params.sizes[k] = d.size;
    plan.params.dst_strides[k] = d.dst;
    plan.params.src_strides[k] = d.src;
    plan.numel *= d.size;
  }
  plan.contiguous = merged.size() == 1 && merged[0].dst == e && merged[0].src == e;  // (never widened)
  return plan;
}

void strided_copy(std::byte* dst, const Stride& dst_stride, const std::byte* src,
                  const Stride& src_stride, const Shape& shape, size_t itemsize, int device) {
  const StridedCopyPlan plan = plan_strided_copy(dst, dst_stride, src, src_stride, shape, itemsize);
  if (plan.numel == 0) return;
  LUCID_CHECK(dst != nullptr && src != nullptr, RuntimeError,
              "internal: strided_copy with a null pointer");
  check_device(device);
  DeviceGuard guard(device);  // kernels launch into the current device's context
  cudaStream_t s = stream(device);
  if (plan.contiguous) {
    // Default kind: the direction comes from the pointers (unified addressing), so
    // a shared storage's mapped pointer works on either side.
    LUCID_CUDA_CHECK(cudaMemcpyAsync(dst, src, static_cast<size_t>(plan.numel) * plan.elem_size,
                                     cudaMemcpyDefault, s));
    return;
  }
  LUCID_CUDA_CHECK(launch_strided_copy(dst, src, plan.numel, plan.elem_size, plan.params, s));
}

}  // namespace lucid::cuda
