// upload_table (param_table.h): the table travels in the parameters of copy kernels,
// Note [Tables through kernel parameters]. Three parameter sizes, so that a short
// table (the common case: a few dozen windows) does not make the driver copy 30 KiB.
#include <algorithm>

#include "backend/cuda/caching_allocator.h"
#include "backend/cuda/check.h"
#include "backend/cuda/device_guard.h"
#include "backend/cuda/param_table.h"
#include "backend/cuda/stream.h"

namespace lucid::cuda {

namespace {

template <int Words>
struct Chunk {
  uint64_t word[Words];
};

// 3840 words = 30 KiB: with the other two parameters, under sm_90's 32764 bytes.
constexpr int kSmallWords = 64, kMediumWords = 512, kLargeWords = 3840;

template <int Words>
__global__ void copy_chunk(uint64_t* dst, int n, const __grid_constant__ Chunk<Words> chunk) {
  for (int i = int(threadIdx.x); i < n; i += int(blockDim.x)) dst[i] = chunk.word[i];
}

template <int Words>
void send(uint64_t* dst, const uint64_t* src, int n, cudaStream_t s) {
  Chunk<Words> chunk;
  std::copy(src, src + n, chunk.word);
  copy_chunk<Words><<<1, 256, 0, s>>>(dst, n, chunk);
  LUCID_CUDA_CHECK(cudaGetLastError());
}

}  // namespace

GpuStorage upload_table(const ParamTable& table, int device) {
  const std::vector<uint64_t>& w = table.words();
  GpuStorage out = CachingAllocator::instance().allocate(std::max<size_t>(w.size(), 1) * sizeof(uint64_t), device);
  DeviceGuard guard(device);
  cudaStream_t s = stream(device);
  auto* dst = reinterpret_cast<uint64_t*>(out.ptr());
  for (size_t at = 0; at < w.size();) {
    const int n = int(std::min<size_t>(w.size() - at, kLargeWords));
    if (n <= kSmallWords) send<kSmallWords>(dst + at, w.data() + at, n, s);
    else if (n <= kMediumWords) send<kMediumWords>(dst + at, w.data() + at, n, s);
    else send<kLargeWords>(dst + at, w.data() + at, n, s);
    at += size_t(n);
  }
  return out;
}

}  // namespace lucid::cuda
