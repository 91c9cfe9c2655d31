// Host-built tables (a pool's windows, ...) moved to the device without a host sync.
//
// Note [Tables through kernel parameters]
// Some primitives carry host-side lists whose length follows the tensor's sizes (a
// pool's windows: ops::PoolWindows holds a std::vector per dim), so they may be too
// big for one kernel's parameters, and a kernel reading them from the parameter bank
// would serialise its warps (different lanes want different entries). They have to
// reach global memory. The ways there:
//   - cudaMemcpyAsync from the vector (pageable memory) may synchronise the host with
//     the stream, which the adapters must not do (CUDA_HELPER_GUIDE, rule 2);
//   - a pinned staging buffer copies asynchronously, but may be reused or freed only
//     once the copy has run: that needs an event per use and a pool of buffers;
//   - kernel parameters are copied by the driver when the kernel is launched, so the
//     host memory is free again at once. A copy kernel whose parameter is (a chunk of)
//     the table writes it into a block of the caching allocator, on the device's one
//     stream, ahead of the kernels that read it.
// We take the last: no sync, no staging pool, at the price of one tiny launch per
// 30 KiB of table (sm_90 with CUDA >= 12.1 accepts 32764 bytes of parameters). The
// block returns to the allocator when the adapter ends; that is safe because
// everything after it on the stream runs after the kernels that read it
// (caching_allocator.h).
#pragma once

#include <cstdint>
#include <cstring>
#include <vector>

#include "core/storage.h"

namespace lucid::cuda {

// A table of 8-byte words (int64 and double entries) built on the host; each add
// returns the entry's offset in words, for the kernels' pointers into the upload.
class ParamTable {
 public:
  int64_t add(const std::vector<int64_t>& v) { return append(v.data(), v.size()); }
  int64_t add(const std::vector<double>& v) { return append(v.data(), v.size()); }
  const std::vector<uint64_t>& words() const { return words_; }

 private:
  template <typename T>
  int64_t append(const T* p, size_t n) {
    static_assert(sizeof(T) == sizeof(uint64_t));
    const int64_t at = int64_t(words_.size());
    words_.resize(words_.size() + n);
    if (n) std::memcpy(words_.data() + at, p, n * sizeof(uint64_t));
    return at;
  }
  std::vector<uint64_t> words_;
};

// The table in device memory of `device`, written by kernels queued on its stream
// (Note [Tables through kernel parameters]). Keep the storage alive until the kernels
// that read it are queued.
GpuStorage upload_table(const ParamTable& table, int device);

// The device address of entry `offset` of an uploaded table, as T (int64_t or double).
template <typename T>
const T* table_entry(const GpuStorage& s, int64_t offset) {
  return reinterpret_cast<const T*>(s.ptr()) + offset;
}

}  // namespace lucid::cuda
