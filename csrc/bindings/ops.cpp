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
    if (!is_tensor(other) && !is_number(other)) return nb::borrow(Py_NotImplemented);
    ops::Operand a{self, {}}, b = operand(other, ops::op_name(op), "other");
    autocast_operands(ops::op_name(op), a, b);
    return nb::cast(reflected ? ops::binary(op, b, a) : ops::binary(op, a, b));
  };
}

// An augmented assignment (t += x): in place, returning self.
auto inplace_operator_fn(ops::BinaryOp op) {
  return [op](nb::handle self, nb::handle other) -> nb::object {
    if (!is_tensor(other) && !is_number(other)) return nb::borrow(Py_NotImplemented);
    ops::binary_inplace(op, nb::cast<TensorPtr>(self), operand(other, ops::op_name(op), "other"));
    return nb::borrow(self);
  };
}

// Note [Operator slots]
// `a + b` on a class whose __add__ is a bound method costs a type-dict lookup of
// __add__ and a full nanobind dispatch; set as the type's nb_add slot, the same
// operator is one C call. For a 1-element add that is a third of lucid's time, so
// the binary operators and comparisons are slots. Errors are translated here, since
// no nanobind function frame surrounds a slot.
template <typename F>
PyObject* translate_errors(F&& f) {
  try {
    return f();
  } catch (nb::python_error& e) {
    e.restore();
  } catch (...) {
    try {
      set_python_error(std::current_exception());
    } catch (const std::exception& e) {  // what the translation does not know
      PyErr_SetString(PyExc_RuntimeError, e.what());
    }
  }
  return nullptr;
}

// The tensor a lucid.Tensor object holds. Every TensorImpl is owned by shared_ptrs
// (Python only ever receives them from factories), so shared_from_this is one
// reference-count increment, where nanobind's caster copies and drops a weak_ptr too.
TensorPtr held_tensor(PyObject* o) { return nb::inst_ptr<TensorImpl>(nb::handle(o))->shared_from_this(); }

// Both operands known (a tensor, or a number next to a tensor), else NotImplemented.
PyObject* binary_slot(ops::BinaryOp op, PyObject* a, PyObject* b) {
  return translate_errors([&]() -> PyObject* {
    bool ta = is_tensor(a), tb = is_tensor(b);
    if (!(ta || is_number(a)) || !(tb || is_number(b))) return nb::borrow(Py_NotImplemented).release().ptr();
    ops::Operand x = ta ? ops::Operand{held_tensor(a), {}} : ops::Operand{nullptr, scalar_from_python(a)};
    ops::Operand y = tb ? ops::Operand{held_tensor(b), {}} : ops::Operand{nullptr, scalar_from_python(b)};
    // number / tensor is torch's Tensor.__rtruediv__: tensor.reciprocal() * number (its
    // bits, which a division by each element does not always give)
    if (op == ops::BinaryOp::Div && !ta)
      return nb::cast(ops::binary(ops::BinaryOp::Mul, {ops::unary(ops::UnaryOp::Reciprocal, y.tensor), {}}, x))
          .release().ptr();
    return nb::cast(ops::binary(op, x, y)).release().ptr();
  });
}

template <ops::BinaryOp op>
PyObject* binary_slot(PyObject* a, PyObject* b) { return binary_slot(op, a, b); }

PyObject* richcompare_slot(PyObject* a, PyObject* b, int cmp) {
  using B = ops::BinaryOp;
  static constexpr B kOps[] = {B::Lt, B::Le, B::Eq, B::Ne, B::Gt, B::Ge};  // Py_LT .. Py_GE
  return binary_slot(kOps[cmp], a, b);
}

}  // namespace

