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
  // Dense: one dimension (or none: one element) walked at each operand's item size.
  bool dense = call.ndim == 0 || (call.ndim == 1 && out_stride[0] == int64_t(out.itemsize()));
  auto aligned16 = [](const void* p) { return (reinterpret_cast<uintptr_t>(p) & 15) == 0; };
  bool aligned = aligned16(out.data_ptr());
  for (int k = 0; k < call.n_in; ++k) {
    if (!call.in[k]) continue;
    if (call.ndim == 1) dense = dense && in_stride[k][0] == int64_t(call.in[k]->itemsize());
    aligned = aligned && aligned16(call.in[k]->data_ptr());
  }
  call.contiguous = dense;
  call.aligned = aligned;
  return true;
}

}  // namespace lucid::cuda
