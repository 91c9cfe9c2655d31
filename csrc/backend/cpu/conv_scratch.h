// Per-thread scratch memory for the convolutions' column matrices and padded images.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>

#include "backend/cpu/blas.h"
#include "core/parallel.h"

namespace lucid::cpu {

// Scratch memory: left uninitialised (its users write all of it before reading:
// im2col, a padded image) and kept per thread between calls up to kKeepBytes, so a
// training loop does not map and page-fault megabytes of fresh memory every call.
// Nested use on one thread (never happens: the kernels do not recurse) would get
// a private allocation.
template <typename T>
class Buffer {
 public:
  explicit Buffer(int64_t n) {
    const size_t bytes = size_t(std::max<int64_t>(n, 0)) * sizeof(T);
    Cache& c = cache();
    if (bytes <= kKeepBytes && !c.in_use) {
      if (c.size < bytes) {
        c.mem.reset(new std::byte[bytes]);
        c.size = bytes;
      }
      c.in_use = true;
      cached_ = true;
      ptr_ = reinterpret_cast<T*>(c.mem.get());
    } else if (bytes > 0) {
      own_.reset(new std::byte[bytes]);
      ptr_ = reinterpret_cast<T*>(own_.get());
    }
  }
  ~Buffer() {
    if (cached_) cache().in_use = false;
  }
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
  T* data() const { return ptr_; }

 private:
  static constexpr size_t kKeepBytes = size_t(64) << 20;
  struct Cache {
    std::unique_ptr<std::byte[]> mem;
    size_t size = 0;
    bool in_use = false;
  };
  static Cache& cache() {
    thread_local Cache c;
    return c;
  }
  std::unique_ptr<std::byte[]> own_;
  T* ptr_ = nullptr;
  bool cached_ = false;
};

// Runs item(i, col) for i in [0, count): serially with one scratch column matrix
// (BLAS threads the products), or split among threads, each with its own scratch.
template <typename T, typename Fn>
void for_each_item(int64_t count, bool split, int64_t col_size, Fn&& item) {
  // The first product of the process sets the thread counts (blas.cpp), which
  // resizes lucid's pool: that must not happen from inside a parallel_for.
  (void)get_num_threads();
  if (split && count > 1) {
    parallel_for(count, 1, [&](int64_t i0, int64_t i1) {
      Buffer<T> col(col_size);
      for (int64_t i = i0; i < i1; ++i) item(i, col.data());
    });
    return;
  }
  Buffer<T> col(col_size);
  for (int64_t i = 0; i < count; ++i) item(i, col.data());
}

}  // namespace lucid::cpu
