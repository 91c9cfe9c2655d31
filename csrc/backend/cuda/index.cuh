// What the reading (index.cu) and writing (index_write.cu) index kernels share: the
// loop over a shape whose operands are two data tensors (byte strides) and up to four
// int64 index tensors, and the read of the index values, each checked against the size
// of the dimension it indexes (Note [Errors found on the device]).
#pragma once

#include <vector>

#include "backend/cuda/device_error.h"
#include "backend/cuda/elementwise_launch.cuh"
#include "core/copy.h"

namespace lucid::cuda {

inline constexpr int kMaxIndexTensors = 4;

// Each thread of the index kernels with one index tensor (gather, index_select, x[idx],
// scatter, index_add) moves four elements a block's width apart, loading every index
// and every source element before its first store: several misses to scattered rows in
// flight a thread, not one (one element a thread read a gather at 65% of the copy
// bandwidth on the H200, torch's unrolled loop at 75%). With two to four index tensors
// (x[i, j]) one element a thread: unrolling all of them doubled the compile time.
template <int K>
constexpr int index_unroll() {
  return K == 1 ? 4 : 1;
}

template <int K>
unsigned index_grid(int64_t n) {
  return ew_grid((n + index_unroll<K>() - 1) / index_unroll<K>());
}

struct IndexDims {
  int count;                             // index tensors
  int64_t size[kMaxIndexTensors];        // the indexed dims' sizes
  int64_t stride[kMaxIndexTensors];      // and their byte strides in the indexed tensor
  int32_t dim[kMaxIndexTensors];         // for the error message
  bool wrap;                             // negative indices count from the end
  DeviceErrorCode code;
};

// The kernel's view of a loop over `shape` (fewer than 2^31 elements, at least one) of
// operands a, b and K index tensors, with their byte strides over `shape`: dimensions
// that are contiguous in every operand merged.
template <int K>
EwStrides<K + 1> index_loop_strides(Shape shape, Stride a, Stride b, std::vector<Stride> idx) {
  LUCID_CHECK(numel_of(shape) < (int64_t(1) << 31), RuntimeError,
              "GPU indexing of 2^31 or more elements at once is not supported");
  std::initializer_list<Stride*> strides = {&a, &b, &idx[0], K > 1 ? &idx[1] : &idx[0],
                                            K > 2 ? &idx[2] : &idx[0], K > 3 ? &idx[3] : &idx[0]};
  shape = collapse_dims(shape, strides);
  LUCID_CHECK(shape.size() <= size_t(kMaxEwDims), RuntimeError, "GPU indexing over more than ", kMaxEwDims,
              " dimensions that do not merge");
  EwStrides<K + 1> p{};
  p.ndim = int(shape.size());
  for (int i = 0; i < p.ndim; ++i) {
    p.sizes[i] = shape[i];
    p.div[i] = FastDiv(uint32_t(shape[i]));
    p.strides[0][i] = a[i];
    p.strides[1][i] = b[i];
    for (int k = 0; k < K; ++k) p.strides[2 + k][i] = idx[k][i];
  }
  return p;
}

template <int K>
EwInputs<int64_t, K> index_pointers(const std::vector<const TensorImpl*>& idx) {
  EwInputs<int64_t, K> in{};
  for (int k = 0; k < K; ++k) in.ptr[k] = reinterpret_cast<const char*>(idx[k]->data_ptr());
  return in;
}

#if defined(__CUDACC__)
// What one element of an index kernel moves: a value of type T to byte offset dst.
template <typename T>
struct IndexItem {
  int64_t dst;
  T value;
};

// The loop of the index kernels over n elements: load(e, item) reads what element e
// moves (false: it moves nothing, a bad index) for index_unroll<K>() elements a thread,
// a block's width apart, then store(item) writes them, so that every load of a thread is
// in flight before its first store.
template <int K, typename T, typename Load, typename Store>
__device__ __forceinline__ void index_loop(int64_t n, Load load, Store store) {
  constexpr int U = index_unroll<K>();
  constexpr int64_t tile = int64_t(kEwThreads) * U;
  for (int64_t base = int64_t(blockIdx.x) * tile; base < n; base += int64_t(gridDim.x) * tile) {
    IndexItem<T> items[U];
    bool ok[U];
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const int64_t e = base + threadIdx.x + u * kEwThreads;
      ok[u] = e < n && load(e, items[u]);
    }
#pragma unroll
    for (int u = 0; u < U; ++u)
      if (ok[u]) store(items[u]);
  }
}

// Adds to `offset` the byte offset that the K index values (at byte offsets idx_off of
// their tensors) select; false, after reporting the first bad one, when any is out of
// range: the caller then leaves its element alone.
template <int K>
__device__ __forceinline__ bool add_index_offset(const EwInputs<int64_t, K>& idx, const int64_t* idx_off,
                                                 const IndexDims& d, DeviceErrorSlot* error, int64_t& offset) {
  bool ok = true;
#pragma unroll
  for (int k = 0; k < K; ++k) {
    int64_t v = *reinterpret_cast<const int64_t*>(idx.ptr[k] + idx_off[k]);
    if (d.wrap && v < 0) v += d.size[k];
    if (v < 0 || v >= d.size[k]) {
      if (ok) report_device_error(error, d.code, d.dim[k], d.wrap && v < 0 ? v - d.size[k] : v, d.size[k]);
      ok = false;
    }
    offset += v * d.stride[k];
  }
  return ok;
}
#endif

}  // namespace lucid::cuda
