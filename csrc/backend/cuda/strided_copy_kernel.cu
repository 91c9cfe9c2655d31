// The strided copy kernel. One thread copies one element (grid-stride loop), moving
// it as a single 1/2/4/8/16-byte load and store: the kernel only moves bits, so it
// is templated on an unsigned type of the element's size, not on the dtype, and the
// 11 dtypes share 5 instantiations.
#include "backend/cuda/strided_copy_kernel.cuh"

namespace lucid::cuda {

namespace {

// 16-byte element (e.g. complex128); alignas makes the copy one 128-bit access.
struct alignas(16) Bytes16 {
  uint64_t lo;
  uint64_t hi;
};

constexpr int kThreads = 256;
// Cap on the grid: beyond ~a million blocks the grid-stride loop gives each thread
// several elements, which costs nothing and keeps the block count inside limits.
constexpr int64_t kMaxBlocks = int64_t(1) << 20;

// No __restrict__: overlapping src and dst are not supported, but must not turn into
// reads from the non-coherent cache of data this kernel writes.
template <typename T>
__global__ void strided_copy_kernel(char* dst, const char* src, int64_t numel,
                                    StridedCopyParams p) {
  const int64_t step = int64_t(blockDim.x) * int64_t(gridDim.x);
  for (int64_t i = int64_t(blockIdx.x) * int64_t(blockDim.x) + int64_t(threadIdx.x); i < numel;
       i += step) {
    int64_t d_off;
    int64_t s_off;
    strided_offsets(i, p, &d_off, &s_off);
    *reinterpret_cast<T*>(dst + d_off) = *reinterpret_cast<const T*>(src + s_off);
  }
}

template <typename T>
void launch(void* dst, const void* src, int64_t numel, const StridedCopyParams& p,
            unsigned blocks, cudaStream_t stream) {
  strided_copy_kernel<T><<<blocks, kThreads, 0, stream>>>(
      static_cast<char*>(dst), static_cast<const char*>(src), numel, p);
}

}  // namespace

cudaError_t launch_strided_copy(void* dst, const void* src, int64_t numel, size_t elem_size,
                                const StridedCopyParams& params, cudaStream_t stream) {
  if (numel <= 0) return cudaSuccess;
  if (params.ndim < 1 || params.ndim > kMaxCopyDims) return cudaErrorInvalidValue;
  int64_t blocks = (numel + kThreads - 1) / kThreads;
  if (blocks > kMaxBlocks) blocks = kMaxBlocks;
  const auto grid = static_cast<unsigned>(blocks);
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
