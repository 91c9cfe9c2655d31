// CPU kernels of the elementwise primitives (ops/prims/elementwise.h): adapters from
// the primitive to the loops of backend/cpu/elementwise.h.
#include <cstring>

#include "backend/cpu/elementwise.h"
#include "backend/cpu/number_view.h"
#include "backend/cpu/register.h"
#include "core/parallel.h"
#include "core/error.h"
#include "ops/prims/elementwise.h"

namespace lucid::cpu {

namespace {

using ops::Inputs;
using ops::Outputs;

// Integer division by a tensor holding a zero raises, where floats give inf or NaN
// (torch's CPU does the same: RuntimeError "ZeroDivisionError"). A number divisor was
// checked by the op.
void check_integer_divisor(ops::BinaryOp op, Dtype dtype, const TensorImpl* y) {
  using B = ops::BinaryOp;
  if (op != B::FloorDivide && op != B::DivTrunc && op != B::Remainder && op != B::Fmod) return;
  if (!is_integral(dtype, false) || y->numel() == 0) return;
  TensorPtr nonzero = y->clone(Dtype::Bool);  // contiguous, 0/1 bytes
  const std::byte* p = nonzero->host_ptr();
  for (int64_t i = 0, n = nonzero->numel(); i < n; ++i)
    LUCID_CHECK(p[i] != std::byte{0}, RuntimeError, "ZeroDivisionError");
}

void unary_kernel(const ops::Primitive& p, Outputs outs, Inputs ins) {
  unary(ops::prim_cast<ops::Unary>(p).op, *outs[0], *ins[0]);
}

// A float op of a dense tensor and a number (t * 1.5, the common case): the row kernel
// the general loop would reach for it (RowKernels' row_value / value_row), called on the
// tensor directly, without making a tensor of the number. False when not that case.
bool dense_with_number(const ops::Binary& p, TensorImpl& out, Inputs ins) {
  if (bool(p.lhs) == bool(p.rhs) || ins.size() != 1 || !out.is_contiguous() || !ins[0]->is_contiguous() ||
      ins[0]->dtype() != p.compute || out.dtype() != p.compute || ins[0]->numel() != out.numel())
    return false;
  const RowKernels rows = binary_rows(p.op, p.compute);
  if (!rows.row_value) return false;
  // The number as the row kernels take it, in the compute dtype's opmath type: exact,
  // since ops::number_param made it a value of the compute dtype or of float32.
  const Dtype opmath = p.compute == Dtype::F16 || p.compute == Dtype::BF16 ? Dtype::F32 : p.compute;
  alignas(16) std::byte value[16];
  scalar_to_bytes(p.lhs ? *p.lhs : *p.rhs, opmath, value);
  std::byte* o = out.host_ptr();
  const std::byte* t = ins[0]->host_ptr();
  const int64_t item = int64_t(out.itemsize());
  auto run = [&](int64_t begin, int64_t end) {
    if (p.rhs) rows.row_value(o + begin * item, t + begin * item, value, end - begin);
    else rows.value_row(o + begin * item, value, t + begin * item, end - begin);
  };
  parallel_for(out.numel(), kParallelGrain, run);
  return true;
}

// A number kept in opmath (Note [Numbers in opmath]) with a tensor as it does not lie
// for dense_with_number (strided, broadcast): the tensor made dense, and the dense
// result copied into place. (The general loop below reads numbers in the compute dtype.)
void strided_with_opmath_number(const ops::Binary& p, TensorImpl& out, const TensorImpl& in) {
  TensorPtr x = in.clone();
  TensorPtr dense = TensorImpl::empty(out.shape(), out.dtype(), Device::cpu());
  const TensorImpl* dense_in[1] = {x.get()};
  LUCID_CHECK(dense_with_number(p, *dense, Inputs(dense_in, 1)), RuntimeError,
              "internal: ", ops::op_name(p.op), " has no row kernel for ", dtype_name(p.compute));
  write_dense_into(out, *dense);
}

void binary_kernel(const ops::Primitive& prim, Outputs outs, Inputs ins) {
  const auto& p = ops::prim_cast<ops::Binary>(prim);
  TensorImpl& out = *outs[0];
  if (dense_with_number(p, out, ins)) return;
  if (ops::number_in_opmath(p.op, p.compute, DeviceType::CPU) && bool(p.lhs) != bool(p.rhs))
    return strided_with_opmath_number(p, out, *ins[0]);
  TensorPtr lhs = p.lhs ? number_view(*p.lhs, p.compute, out.shape()) : nullptr;
  TensorPtr rhs = p.rhs ? number_view(*p.rhs, p.compute, out.shape()) : nullptr;
  const TensorImpl& x = lhs ? *lhs : *ins[0];
  const TensorImpl& y = rhs ? *rhs : *ins[lhs ? 0 : 1];
  if (!p.rhs) check_integer_divisor(p.op, p.compute, &y);
  binary(p.op, out, x, y);
}

void complex_abs_kernel(const ops::Primitive&, Outputs outs, Inputs ins) { complex_abs(*outs[0], *ins[0]); }

void where_kernel(const ops::Primitive& prim, Outputs outs, Inputs ins) {
  const auto& p = ops::prim_cast<ops::Where>(prim);
  TensorImpl& out = *outs[0];
  TensorPtr lhs = p.lhs ? number_view(*p.lhs, out.dtype(), out.shape()) : nullptr;
  TensorPtr rhs = p.rhs ? number_view(*p.rhs, out.dtype(), out.shape()) : nullptr;
  const TensorImpl& x = lhs ? *lhs : *ins[1];
  const TensorImpl& y = rhs ? *rhs : *ins[lhs ? 1 : 2];
  where(out, *ins[0], x, y);
}

}  // namespace

void register_elementwise_kernels() {
  using ops::Prim;
  ops::register_kernel(Prim::Unary, DeviceType::CPU, unary_kernel);
  ops::register_kernel(Prim::Binary, DeviceType::CPU, binary_kernel);
  ops::register_kernel(Prim::ComplexAbs, DeviceType::CPU, complex_abs_kernel);
  ops::register_kernel(Prim::Where, DeviceType::CPU, where_kernel);
  ops::register_kernel(Prim::Pointwise, DeviceType::CPU, pointwise_kernel);
}

}  // namespace lucid::cpu
