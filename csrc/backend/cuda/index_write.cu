// CUDA kernels of the writing index primitives (ops/prims/index.h): scatter (assign,
// add, multiply; src a tensor or a number), index_add, and index_put_ (x[i, j] = v,
// and += v for accumulate and for the backward of every indexing read).
//
// All three are one loop, the reading kernels' (index.cu) turned around: over the
// shape of what is written (scatter: index's; index_add: source's; index_put_: the
// indexing result R), whose operands are out's base (out's strides with the indexed
// dims' zeroed), the source (or a number) and the int64 index tensors. Each element's
// destination is out's base plus each checked index value times its dim's stride; a
// bad index is reported to the device error slot and its element skipped (Note
// [Errors found on the device]).
//
// Note [Writes to repeated indices on the GPU]
// The CPU writes in index order, so with repeated indices the last write wins and
// sums accumulate in a fixed order. Here the elements run in parallel:
// - assign: a plain store, and one of the repeated writes wins (which one is not
//   defined; PyTorch's CUDA scatter and index_put_ are the same);
// - add: atomic adds, as PyTorch's CUDA scatter_add / index_add / index_put_
//   (accumulate) use; float sums may then differ from run to run in their last bits;
// - multiply, and add on types without a native atomic add (bool, 8- and 16-bit
//   integers): a compare-and-swap loop on the element (on the aligned 32-bit word
//   holding a 1- or 2-byte element: allocations are whole 512-byte blocks, so that
//   word lies inside the allocation).
// float16/bfloat16 add with the native atomics, which round the exact sum once, as
// the CPU's float sum rounded to 16 bits does.
//
// Note [Bad indices in writes on the GPU]
// The CPU checks every index of index_add and index_put_ before writing anything, so
// a failed call leaves self unchanged. Here each element checks its own: the call
// raises at the next synchronisation, but the elements with good indices have been
// written (PyTorch's device-side assert leaves nothing usable at all).
#include <type_traits>

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "backend/cuda/index.cuh"
#include "backend/cuda/register.h"
#include "ops/prims/index.h"

