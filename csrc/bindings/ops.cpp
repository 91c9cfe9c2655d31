// The elementwise ops as lucid.<op>(...) functions, Tensor methods and Python
// operators, all generated from ops/elementwise_table.h and bound in C++ so that a
// call costs one nanobind dispatch.
#include <nanobind/stl/shared_ptr.h>

#include "bindings/elementwise_common.h"
#include "core/default_dtype.h"
#include "ops/elementwise.h"

namespace lucid::bindings {

namespace {

// A Python operator: NotImplemented for operands it does not know, so that Python
// can try the other side (and finally raise its own TypeError).
auto operator_fn(ops::BinaryOp op, bool reflected) {
  return [op, reflected](TensorPtr self, nb::handle other) -> nb::object {
    if (!nb::isinstance<TensorImpl>(other) && !is_number(other)) return nb::borrow(Py_NotImplemented);
    ops::Operand a{self, {}}, b = operand(other, ops::op_name(op), "other");
    return nb::cast(reflected ? ops::binary(op, b, a) : ops::binary(op, a, b));
  };
}

// An augmented assignment (t += x): in place, returning self.
auto inplace_operator_fn(ops::BinaryOp op) {
  return [op](nb::handle self, nb::handle other) -> nb::object {
    if (!nb::isinstance<TensorImpl>(other) && !is_number(other)) return nb::borrow(Py_NotImplemented);
    ops::binary_inplace(op, nb::cast<TensorPtr>(self), operand(other, ops::op_name(op), "other"));
    return nb::borrow(self);
  };
}

}  // namespace

void init_ops(nb::module_& m, TensorClass& cls) {
  // Functions take out=; the ops with extra arguments are bound in elementwise_extra.cpp.
#define LUCID_BIND_BINARY(name, Fn, rule, operands)                                                        \
  if constexpr (!hand_bound(#name)) {                                                                      \
    m.def(#name, [](nb::handle a, nb::handle b, nb::handle out) {                                          \
      LUCID_CHECK(ops::Operands::operands != ops::Operands::Self || nb::isinstance<TensorImpl>(a), TypeError, \
                  #name "(): argument 'input' must be Tensor, not ", type_name_of(a));                       \
      return with_out(#name, ops::binary(ops::BinaryOp::Fn, operand(a, #name, "input"), operand(b, #name, "other")), out); \
    }, nb::arg("input"), nb::arg("other"), nb::kw_only(), nb::arg("out") = nb::none());                   \
    cls.def(#name, [](TensorPtr self, nb::handle b) {                                                      \
      return ops::binary(ops::BinaryOp::Fn, {self, {}}, operand(b, #name, "other"));                       \
    }, nb::arg("other"));                                                                                  \
    if constexpr (has_inplace(#name))                                                                      \
      cls.def(#name "_", [](nb::handle self, nb::handle b) {                                               \
        ops::binary_inplace(ops::BinaryOp::Fn, nb::cast<TensorPtr>(self), operand(b, #name "_", "other")); \
        return nb::borrow(self);                                                                           \
      }, nb::arg("other"));                                                                                \
  }
  LUCID_BINARY_OPS(LUCID_BIND_BINARY)
#undef LUCID_BIND_BINARY

#define LUCID_BIND_UNARY(name, Fn, rule)                                                                   \
  if constexpr (!hand_bound(#name)) {                                                                      \
    if constexpr (takes_out(#name))                                                                        \
      m.def(#name, [](TensorPtr a, nb::handle out) {                                                       \
        return with_out(#name, ops::unary(ops::UnaryOp::Fn, a), out, exact_out(#name, ops::DtypeRule::rule)); \
      }, nb::arg("input"), nb::kw_only(), nb::arg("out") = nb::none());                                    \
    else                                                                                                   \
      m.def(#name, [](TensorPtr a) { return ops::unary(ops::UnaryOp::Fn, a); }, nb::arg("input"));         \
    cls.def(#name, [](TensorPtr self) { return ops::unary(ops::UnaryOp::Fn, self); });                     \
    if constexpr (has_inplace(#name))                                                                      \
      cls.def(#name "_", [](nb::handle self) {                                                             \
        ops::unary_inplace(ops::UnaryOp::Fn, nb::cast<TensorPtr>(self));                                  \
        return nb::borrow(self);                                                                           \
      });                                                                                                  \
  }
  LUCID_UNARY_OPS(LUCID_BIND_UNARY)
#undef LUCID_BIND_UNARY

  using B = ops::BinaryOp;
  cls.def("__add__", operator_fn(B::Add, false)).def("__radd__", operator_fn(B::Add, true));
  cls.def("__sub__", operator_fn(B::Sub, false)).def("__rsub__", operator_fn(B::Sub, true));
  cls.def("__mul__", operator_fn(B::Mul, false)).def("__rmul__", operator_fn(B::Mul, true));
  cls.def("__truediv__", operator_fn(B::Div, false)).def("__rtruediv__", operator_fn(B::Div, true));
  cls.def("__floordiv__", operator_fn(B::FloorDivide, false)).def("__rfloordiv__", operator_fn(B::FloorDivide, true));
  cls.def("__mod__", operator_fn(B::Remainder, false)).def("__rmod__", operator_fn(B::Remainder, true));
  cls.def("__pow__", operator_fn(B::Pow, false)).def("__rpow__", operator_fn(B::Pow, true));
  cls.def("__and__", operator_fn(B::BitwiseAnd, false)).def("__rand__", operator_fn(B::BitwiseAnd, true));
  cls.def("__or__", operator_fn(B::BitwiseOr, false)).def("__ror__", operator_fn(B::BitwiseOr, true));
  cls.def("__xor__", operator_fn(B::BitwiseXor, false)).def("__rxor__", operator_fn(B::BitwiseXor, true));
  cls.def("__lshift__", operator_fn(B::LeftShift, false)).def("__rlshift__", operator_fn(B::LeftShift, true));
  cls.def("__rshift__", operator_fn(B::RightShift, false)).def("__rrshift__", operator_fn(B::RightShift, true));
  // Python reflects comparisons itself (2 < t calls t.__gt__(2)).
  cls.def("__eq__", operator_fn(B::Eq, false)).def("__ne__", operator_fn(B::Ne, false));
  cls.def("__lt__", operator_fn(B::Lt, false)).def("__le__", operator_fn(B::Le, false));
  cls.def("__gt__", operator_fn(B::Gt, false)).def("__ge__", operator_fn(B::Ge, false));
  cls.def("__iadd__", inplace_operator_fn(B::Add)).def("__isub__", inplace_operator_fn(B::Sub));
  cls.def("__imul__", inplace_operator_fn(B::Mul)).def("__itruediv__", inplace_operator_fn(B::Div));
  cls.def("__ifloordiv__", inplace_operator_fn(B::FloorDivide)).def("__imod__", inplace_operator_fn(B::Remainder));
  cls.def("__ipow__", inplace_operator_fn(B::Pow)).def("__iand__", inplace_operator_fn(B::BitwiseAnd));
  cls.def("__ior__", inplace_operator_fn(B::BitwiseOr)).def("__ixor__", inplace_operator_fn(B::BitwiseXor));
  cls.def("__ilshift__", inplace_operator_fn(B::LeftShift)).def("__irshift__", inplace_operator_fn(B::RightShift));
  cls.def("__neg__", [](TensorPtr self) { return ops::unary(ops::UnaryOp::Neg, self); });
  cls.def("__abs__", [](TensorPtr self) { return ops::unary(ops::UnaryOp::Abs, self); });
  cls.def("__invert__", [](TensorPtr self) {
    LUCID_CHECK(is_integral(self->dtype(), true), TypeError,
                "~ (operator.invert) is only implemented on integer and Boolean-type tensors");
    return ops::unary(ops::UnaryOp::BitwiseNot, self);
  });
  // Defining __eq__ would otherwise make tensors unhashable; PyTorch hashes by identity.
  cls.def("__hash__", [](nb::handle self) { return std::hash<const void*>()(self.ptr()); });

  nb::list names;
#define LUCID_NAME(name, ...) names.append(#name);
  LUCID_BINARY_OPS(LUCID_NAME)
  LUCID_UNARY_OPS(LUCID_NAME)
#undef LUCID_NAME
  m.attr("_elementwise_ops") = nb::tuple(names);

  m.def("set_default_dtype", [](int code) { set_default_dtype(dtype_from_code(code)); });
  m.def("get_default_dtype", [] { return int(default_dtype()); });
}

}  // namespace lucid::bindings
