// The strided copy kernel. One thread copies one element (grid-stride loop), moving
// it as a single 1/2/4/8/16-byte load and store: the kernel only moves bits, so it
// is templated on an unsigned type of the element's size, not on the dtype, and the
// 11 dtypes share 5 instantiations.
#include "backend/cuda/strided_copy_kernel.cuh"

namespace lucid::cuda {

namespace {

// No __restrict__: overlapping src and dst are not supported, but must not turn into
// reads from the non-coherent cache of data this kernel writes.
template <typename T>
__global__ void strided_copy_kernel(char* dst, const char* src, int64_t numel,
                                    StridedCopyParams p) {
  for_each_strided(numel, p, [&](int64_t d_off, int64_t s_off) {
    *reinterpret_cast<T*>(dst + d_off) = *reinterpret_cast<const T*>(src + s_off);
  });
}

template <typename T>
void launch(void* dst, const void* src, int64_t numel, const StridedCopyParams& p,
            unsigned blocks, cudaStream_t stream) {
  strided_copy_kernel<T><<<blocks, kCopyThreads, 0, stream>>>(
      static_cast<char*>(dst), static_cast<const char*>(src), numel, p);
}

template <typename T>
__global__ void strided_fill_kernel(char* dst, T value, int64_t numel, StridedCopyParams p) {
  for_each_strided(numel, p, [&](int64_t d_off, int64_t) { *reinterpret_cast<T*>(dst + d_off) = value; });
}

template <typename T>
void launch_fill(void* dst, uint64_t bits, int64_t numel, const StridedCopyParams& p, cudaStream_t stream) {
  strided_fill_kernel<T><<<copy_grid(numel), kCopyThreads, 0, stream>>>(static_cast<char*>(dst), T(bits), numel, p);
}

}  // namespace

cudaError_t launch_strided_fill(void* dst, uint64_t bits, int64_t numel, size_t elem_size,
                                const StridedCopyParams& params, cudaStream_t stream) {
  if (numel <= 0) return cudaSuccess;
  if (params.ndim < 1 || params.ndim > kMaxCopyDims) return cudaErrorInvalidValue;
  switch (elem_size) {
    case 1: launch_fill<uint8_t>(dst, bits, numel, params, stream); break;
    case 2: launch_fill<uint16_t>(dst, bits, numel, params, stream); break;
    case 4: launch_fill<uint32_t>(dst, bits, numel, params, stream); break;
    case 8: launch_fill<uint64_t>(dst, bits, numel, params, stream); break;
    default: return cudaErrorInvalidValue;
  }
  return cudaGetLastError();
}

cudaError_t launch_strided_copy(void* dst, const void* src, int64_t numel, size_t elem_size,
                                const StridedCopyParams& params, cudaStream_t stream) {
  if (numel <= 0) return cudaSuccess;
  if (params.ndim < 1 || params.ndim > kMaxCopyDims) return cudaErrorInvalidValue;
  const unsigned grid = copy_grid(numel);
  switch (elem_size) {
    case 1: launch<uint8_t>(dst, src, numel, params, grid, stream); break;
    case 2: launch<uint16_t>(dst, src, numel, params, grid, stream); break;
    case 4: launch<uint32_t>(dst, src, numel, params, grid, stream); break;
    case 8: launch<uint64_t>(dst, src, numel, params, grid, stream); break;
    case 16: launch<Bytes16>(dst, src, numel, params, grid, stream); break;
    default: return cudaErrorInvalidValue;
  }
  // A launch reports configuration errors only through the last-error slot.
  return cudaGetLastError();
}

}  // namespace lucid::cuda
