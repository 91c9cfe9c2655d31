// Grouping scattered writes by their destination, so that a scatter-add's adjoint
// can be computed as a deterministic gather.
//
// A kernel whose CPU version scatters, out[key(v)] += f(v) for v = 0, 1, ..., turns on
// the GPU into one thread per destination summing f(v) over its entries, in
// increasing v: the CPU's order, with no atomics and so the same result every run.
// The entries of each destination come from a stable radix sort of the keys (CUB)
// and a binary search for where each destination's run of keys starts.
#pragma once

#include <cstdint>

#include "core/storage.h"

namespace lucid::cuda {

// The entries 0 .. n-1 grouped by key: entry[offset[k] .. offset[k + 1]) are the v
// with key(v) == k, in increasing v, for 0 <= k < buckets. Keys equal to `buckets`
// (an entry that writes nowhere: out of range, or masked off) are dropped.
struct KeyGroups {
  GpuStorage entry;   // uint32_t [n]
  GpuStorage offset;  // int64_t [buckets + 1]
  const uint32_t* entries() const { return reinterpret_cast<const uint32_t*>(entry.ptr()); }
  const int64_t* offsets() const { return reinterpret_cast<const int64_t*>(offset.ptr()); }
};

// keys: n values in [0, buckets], on `device`; n < 2^32. All work is queued on the
// device's stream; `keys` may be reused once this returns (the sort copied it).
KeyGroups group_by_key(const uint64_t* keys, int64_t n, int64_t buckets, int device);

}  // namespace lucid::cuda
