#include "ops/elementwise.h"

#include <cstring>

#include "core/copy.h"
#include "core/default_dtype.h"
#include "ops/copy_ops.h"
#include "ops/promotion.h"
#include "ops/prims/elementwise.h"
#include "ops/views.h"
#include "autograd/record.h"
#include "autograd/node.h"

namespace lucid::ops {

namespace {

constexpr DtypeRule kBinaryRule[] = {
#define LUCID_RULE(name, Fn, rule, operands) DtypeRule::rule,
    LUCID_BINARY_OPS(LUCID_RULE)
#undef LUCID_RULE
};
constexpr DtypeRule kUnaryRule[] = {
#define LUCID_RULE(name, Fn, rule) DtypeRule::rule,
    LUCID_UNARY_OPS(LUCID_RULE)
#undef LUCID_RULE
};
constexpr Operands kBinaryOperands[] = {
#define LUCID_OPERANDS(name, Fn, rule, operands) Operands::operands,
    LUCID_BINARY_OPS(LUCID_OPERANDS)
#undef LUCID_OPERANDS
};
constexpr const char* kBinaryName[] = {
#define LUCID_NAME(name, Fn, rule, operands) #name,
    LUCID_BINARY_OPS(LUCID_NAME)
#undef LUCID_NAME
};
constexpr const char* kUnaryName[] = {
#define LUCID_NAME(name, Fn, rule) #name,
    LUCID_UNARY_OPS(LUCID_NAME)
#undef LUCID_NAME
};

// A number as the value of `dtype` it becomes, converted the way PyTorch converts
// wrapped numbers (unchecked), without making a tensor (scalar_to_bytes).
Scalar number_as(const Scalar& s, Dtype dtype) {
  alignas(16) std::byte to[16];
  scalar_to_bytes(s, dtype, to);
  return scalar_from_bytes(to, dtype);
}

}  // namespace

Device op_device(const char* name, std::initializer_list<const TensorImpl*> ts) {
  const TensorImpl* lead = nullptr;
  for (const TensorImpl* t : ts)
    if (t && (!lead || (lead->ndim() == 0 && lead->device().is_cpu() && t->ndim() > 0))) lead = t;
  for (const TensorImpl* t : ts) {
    if (!t || t->device() == lead->device() || (t->ndim() == 0 && t->device().is_cpu())) continue;
    fail<RuntimeError>("Expected all tensors to be on the same device, but found at least two devices, ",
                       lead->device().str(), " and ", t->device().str(), "! (in ", name, ")");
  }
  return lead->device();
}

std::optional<Scalar> number_param(const Operand& o, Dtype dtype, const Device& device, Dtype compute) {
  if (!o.tensor) return number_as(o.number, dtype);
  if (o.tensor->device() != device) return o.tensor->clone(dtype)->item();
  if (dtype != compute && device.is_cpu() && o.tensor->ndim() == 0 && o.tensor->dtype() != compute)
    return o.tensor->clone(dtype)->item();
  return std::nullopt;
}

namespace {


// `t` cast to `dtype` (one pass, only if needed) and broadcast to `shape`.
TensorPtr prepare(const TensorPtr& t, Dtype dtype, const Shape& shape) {
  TensorPtr c = t->dtype() == dtype ? t : t->clone(dtype);
  return c->shape() == shape ? c : expand(c, shape);
}

// The output: laid out like the first input of the full output shape (PyTorch keeps
// a transposed input's memory order), contiguous otherwise.
TensorPtr make_output(Shape shape, Dtype dtype, Device device, const TensorImpl* like) {
  if (like && like->shape() == shape && !like->is_contiguous())
    return TensorImpl::empty_strided(shape, dense_strides_like(shape, like->stride(), int64_t(dtype_size(dtype))),
                                     dtype, device);
  return TensorImpl::empty(std::move(shape), dtype, device);
}

}  // namespace

const char* op_name(BinaryOp op) { return kBinaryName[int(op)]; }
const char* op_name(UnaryOp op) { return kUnaryName[int(op)]; }

Shape broadcast_shapes(const Shape& a, const Shape& b) {
  size_t n = std::max(a.size(), b.size());
  Shape out(n);
  for (size_t i = 0; i < n; ++i) {
    int64_t x = i < n - a.size() ? 1 : a[i - (n - a.size())];
    int64_t y = i < n - b.size() ? 1 : b[i - (n - b.size())];
    LUCID_CHECK(x == y || x == 1 || y == 1, RuntimeError, "The size of tensor a (", x,
                ") must match the size of tensor b (", y, ") at non-singleton dimension ", i);
    out[i] = x == 1 ? y : x;
  }
  return out;
}

namespace {

// Everything an elementwise op decides before it computes: checks, promotion,
// broadcasting.
struct BinaryPlan {
  Dtype compute;  // the dtype the kernel runs in
  Dtype out;      // compute, or bool for comparisons
  Shape shape;
  Device device;
};

BinaryPlan plan_binary(BinaryOp op, const Operand& a, const Operand& b) {
  const char* name = op_name(op);
  DtypeRule rule = kBinaryRule[int(op)];
  LUCID_CHECK(a.tensor || b.tensor, TypeError, name, "() needs at least one tensor operand");
  if (kBinaryOperands[int(op)] == Operands::Tensors)
    for (const Operand* o : {&a, &b})
      LUCID_CHECK(o->tensor, TypeError, name, "(): argument 'other' must be Tensor, not a number");
  // PyTorch's wording for the bool cases it refuses.
  auto is_bool = [](const Operand& o) {
    return o.tensor ? o.tensor->dtype() == Dtype::Bool : std::holds_alternative<bool>(o.number);
  };
  LUCID_CHECK(!(op == BinaryOp::Sub && (is_bool(a) || is_bool(b))), NotImplementedError,
              "Subtraction, the `-` operator, with a bool tensor is not supported. If you are trying to "
              "invert a mask, use the `~` or `logical_not()` operator instead.");
  Device device = op_device(name, {a.tensor.get(), b.tensor.get()});

  ResultType promotion(default_dtype());
  for (const Operand* o : {&a, &b}) {
    if (o->tensor) promotion.add_tensor(o->tensor->dtype(), o->tensor->ndim() == 0);
    else promotion.add_scalar(dtype_kind(scalar_dtype(o->number)));
  }
  Dtype compute = promotion.result();
  LUCID_CHECK(!(op == BinaryOp::Pow && compute == Dtype::Bool && b.tensor), NotImplementedError,
              "pow is not implemented for dtype bool");
  // Only a Python-number exponent is refused (a tensor exponent gives 0), as in torch.
  LUCID_CHECK(!(op == BinaryOp::Pow && is_integral(compute, false) && !b.tensor &&
                std::holds_alternative<int64_t>(b.number) && std::get<int64_t>(b.number) < 0),
              RuntimeError, "Integers to negative integer powers are not allowed.");
  LUCID_CHECK(!((op == BinaryOp::Maximum || op == BinaryOp::Minimum) && is_complex(compute)), TypeError, name,
              " not implemented for complex tensors.");
  if (rule == DtypeRule::TrueDiv && is_integral(compute, true)) compute = default_dtype();
  Dtype out = rule == DtypeRule::Compare ? Dtype::Bool : compute;
  static const Shape kNumber;  // a Python number broadcasts like a 0-d tensor
  Shape shape = broadcast_shapes(a.tensor ? a.tensor->shape() : kNumber, b.tensor ? b.tensor->shape() : kNumber);
  return {compute, out, std::move(shape), device};
}

// A tensor operand ready for the kernel: the caller's tensor itself when it already
// has the compute dtype and shape (the common case: no reference-count traffic), else
// the converted tensor, kept alive by `holder`.
struct ReadyOperand {
  TensorPtr holder;
  const TensorImpl* impl;
};

ReadyOperand ready_operand(const TensorPtr& t, const BinaryPlan& plan) {
  if (t->dtype() == plan.compute && t->shape() == plan.shape) return {nullptr, t.get()};
  TensorPtr c = prepare(t, plan.compute, plan.shape);
  const TensorImpl* impl = c.get();
  return {std::move(c), impl};
}

// out = op(a, b) through the Binary primitive.
void run_binary(BinaryOp op, const BinaryPlan& plan, TensorImpl& out, const Operand& a, const Operand& b) {
  check_supported(op, plan.compute);
  Binary p;
  p.op = op;
  p.compute = plan.compute;
  const Dtype numbers = number_dtype(op, plan.compute, plan.device.type);
  p.lhs = number_param(a, numbers, plan.device, plan.compute);
  p.rhs = number_param(b, numbers, plan.device, plan.compute);
  // torch's CUDA kernels divide by a number as a product with its reciprocal, taken in
  // double and rounded to the compute type (measured on an H100: x / 1.3333333 differed
  // from torch's in 70% of float32 elements as a division)
  if (op == BinaryOp::Div && p.rhs && plan.device.type == DeviceType::GPU && is_floating(plan.compute)) {
    const Scalar divisor = b.tensor ? b.tensor->item() : b.number;
    const double d = std::visit([](auto v) -> double {
      if constexpr (std::is_same_v<decltype(v), std::complex<double>>) return v.real();
      else return double(v);
    }, divisor);
    p.op = BinaryOp::Mul;
    p.rhs = number_as(Scalar(1.0 / d), number_dtype(BinaryOp::Mul, plan.compute, plan.device.type));
  }
  // A number divisor of zero raises here, at once, on every device (RuntimeError
  // "ZeroDivisionError", as torch's CPU); the kernels check tensor divisors.
  using B = BinaryOp;
  LUCID_CHECK(!((op == B::FloorDivide || op == B::DivTrunc || op == B::Remainder || op == B::Fmod) &&
                is_integral(plan.compute, false) && p.rhs &&
                std::visit([](auto v) { return v == decltype(v)(0); }, *p.rhs)),
              RuntimeError, "ZeroDivisionError");
  ReadyOperand x = p.lhs ? ReadyOperand{} : ready_operand(a.tensor, plan);
  ReadyOperand y = p.rhs ? ReadyOperand{} : ready_operand(b.tensor, plan);
  const TensorImpl* ins[2];
  size_t n = 0;
  if (x.impl) ins[n++] = x.impl;
  if (y.impl) ins[n++] = y.impl;
  TensorImpl* outs[1] = {&out};
  launch(p, outs, Inputs(ins, n));
}

// A tensor with self's bytes copied and self's place in the graph: what an in-place
// op differentiates through, since self's own bytes are about to change.
TensorPtr copy_with_history(const TensorPtr& self) {
  TensorPtr copy = self->clone(std::nullopt, std::nullopt, true);
  if (self->grad_fn()) autograd::set_history(copy, self->grad_fn(), self->output_nr());
  return copy;
}


}  // namespace

TensorPtr binary(BinaryOp op, const Operand& a, const Operand& b) {
  BinaryPlan plan = plan_binary(op, a, b);
  TensorPtr out = make_output(plan.shape, plan.out, plan.device, a.tensor ? a.tensor.get() : b.tensor.get());
  run_binary(op, plan, *out, a, b);
  record_binary(op, a, b, out);
  return out;
}

TensorPtr read_apart(const TensorPtr& self, const TensorPtr& other) {
  const bool overlaps = other->storage_is_shared() &&
                        storage_base(other->storage()).data == storage_base(self->storage()).data &&
                        !(other->storage_offset() == self->storage_offset() && other->shape() == self->shape() &&
                          other->stride() == self->stride());
  return overlaps ? other->clone() : other;
}

void binary_inplace(BinaryOp op, const TensorPtr& self, const Operand& other) {
  const char* name = op_name(op);
  check_inplace_target(name, self, other.tensor);
  BinaryPlan plan = plan_binary(op, {self, {}}, other);
  LUCID_CHECK(plan.shape == self->shape(), RuntimeError, "output with shape ", shape_str(self->shape()),
              " doesn't match the broadcast shape ", shape_str(plan.shape));
  LUCID_CHECK(kBinaryRule[int(op)] == DtypeRule::Compare || can_cast(plan.out, self->dtype()), RuntimeError,
              "result type ", dtype_name(plan.out), " can't be cast to the desired output type ",
              dtype_name(self->dtype()));
  if (autograd::needs_grad({&self, &other.tensor}) || writes_through_view(self, other.tensor)) {
    write_inplace_result(self, binary(op, {copy_with_history(self), {}}, other));
    return;
  }
  Operand src = other;
  if (src.tensor) src.tensor = read_apart(self, src.tensor);
  if (plan.out != self->dtype()) {
    write_inplace_result(self, binary(op, {self, {}}, src));
    return;
  }
  run_binary(op, plan, *self, {self, {}}, src);
  self->bump_version();
}

namespace {

// The dtype a unary op computes in (its output dtype, but bool for predicates).
Dtype unary_dtype(UnaryOp op, const TensorPtr& a) {
  LUCID_CHECK(!(op == UnaryOp::Neg && a->dtype() == Dtype::Bool), NotImplementedError,
              "Negation, the `-` operator, on a bool tensor is not supported. If you are trying to invert a "
              "mask, use the `~` or `logical_not()` operator instead.");
  LUCID_CHECK(!(op == UnaryOp::Relu && a->dtype() == Dtype::Bool), NotImplementedError,
              "Boolean inputs not supported for relu");
  if (op == UnaryOp::Square && a->dtype() == Dtype::Bool) return Dtype::I64;  // torch's pow(x, 2)
  if (kUnaryRule[int(op)] == DtypeRule::Float && is_integral(a->dtype(), true)) return default_dtype();
  return a->dtype();
}

}  // namespace

TensorPtr unary(UnaryOp op, const TensorPtr& a) {
  TensorPtr out;
  if (op == UnaryOp::Abs && is_complex(a->dtype())) {  // |z| is real, as in PyTorch
    TensorPtr x = prepare(a, a->dtype(), a->shape());
    out = make_output(a->shape(), a->dtype() == Dtype::C128 ? Dtype::F64 : Dtype::F32, a->device(), a.get());
    launch(ComplexAbs{}, {out.get()}, {x.get()});
  } else {
    Dtype dtype = unary_dtype(op, a);
    TensorPtr x = prepare(a, dtype, a->shape());
    out = make_output(a->shape(), kUnaryRule[int(op)] == DtypeRule::Predicate ? Dtype::Bool : dtype, a->device(),
                      a.get());
    check_supported(op, x->dtype());
    Unary p;
    p.op = op;
    launch(p, {out.get()}, {x.get()});
  }
  record_unary(op, a, out);
  return out;
}

void unary_inplace(UnaryOp op, const TensorPtr& self) {
  const char* name = op_name(op);
  check_inplace_target(name, self, nullptr);
  Dtype dtype = op == UnaryOp::Abs && is_complex(self->dtype()) ? Dtype::F32
                : kUnaryRule[int(op)] == DtypeRule::Predicate ? Dtype::Bool
                                                               : unary_dtype(op, self);
  LUCID_CHECK(can_cast(dtype, self->dtype()), RuntimeError, "result type ", dtype_name(dtype),
              " can't be cast to the desired output type ", dtype_name(self->dtype()));
  bool record = autograd::needs_grad({&self}) || writes_through_view(self, nullptr);
  if (record || dtype != self->dtype()) {
    write_inplace_result(self, unary(op, record ? copy_with_history(self) : self));
    return;
  }
  check_supported(op, self->dtype());
  Unary p;
  p.op = op;
  launch(p, {self.get()}, {self.get()});
  self->bump_version();
}

void inplace_via(const char* name, const TensorPtr& self, const TensorPtr& source,
                 const std::function<TensorPtr(const TensorPtr&)>& f) {
  check_inplace_target(name, self, source);
  bool grad = autograd::needs_grad({&self, &source}) || writes_through_view(self, source);
  TensorPtr result = f(grad ? copy_with_history(self) : self);
  LUCID_CHECK(result->shape() == self->shape(), RuntimeError, "output with shape ", shape_str(self->shape()),
              " doesn't match the broadcast shape ", shape_str(result->shape()));
  LUCID_CHECK(can_cast(result->dtype(), self->dtype()), RuntimeError, "result type ", dtype_name(result->dtype()),
              " can't be cast to the desired output type ", dtype_name(self->dtype()));
  write_inplace_result(self, result);
}

void write_out(const char* name, const TensorPtr& out, const TensorPtr& result, bool exact) {
  LUCID_CHECK(!(autograd::grad_enabled() && (result->requires_grad() || out->requires_grad())), RuntimeError,
              name, "(): functions with out=... arguments don't support automatic differentiation, but one of "
              "the arguments requires grad.");
  LUCID_CHECK(out->device() == result->device(), RuntimeError, name, "(): expected out on ",
              result->device().str(), " but got it on ", out->device().str());
  LUCID_CHECK(!exact || result->dtype() == out->dtype(), RuntimeError, name, "(): expected out to have dtype ",
              dtype_name(result->dtype()), " but got ", dtype_name(out->dtype()));
  LUCID_CHECK(can_cast(result->dtype(), out->dtype()), RuntimeError, "result type ", dtype_name(result->dtype()),
              " can't be cast to the desired output type ", dtype_name(out->dtype()));
  if (out->shape() != result->shape()) {  // torch resizes out (it warns when out was not empty)
    LUCID_CHECK(!out->storage_is_shared() || out->numel() == 0, RuntimeError, name,
                "(): out has shape ", shape_str(out->shape()), " but the result has shape ",
                shape_str(result->shape()), ", and out shares its storage, so it cannot be resized");
    out->set_data(*TensorImpl::empty(result->shape(), out->dtype(), out->device()));
  }
  out->copy_from(*result);
}

}  // namespace lucid::ops
