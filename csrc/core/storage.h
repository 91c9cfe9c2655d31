// Storage: the bytes behind a tensor, shared by every view of it.
//
// Note [Storage kinds]
// - CpuStorage: host memory. May wrap memory owned by someone else (a NumPy array,
//   a DLPack producer); `owner` keeps that alive.
// - GpuStorage: device memory from the caching allocator of one GPU.
// - SharedStorage: pinned host memory mapped into the GPU's address space. Both the
//   CPU and the GPU address the same bytes, so moving a tensor between devices is a
//   relabel of TensorImpl::device, not a copy (the unified-memory model of MLX).
// Each kind carries the shared version counter of its bytes: every view of the same
// bytes sees every in-place write, which is what autograd's saved-tensor check needs.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <variant>

#include "core/device.h"

namespace lucid {

// Shared by every copy of one storage (every view of its bytes).
struct VersionCounter {
  std::atomic<uint64_t> value{0};
  // Copies of the storage held by recorded, not yet run, GPU calls (core/pending.h):
  // not sharers in the user's sense (TensorImpl::storage_is_shared).
  std::atomic<uint32_t> pending_uses{0};
  // Whether anything outside lucid may read or write the bytes at any time (memory
  // imported from NumPy, DLPack or a buffer; exported through DLPack or data_ptr):
  // such bytes are never left to a deferred CPU call (Note [Compiled CPU chains]).
  std::atomic<bool> reached_outside{false};
};

// Pointer plus the object that keeps it alive (a deleter-carrying shared_ptr).
using DataPtr = std::shared_ptr<std::byte>;

struct StorageBase {
  DataPtr data;
  size_t nbytes = 0;
  std::shared_ptr<VersionCounter> version = std::make_shared<VersionCounter>();
  std::byte* ptr() const { return data.get(); }
};

struct CpuStorage : StorageBase {};
struct GpuStorage : StorageBase {
  int device = 0;
};
struct SharedStorage : StorageBase {
  std::byte* device_ptr = nullptr;  // the GPU's address of the same bytes
  int device = 0;                   // the GPU the mapping was made for
};

using Storage = std::variant<CpuStorage, GpuStorage, SharedStorage>;

inline const StorageBase& storage_base(const Storage& s) {
  return std::visit([](const auto& x) -> const StorageBase& { return x; }, s);
}
inline StorageBase& storage_base(Storage& s) {
  return std::visit([](auto& x) -> StorageBase& { return x; }, s);
}

// The GPU whose memory (or mapping) holds the bytes; -1 for host-only storage.
inline int gpu_device_of(const Storage& s) {
  if (auto* g = std::get_if<GpuStorage>(&s)) return g->device;
  if (auto* m = std::get_if<SharedStorage>(&s)) return m->device;
  return -1;
}

// Allocates uninitialised host memory: 64-byte aligned, 16 for tiny sizes. Blocks of
// 128 KiB and more come from, and return to, a bounded cache (Note [Large-block cache]).
CpuStorage allocate_cpu(size_t nbytes);
size_t cpu_cached_bytes();  // bytes held by that cache
void cpu_empty_cache();     // returns them to the system

}  // namespace lucid
