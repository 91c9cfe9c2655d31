// Unary kernels: out has the operand's dtype (the ops layer has already promoted
// integer inputs of the Float-rule ops to a floating dtype).
#include "backend/cpu/kernel_unit.h"

namespace lucid::cpu {

void unary_basic(ops::UnaryOp op, TensorImpl& out, const TensorImpl& a) {
  run_unary_unit<Unit::Basic>("unary_basic", op, out, a);
}

void complex_abs(TensorImpl& out, const TensorImpl& a) {
  const std::byte* const in[1] = {a.host_ptr()};
  if (a.dtype() == Dtype::C128)
    elementwise_loop<double, complex128, 1>(out.host_ptr(), in, {out.stride(), a.stride()}, out.shape(),
                                            [](complex128 z) { return std::abs(z); });
  else
    elementwise_loop<float, complex64, 1>(out.host_ptr(), in, {out.stride(), a.stride()}, out.shape(),
                                          [](complex64 z) { return std::abs(z); });
}

RowKernels unary_basic_rows(ops::UnaryOp op, Dtype dtype) { return unary_rows_unit<Unit::Basic>(op, dtype); }

}  // namespace lucid::cpu