namespace lucid::cuda {

namespace {

using ops::Inputs;
using ops::Outputs;

// *at = f(*at) atomically, by compare-and-swap (Note [Writes to repeated indices on the GPU]).
template <typename T, typename F>
__device__ void atomic_update(T* at, F f) {
  if constexpr (sizeof(T) >= 4) {  // (16 bytes, complex128: sm_90's 128-bit compare-and-swap)
    using W = std::conditional_t<sizeof(T) == 4, unsigned int,
                                 std::conditional_t<sizeof(T) == 8, unsigned long long, unsigned __int128>>;
    W* word = reinterpret_cast<W*>(at);
    W old = *word, seen;
    do {
      seen = old;
      T now;
      memcpy(&now, &seen, sizeof(T));
      const T next = f(now);
      W bits;
      memcpy(&bits, &next, sizeof(T));
      old = atomicCAS(word, seen, bits);
    } while (old != seen);
  } else {
    using U = std::conditional_t<sizeof(T) == 1, uint8_t, uint16_t>;
    const uintptr_t addr = reinterpret_cast<uintptr_t>(at);
    unsigned int* word = reinterpret_cast<unsigned int*>(addr & ~uintptr_t(3));
    const unsigned shift = unsigned(addr & 3) * 8;
    const unsigned mask = ((1u << (8 * sizeof(T))) - 1u) << shift;
    unsigned int old = *word, seen;
    do {
      seen = old;
      const U cur = U((seen & mask) >> shift);
      T now;
      memcpy(&now, &cur, sizeof(T));
      const T next = f(now);
      U bits;
      memcpy(&bits, &next, sizeof(T));
      old = atomicCAS(word, seen, (seen & ~mask) | (unsigned(bits) << shift));
    } while (old != seen);
  }
}

// a + b and a * b as the CPU's scatter computes them: bool as or / and, 16-bit floats
// in float.
template <typename T>
__device__ T sum_of(T a, T b) {
  if constexpr (std::is_same_v<T, bool>) return a || b;
  else if constexpr (kIsHalfFloat<T>) return T(float(a) + float(b));
  else return T(a + b);
}
template <typename T>
__device__ T product_of(T a, T b) {
  if constexpr (std::is_same_v<T, bool>) return a && b;
  else if constexpr (kIsHalfFloat<T>) return T(float(a) * float(b));
  else return T(a * b);
}

// scatter_reduce's amax / amin as the CPU's: a NaN in v wins, one in a stays.
template <typename T>
__device__ T extremum_of(T a, T v, bool maximum) {
  if constexpr (std::is_same_v<T, bool>) {
    return maximum ? (a || v) : (a && v);
  } else if constexpr (ops::kIsComplex<T>) {
    return a;  // (the op refuses complex extrema)
  } else {
    using M = std::conditional_t<kIsHalfFloat<T>, float, T>;
    const M x = M(a), y = M(v);
    if (y != y) return v;
    return maximum ? (x < y ? v : a) : (y < x ? v : a);
  }
}

// Native atomic adds where the hardware has them; a CAS loop for the rest.
template <typename T>
__device__ void atomic_add(T* at, T v) {
  atomic_update(at, [v](T a) { return sum_of(a, v); });
}
__device__ void atomic_add(float* at, float v) { atomicAdd(at, v); }
__device__ void atomic_add(double* at, double v) { atomicAdd(at, v); }
__device__ void atomic_add(int32_t* at, int32_t v) { atomicAdd(reinterpret_cast<int*>(at), int(v)); }
__device__ void atomic_add(int64_t* at, int64_t v) {  // two's complement: the unsigned sum is the signed one
  atomicAdd(reinterpret_cast<unsigned long long*>(at), static_cast<unsigned long long>(v));
}
__device__ void atomic_add(Half* at, Half v) { atomicAdd(reinterpret_cast<__half*>(at), __ushort_as_half(v.bits)); }
__device__ void atomic_add(BFloat16* at, BFloat16 v) {
  atomicAdd(reinterpret_cast<__nv_bfloat16*>(at), __ushort_as_bfloat16(v.bits));
}
template <typename R>
__device__ void atomic_add(::cuda::std::complex<R>* at, ::cuda::std::complex<R> v) {  // each part on its own
  R* parts = reinterpret_cast<R*>(at);
  atomicAdd(parts, v.real());
  atomicAdd(parts + 1, v.imag());
}

// What an element does to its destination.
struct Store {
  template <typename T> __device__ static void apply(T* at, T v) { *at = v; }
};
struct AtomicAdd {
  template <typename T> __device__ static void apply(T* at, T v) { atomic_add(at, v); }
};
struct AtomicMultiply {
  template <typename T> __device__ static void apply(T* at, T v) {
    atomic_update(at, [v](T a) { return product_of(a, v); });
  }
};
template <bool kMaximum>
struct AtomicExtremum {
  template <typename T> __device__ static void apply(T* at, T v) {
    atomic_update(at, [v](T a) { return extremum_of(a, v, kMaximum); });
  }
};

// Operands: out's base, src, index tensors 0..K-1. T: the element's device type (for
// Store, an unsigned type of the item size); a null src is the number `value`.
template <typename T, int K, typename Write>
__global__ void __launch_bounds__(kEwThreads) write_kernel(char* out, const char* src, T value,
                                                           EwInputs<int64_t, K> idx, EwStrides<K + 1> p, int64_t n,
                                                           IndexDims d, DeviceErrorSlot* error) {
  using Item = IndexItem<T>;
  index_loop<K, T>(
      n,
      [&](int64_t e, Item& item) {
        int64_t off[K + 2];
        ew_offsets<true>(e, p, off);
        item.dst = off[0];
        if (!add_index_offset<K>(idx, off + 2, d, error, item.dst)) return false;
        item.value = src ? *reinterpret_cast<const T*>(src + off[1]) : value;
        return true;
      },
      [&](const Item& item) { Write::apply(reinterpret_cast<T*>(out + item.dst), item.value); });
}

// One write loop, planned on the host.
struct WriteLoop {
  Shape shape;        // of what is written
  Stride out_stride;  // out's byte strides over shape, the indexed dims' zeroed
  Stride src_stride;  // the source's (zeros for a number)
  std::vector<const TensorImpl*> idx;
  std::vector<Stride> idx_stride;
  IndexDims dims;
};

template <typename T, int K, typename Write>
void launch_write(TensorImpl& out, const TensorImpl* src, T value, const WriteLoop& w) {
  const int64_t n = numel_of(w.shape);
  const EwStrides<K + 1> p = index_loop_strides<K>(w.shape, w.out_stride, w.src_stride, w.idx_stride);
  const EwInputs<int64_t, K> in = index_pointers<K>(w.idx);
  const int device = out.device().index;
  DeviceErrorSlot* error = device_error_slot(device);
  DeviceGuard guard(device);
  write_kernel<T, K, Write><<<index_grid<K>(n), kEwThreads, 0, stream(device)>>>(
      reinterpret_cast<char*>(out.data_ptr()), src ? reinterpret_cast<const char*>(src->data_ptr()) : nullptr, value,
      in, p, n, w.dims, error);
  LUCID_CUDA_CHECK(cudaGetLastError());
}

// The number `value` (already of out's dtype; none: zero) as T's device type.
template <typename T>
device_t<T> number_as(const std::optional<Scalar>& value) {
  T v{};
  if (value) {
    if constexpr (kIsHalfFloat<T>) v = T(scalar_as<float>(*value));
    else v = scalar_as<T>(*value);
  }
  if constexpr (kIsComplexValue<T>) return device_t<T>(v.real(), v.imag());
  else return v;
}

// Runs the loop writing src (null: the number `value`) into out. Store moves bytes, so
// it needs one instantiation per item size; the reductions one per dtype.
template <int K, typename Write>
void write(TensorImpl& out, const TensorImpl* src, const std::optional<Scalar>& value, const WriteLoop& w) {
  if (numel_of(w.shape) == 0) return;
  visit_dtype(out.dtype(), [&]<typename T>() {
    const device_t<T> v = number_as<T>(value);
    if constexpr (std::is_same_v<Write, Store>) {
      using U = std::conditional_t<sizeof(T) == 1, uint8_t, std::conditional_t<sizeof(T) == 2, uint16_t,
                std::conditional_t<sizeof(T) == 4, uint32_t, std::conditional_t<sizeof(T) == 8, uint64_t,
                ::cuda::std::complex<double>>>>>;  // (16 bytes: complex128's own type moves them)
      static_assert(sizeof(U) == sizeof(T));
      U bits;
      memcpy(&bits, &v, sizeof bits);
      launch_write<U, K, Store>(out, src, bits, w);
    } else {
      launch_write<device_t<T>, K, Write>(out, src, v, w);
    }
  });
}

// scatter and index_add: one index, along `dim` of out.
IndexDims along(const TensorImpl& out, int64_t dim, DeviceErrorCode code) {
  return IndexDims{1, {out.shape()[dim]}, {out.stride()[dim]}, {int32_t(dim)}, false, code};
}

Stride without_dim(Stride s, int64_t dim) {
  s[dim] = 0;
  return s;
}

void scatter_prim(const ops::Primitive& prim, Outputs outs, Inputs ins) {
  const auto& p = ops::prim_cast<ops::Scatter>(prim);
  TensorImpl& out = *outs[0];
  const TensorImpl& index = *ins[0];
  const TensorImpl* src = p.value ? nullptr : ins[1];
  const WriteLoop w{index.shape(), without_dim(out.stride(), p.dim), src ? src->stride() : Stride(index.ndim(), 0),
                    {&index}, {index.stride()}, along(out, p.dim, DeviceErrorCode::GatherOutOfRange)};
  switch (p.reduce) {
    case ops::ScatterReduce::Assign: return write<1, Store>(out, src, p.value, w);
    case ops::ScatterReduce::Add: return write<1, AtomicAdd>(out, src, p.value, w);
    case ops::ScatterReduce::Multiply: return write<1, AtomicMultiply>(out, src, p.value, w);
    case ops::ScatterReduce::Maximum: return write<1, AtomicExtremum<true>>(out, src, p.value, w);
    case ops::ScatterReduce::Minimum: return write<1, AtomicExtremum<false>>(out, src, p.value, w);
  }
}

void index_add_prim(const ops::Primitive& prim, Outputs outs, Inputs ins) {
  const int64_t dim = ops::prim_cast<ops::IndexAdd>(prim).dim;
  TensorImpl& out = *outs[0];
  const TensorImpl &index = *ins[0], &source = *ins[1];
  Stride index_stride(source.ndim(), 0);  // the 1-d index along dim, broadcast over the rest
  index_stride[dim] = index.stride()[0];
  const WriteLoop w{source.shape(), without_dim(out.stride(), dim), source.stride(), {&index}, {index_stride},
                    along(out, dim, DeviceErrorCode::SliceOutOfRange)};
  write<1, AtomicAdd>(out, &source, std::nullopt, w);
}

template <int K>
void index_put_with(TensorImpl& self, const TensorImpl& values, bool accumulate, const WriteLoop& w) {
  if (accumulate) write<K, AtomicAdd>(self, &values, std::nullopt, w);
  else write<K, Store>(self, &values, std::nullopt, w);
}

void check_index_put(const ops::Primitive& prim, Outputs, Inputs) {
  const size_t k = ops::prim_cast<ops::IndexPut>(prim).loop.dim.size();
  LUCID_CHECK(k >= 1 && k <= size_t(kMaxIndexTensors), NotImplementedError, "index_put_ on the GPU takes 1 to ",
              kMaxIndexTensors, " index tensors; got ", k);
}

void index_put_prim(const ops::Primitive& prim, Outputs outs, Inputs ins) {
  const auto& p = ops::prim_cast<ops::IndexPut>(prim);
  const ops::IndexLoop& loop = p.loop;
  TensorImpl& self = *outs[0];
  const TensorImpl& values = *ins[0];
  const size_t k = loop.dim.size();  // (1 to kMaxIndexTensors: check_index_put)
  WriteLoop w{loop.shape, loop.self_stride, values.stride(), {}, loop.idx_stride,
              {int(k), {}, {}, {}, true, DeviceErrorCode::IndexOutOfRange}};
  for (size_t i = 0; i < k; ++i) {
    w.idx.push_back(ins[1 + i]);
    w.dims.size[i] = loop.dim_size[i];
    w.dims.stride[i] = loop.dim_stride[i];
    w.dims.dim[i] = int32_t(loop.dim[i]);
  }
  switch (k) {
    case 1: return index_put_with<1>(self, values, p.accumulate, w);
    case 2: return index_put_with<2>(self, values, p.accumulate, w);
    case 3: return index_put_with<3>(self, values, p.accumulate, w);
    default: return index_put_with<4>(self, values, p.accumulate, w);
  }
}

}  // namespace

void register_index_write_kernels() {
  using ops::Prim;
  ops::register_kernel(Prim::Scatter, DeviceType::GPU, scatter_prim);
  ops::register_kernel(Prim::IndexAdd, DeviceType::GPU, index_add_prim);
  ops::register_kernel(Prim::IndexPut, DeviceType::GPU, index_put_prim, check_index_put);
}

}  // namespace lucid::cuda
