// CUDA kernels of the reading index primitives (ops/prims/index.h): gather,
// index_select and advanced indexing x[i, j], one kernel for all three.
//
// The output (shape R) is walked like an elementwise op whose operands are the output,
// self's base (self's strides with the indexed dims' strides zeroed) and the index
// tensors (int64, their strides over R). Each index value read is checked against its
// dimension's size; a bad one is reported to the device error slot (Note [Errors found
// on the device]), its element left unwritten, and the op raises at the next sync.
// Elements move as bytes of the item size, so one instantiation serves every dtype.
#include "backend/cuda/index.cuh"
#include "backend/cuda/register.h"
#include "backend/cuda/strided_copy_kernel.cuh"
#include "ops/prims/index.h"

namespace lucid::cuda {

namespace {

using ops::Inputs;
using ops::Outputs;

// Operands: out, self (base), index tensors 0..K-1. E: an unsigned type of the item size.
template <typename E, int K>
__global__ void __launch_bounds__(kEwThreads) gather_kernel(char* out, const char* self, EwInputs<int64_t, K> idx,
                                                            EwStrides<K + 1> p, int64_t n, IndexDims d,
                                                            DeviceErrorSlot* error) {
  using Item = IndexItem<E>;
  index_loop<K, E>(
      n,
      [&](int64_t e, Item& item) {
        int64_t off[K + 2];
        ew_offsets<true>(e, p, off);
        int64_t src = off[1];
        if (!add_index_offset<K>(idx, off + 2, d, error, src)) return false;
        item = {off[0], *reinterpret_cast<const E*>(self + src)};
        return true;
      },
      [&](const Item& item) { *reinterpret_cast<E*>(out + item.dst) = item.value; });
}

// The launch over `shape` with the given byte strides of out, self's base and the indices.
template <int K>
void launch_gather(TensorImpl& out, const TensorImpl& self, const std::vector<const TensorImpl*>& idx, Shape shape,
                   Stride out_st, Stride self_st, std::vector<Stride> idx_st, const IndexDims& d) {
  const int64_t n = numel_of(shape);
  if (n == 0) return;
  const EwStrides<K + 1> p = index_loop_strides<K>(std::move(shape), std::move(out_st), std::move(self_st),
                                                   std::move(idx_st));
  const EwInputs<int64_t, K> in = index_pointers<K>(idx);
  const int device = out.device().index;
  DeviceErrorSlot* error = device_error_slot(device);
  DeviceGuard guard(device);
  cudaStream_t s = stream(device);
  char* o = reinterpret_cast<char*>(out.data_ptr());
  const char* src = reinterpret_cast<const char*>(self.data_ptr());
  switch (out.itemsize()) {
    case 1: gather_kernel<uint8_t, K><<<index_grid<K>(n), kEwThreads, 0, s>>>(o, src, in, p, n, d, error); break;
    case 2: gather_kernel<uint16_t, K><<<index_grid<K>(n), kEwThreads, 0, s>>>(o, src, in, p, n, d, error); break;
    case 4: gather_kernel<uint32_t, K><<<index_grid<K>(n), kEwThreads, 0, s>>>(o, src, in, p, n, d, error); break;
    case 8: gather_kernel<uint64_t, K><<<index_grid<K>(n), kEwThreads, 0, s>>>(o, src, in, p, n, d, error); break;
    case 16: gather_kernel<Bytes16, K><<<index_grid<K>(n), kEwThreads, 0, s>>>(o, src, in, p, n, d, error); break;
    default: fail<RuntimeError>("internal: gather of ", out.itemsize(), "-byte items");
  }
  LUCID_CUDA_CHECK(cudaGetLastError());
}

void run_gather(TensorImpl& out, const TensorImpl& self, const std::vector<const TensorImpl*>& idx,
                const Shape& shape, const Stride& out_st, const Stride& self_st, const std::vector<Stride>& idx_st,
                const IndexDims& d) {
  switch (idx.size()) {
    case 1: return launch_gather<1>(out, self, idx, shape, out_st, self_st, idx_st, d);
    case 2: return launch_gather<2>(out, self, idx, shape, out_st, self_st, idx_st, d);
    case 3: return launch_gather<3>(out, self, idx, shape, out_st, self_st, idx_st, d);
    case 4: return launch_gather<4>(out, self, idx, shape, out_st, self_st, idx_st, d);
  }
  fail<NotImplementedError>("advanced indexing on the GPU takes at most ", kMaxIndexTensors,
                            " index tensors; got ", idx.size());
}

// gather and index_select: out's shape; self's strides with `dim`'s zeroed; the index
// over out's shape (index_select: the 1-d index along dim, stride 0 elsewhere).
void gather_along(TensorImpl& out, const TensorImpl& src, const TensorImpl& index, const Stride& index_st, int64_t dim,
                  DeviceErrorCode code) {
  Stride self_st = src.stride();
  IndexDims d{1, {src.shape()[dim]}, {self_st[dim]}, {int32_t(dim)}, false, code};
  self_st[dim] = 0;
  run_gather(out, src, {&index}, out.shape(), out.stride(), self_st, {index_st}, d);
}

void gather_prim(const ops::Primitive& p, Outputs outs, Inputs ins) {
  gather_along(*outs[0], *ins[0], *ins[1], ins[1]->stride(), ops::prim_cast<ops::Gather>(p).dim,
               DeviceErrorCode::GatherOutOfRange);
}

void index_select_prim(const ops::Primitive& p, Outputs outs, Inputs ins) {
  const int64_t dim = ops::prim_cast<ops::IndexSelect>(p).dim;
  Stride index_st(outs[0]->ndim(), 0);
  index_st[dim] = ins[1]->stride()[0];
  gather_along(*outs[0], *ins[0], *ins[1], index_st, dim, DeviceErrorCode::SliceOutOfRange);
}

void check_index(const ops::Primitive& prim, Outputs, Inputs) {
  const size_t k = ops::prim_cast<ops::Index>(prim).loop.dim.size();
  LUCID_CHECK(k <= size_t(kMaxIndexTensors), NotImplementedError, "advanced indexing on the GPU takes at most ",
              kMaxIndexTensors, " index tensors; got ", k);
}

void index_prim(const ops::Primitive& prim, Outputs outs, Inputs ins) {
  const ops::IndexLoop& loop = ops::prim_cast<ops::Index>(prim).loop;
  TensorImpl& out = *outs[0];
  const size_t k = loop.dim.size();
  IndexDims d{int(k), {}, {}, {}, true, DeviceErrorCode::IndexOutOfRange};
  std::vector<const TensorImpl*> idx;
  for (size_t i = 0; i < k && i < size_t(kMaxIndexTensors); ++i) {
    d.size[i] = loop.dim_size[i];
    d.stride[i] = loop.dim_stride[i];
    d.dim[i] = int32_t(loop.dim[i]);
  }
  for (size_t i = 0; i < k; ++i) idx.push_back(ins[1 + i]);
  run_gather(out, *ins[0], idx, loop.shape, out.stride(), loop.self_stride, loop.idx_stride, d);
}

}  // namespace

void register_index_kernels() {
  using ops::Prim;
  ops::register_kernel(Prim::Gather, DeviceType::GPU, gather_prim);
  ops::register_kernel(Prim::IndexSelect, DeviceType::GPU, index_select_prim);
  ops::register_kernel(Prim::Index, DeviceType::GPU, index_prim, check_index);
}

}  // namespace lucid::cuda
