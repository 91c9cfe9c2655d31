#include <cstdint>

#include "backend/cuda/elementwise.h"
#include "core/copy.h"

namespace lucid::cuda {

bool plan_elementwise(EwCall& call) {
  const TensorImpl& out = *call.out;
  Stride out_stride = out.stride();
  Stride in_stride[3];
  std::initializer_list<Stride*> all = {&out_stride, &in_stride[0], &in_stride[1], &in_stride[2]};
  // A number operand walks like a broadcast one: stride 0 everywhere.
  for (int k = 0; k < 3; ++k)
    in_stride[k] = k < call.n_in && call.in[k] ? call.in[k]->stride() : Stride(out.ndim(), 0);
  Shape shape = collapse_dims(out.shape(), all);
  call.numel = out.numel();
  if (shape.size() > size_t(kMaxEwDims)) return false;
  call.ndim = int(shape.size());
  for (int d = 0; d < call.ndim; ++d) {
    call.sizes[d] = shape[d];
    call.strides[0][d] = out_stride[d];
    for (int k = 0; k < 3; ++k) call.strides[1 + k][d] = in_stride[k][d];
  }
  // The contiguous path: the output dense in row-major order, each input either the
  // same (period 0) or a dense block repeated along the leading dimensions (zero
  // strides there): a row broadcast, x + bias, reads element i % period.
  int64_t dense_stride = int64_t(out.itemsize());
  bool out_dense = true;
  for (int d = call.ndim - 1; d >= 0; --d) {
    out_dense = out_dense && (shape[d] == 1 || out_stride[d] == dense_stride);
    dense_stride *= shape[d];
  }
  bool contiguous = out_dense;
  auto aligned16 = [](const void* p) { return (reinterpret_cast<uintptr_t>(p) & 15) == 0; };
  bool aligned = aligned16(out.data_ptr());
  for (int k = 0; k < call.n_in && contiguous; ++k) {
    call.period[k] = 0;
    if (!call.in[k]) continue;
    const int64_t item = int64_t(call.in[k]->itemsize());
    int64_t d = call.ndim - 1, block = 1;
    for (; d >= 0 && (shape[d] == 1 || in_stride[k][d] == block * item); --d) block *= shape[d];
    const int64_t dense_dims_end = d;
    for (; d >= 0 && in_stride[k][d] == 0; --d) {}
    contiguous = d < 0;
    if (dense_dims_end >= 0) call.period[k] = block;  // repeated: block elements, period
    const int64_t vec = item >= 16 ? 1 : 16 / item;
    aligned = aligned && (call.period[k] == 1 || (aligned16(call.in[k]->data_ptr()) && call.period[k] % vec == 0));
  }
  call.contiguous = contiguous;
  call.aligned = aligned;
  return true;
}

}  // namespace lucid::cuda