PyType_Slot* tensor_operator_slots() {
  using B = ops::BinaryOp;
  static PyType_Slot slots[] = {
      {Py_nb_add, (void*)&binary_slot<B::Add>},
      {Py_nb_subtract, (void*)&binary_slot<B::Sub>},
      {Py_nb_multiply, (void*)&binary_slot<B::Mul>},
      {Py_nb_true_divide, (void*)&binary_slot<B::Div>},
      {Py_nb_floor_divide, (void*)&binary_slot<B::FloorDivide>},
      {Py_nb_remainder, (void*)&binary_slot<B::Remainder>},
      {Py_nb_and, (void*)&binary_slot<B::BitwiseAnd>},
      {Py_nb_or, (void*)&binary_slot<B::BitwiseOr>},
      {Py_nb_xor, (void*)&binary_slot<B::BitwiseXor>},
      {Py_nb_lshift, (void*)&binary_slot<B::LeftShift>},
      {Py_nb_rshift, (void*)&binary_slot<B::RightShift>},
      {Py_tp_richcompare, (void*)&richcompare_slot},
      {0, nullptr}};
  return slots;
}

void init_ops(nb::module_& m, TensorClass& cls) {
  // out= for the functions bound in Python or without their own out handling
  // (python/lucid/_out.py): the checks and the resize of ops::write_out.
  m.def("_write_out", [](const char* name, const TensorPtr& out, const TensorPtr& result, bool exact) {
    ops::write_out(name, out, result, exact);
  });
  // Functions take out=; the ops with extra arguments are bound in elementwise_extra.cpp.
#define LUCID_BIND_BINARY(name, Fn, rule, operands)                                                        \
  if constexpr (!hand_bound(#name)) {                                                                      \
    m.def(#name, [](nb::handle a, nb::handle b, nb::handle out) {                                          \
      LUCID_CHECK(ops::Operands::operands != ops::Operands::Self || is_tensor(a), TypeError, \
                  #name "(): argument 'input' must be Tensor, not ", type_name_of(a));                       \
      ops::Operand x = operand(a, #name, "input"), y = operand(b, #name, "other");                         \
      if (out.is_none()) autocast_operands(#name, x, y);                                                   \
      return with_out(#name, ops::binary(ops::BinaryOp::Fn, x, y), out);                                   \
    }, nb::arg("input"), nb::arg("other"), nb::kw_only(), nb::arg("out") = nb::none());                   \
    if constexpr (is_method(#name))                                                                        \
      cls.def(#name, [](TensorPtr self, nb::handle b) {                                                    \
        ops::Operand x{self, {}}, y = operand(b, #name, "other");                                          \
        autocast_operands(#name, x, y);                                                                    \
        return ops::binary(ops::BinaryOp::Fn, x, y);                                                       \
      }, nb::arg("other"));                                                                                \
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
        if (out.is_none()) autocast_args(#name, a); /* Note [Autocast]: exp, log, ... on the GPU */          \
        return with_out(#name, ops::unary(ops::UnaryOp::Fn, a), out, exact_out(#name, ops::DtypeRule::rule)); \
      }, nb::arg("input"), nb::kw_only(), nb::arg("out") = nb::none());                                    \
    else                                                                                                   \
      m.def(#name, [](TensorPtr a) {                                                                       \
        autocast_args(#name, a);                                                                           \
        return ops::unary(ops::UnaryOp::Fn, a);                                                            \
      }, nb::arg("input"));                                                                                \
    if constexpr (is_method(#name))                                                                        \
      cls.def(#name, [](TensorPtr self) {                                                                  \
        autocast_args(#name, self);                                                                        \
        return ops::unary(ops::UnaryOp::Fn, self);                                                         \
      });                                                                                                  \
    if constexpr (has_inplace(#name))                                                                      \
      cls.def(#name "_", [](nb::handle self) {                                                             \
        ops::unary_inplace(ops::UnaryOp::Fn, nb::cast<TensorPtr>(self));                                  \
        return nb::borrow(self);                                                                           \
      });                                                                                                  \
  }
  LUCID_UNARY_OPS(LUCID_BIND_UNARY)
#undef LUCID_BIND_UNARY

  using B = ops::BinaryOp;
  cls.def("__pow__", operator_fn(B::Pow, false)).def("__rpow__", operator_fn(B::Pow, true));
  // + - * / // % & | ^ << >> and comparisons are type slots (operator_slots below).
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
