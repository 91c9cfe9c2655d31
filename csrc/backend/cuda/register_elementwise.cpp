// CUDA kernels of the elementwise primitives (ops/prims/elementwise.h): plans each
// launch and hands it to the unit that holds the op's kernels.
#include "backend/common/elementwise_units.h"
#include "backend/cuda/elementwise.h"
#include "backend/cuda/register.h"
#include "core/error.h"
#include "core/gpu_runtime.h"
#include "ops/prims/elementwise.h"
#include "ops/prims/index.h"

namespace lucid::cuda {

namespace {

using backend::Unit;
using ops::Inputs;
using ops::Outputs;

// Plans `call` and runs `body` on it. Operands that collapse to more than kMaxEwDims
// dimensions (rare: views with many non-mergeable dims) are staged contiguously
// first, and the result is copied into the real output afterwards.
template <typename Body>
void with_plan(EwCall& call, Body body) {
  if (plan_elementwise(call)) return body(call);
  TensorPtr staged[3];
  for (int k = 0; k < call.n_in; ++k)
    if (call.in[k]) {
      staged[k] = call.in[k]->clone();
      call.in[k] = staged[k].get();
    }
  TensorImpl& real_out = *call.out;
  TensorPtr tmp = TensorImpl::empty(real_out.shape(), real_out.dtype(), real_out.device());
  call.out = tmp.get();
  LUCID_CHECK(plan_elementwise(call), RuntimeError, "internal: a contiguous elementwise plan failed");
  body(call);
  gpu_runtime(call.device).strided_copy(real_out.data_ptr(), real_out.stride(), tmp->data_ptr(), tmp->stride(),
                                        real_out.shape(), real_out.itemsize(), call.device);
}

EwCall make_call(TensorImpl* out, Dtype compute) {
  EwCall call;
  call.out = out;
  call.compute = compute;
  call.device = out->device().index;
  return call;
}

void unary_kernel(const ops::Primitive& prim, Outputs outs, Inputs ins) {
  const ops::UnaryOp op = ops::prim_cast<ops::Unary>(prim).op;
  EwCall call = make_call(outs[0], ins[0]->dtype());
  call.in[0] = ins[0];
  call.n_in = 1;
  with_plan(call, [op](const EwCall& c) {
    switch (backend::unary_unit(op)) {
      case Unit::Math: return unary_math(op, c);
      case Unit::Trig: return unary_trig(op, c);
      case Unit::Rounding: return unary_rounding(op, c);
      case Unit::Predicate: return unary_predicate(op, c);
      case Unit::Special: return unary_special(op, c);
      case Unit::Bessel: return unary_bessel(op, c);
      case Unit::Activation: return unary_activation(op, c);
      default: return unary_basic(op, c);
    }
  });
}

void binary_kernel(const ops::Primitive& prim, Outputs outs, Inputs ins) {
  const auto& p = ops::prim_cast<ops::Binary>(prim);
  const ops::BinaryOp op = p.op;
  EwCall call = make_call(outs[0], p.compute);
  call.n_in = 2;
  size_t next = 0;
  for (int k = 0; k < 2; ++k) {
    const std::optional<Scalar>& number = k == 0 ? p.lhs : p.rhs;
    if (number) call.number[k] = number;
    else call.in[k] = ins[next++];
  }
  // A number divisor of zero was refused by the op; a tensor divisor's zeros are found
  // by the kernel (Note [Errors found on the device]).
  with_plan(call, [op](const EwCall& c) {
    switch (backend::binary_unit(op)) {
      case Unit::Division: return binary_division(op, c);
      case Unit::Extremum: return binary_extremum(op, c);
      case Unit::Equality: return binary_equality(op, c);
      case Unit::Logical: return binary_logical(op, c);
      case Unit::Logs: return binary_logs(op, c);
      case Unit::Order: return binary_order(op, c);
      case Unit::Math: return binary_math(op, c);
      case Unit::Bitwise: return binary_bitwise(op, c);
      case Unit::Special: return binary_special(op, c);
      case Unit::Polynomial: return binary_polynomial(op, c);
      case Unit::Activation: return binary_activation(op, c);
      default: return binary_arith(op, c);
    }
  });
}

void complex_abs_kernel(const ops::Primitive&, Outputs outs, Inputs ins) {
  EwCall call = make_call(outs[0], ins[0]->dtype());
  call.in[0] = ins[0];
  call.n_in = 1;
  with_plan(call, [](const EwCall& c) { complex_abs(c); });
}

void where_kernel(const ops::Primitive& prim, Outputs outs, Inputs ins) {
  const auto& p = ops::prim_cast<ops::Where>(prim);
  EwCall call = make_call(outs[0], outs[0]->dtype());
  call.n_in = 3;
  call.in[0] = ins[0];
  size_t next = 1;
  for (int k = 1; k < 3; ++k) {
    const std::optional<Scalar>& number = k == 1 ? p.lhs : p.rhs;
    if (number) call.number[k] = number;
    else call.in[k] = ins[next++];
  }
  with_plan(call, [](const EwCall& c) { where(c); });
}

void pointwise_kernel(const ops::Primitive& prim, Outputs outs, Inputs ins) {
  const auto& p = ops::prim_cast<ops::Pointwise>(prim);
  EwCall call = make_call(outs[0], p.compute);
  call.n_in = 3;
  call.in[0] = ins[0], call.in[1] = ins[1];
  if (p.z) call.number[2] = Scalar(*p.z);
  else call.in[2] = ins[2];
  with_plan(call, [&p](const EwCall& c) { pointwise(p, c); });
}

// masked_fill is where(mask, value, out) written into out: each element reads only
// itself, so the in-place form is safe.
void masked_fill_kernel(const ops::Primitive& prim, Outputs outs, Inputs ins) {
  EwCall call = make_call(outs[0], outs[0]->dtype());
  call.n_in = 3;
  call.in[0] = ins[0];
  call.number[1] = ops::prim_cast<ops::MaskedFill>(prim).value;
  call.in[2] = outs[0];
  with_plan(call, [](const EwCall& c) { where(c); });
}

}  // namespace

void register_elementwise_kernels() {
  using ops::Prim;
  ops::register_kernel(Prim::Unary, DeviceType::GPU, unary_kernel);
  ops::register_kernel(Prim::Binary, DeviceType::GPU, binary_kernel);
  ops::register_kernel(Prim::ComplexAbs, DeviceType::GPU, complex_abs_kernel);
  ops::register_kernel(Prim::Where, DeviceType::GPU, where_kernel);
  ops::register_kernel(Prim::Pointwise, DeviceType::GPU, pointwise_kernel);
  ops::register_kernel(Prim::MaskedFill, DeviceType::GPU, masked_fill_kernel);
}

}  // namespace lucid::cuda
