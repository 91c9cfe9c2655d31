// Helpers shared by the elementwise binding files (ops.cpp, elementwise_extra.cpp):
// operands that may be tensors or Python numbers, and the out= argument.
#pragma once

#include <string_view>

#include "bindings/common.h"
#include "ops/elementwise.h"

namespace lucid::bindings {

inline bool is_number(nb::handle h) {
  PyObject* o = h.ptr();
  return PyBool_Check(o) || PyLong_Check(o) || PyFloat_Check(o) || PyComplex_Check(o) || numpy_number(h).is_valid();
}

inline ops::Operand operand(nb::handle h, const char* op, const char* arg) {
  if (is_tensor(h)) return {nb::cast<TensorPtr>(h), {}};
  if (is_number(h)) return {nullptr, scalar_from_python(h)};
  fail<TypeError>(op, "(): argument '", arg, "' must be Tensor or Number, not ", type_name_of(h));
}

// Under lucid.autocast, a binary op's tensor operands as its policy wants them (pow runs
// in float32 on the GPU; Note [Autocast]). Numbers stay as they are.
inline void autocast_operands(const char* name, ops::Operand& a, ops::Operand& b) {
  if (ops::autocast::any_enabled()) autocast_args(name, a.tensor, b.tensor);
}

inline TensorPtr tensor_arg(nb::handle h, const char* op, const char* arg) {
  LUCID_CHECK(is_tensor(h), TypeError, op, "(): argument '", arg, "' must be Tensor, not ",
              type_name_of(h));
  return nb::cast<TensorPtr>(h);
}

// out=None: the result itself; out=t: the result written into t (ops::write_out), t returned.
inline nb::object with_out(const char* name, const TensorPtr& result, nb::handle out, bool exact = false) {
  if (out.is_none()) return nb::cast(result);
  ops::write_out(name, tensor_arg(out, name, "out"), result, exact);
  return nb::borrow(out);
}

// Table ops whose Python signatures have extra arguments (alpha=, rounding_mode=,
// decimals=, eps=): bound by hand in elementwise_extra.cpp instead of ops.cpp.
// torch's isnan, isinf, isfinite and relu have no out=.
constexpr bool takes_out(std::string_view name) {
  return name != "isnan" && name != "isinf" && name != "isfinite" && name != "relu";
}

// torch.special's functions are functions only (torch.special.zeta, no Tensor.special_zeta).
constexpr bool is_method(std::string_view name) { return !name.starts_with("special_"); }

// Table ops without an in-place method in torch (maximum_ and minimum_ predate this list).
constexpr bool has_inplace(std::string_view name) {
  for (std::string_view n : {"fmax", "fmin", "logaddexp", "logaddexp2", "isnan", "isinf", "isfinite", "isposinf",
                             "isneginf"})
    if (n == name) return false;
  return is_method(name);
}

// Unary ops whose out= must have the result's dtype exactly, as torch's do (the
// Same-rule ops but square; isposinf/isneginf, which write bool).
constexpr bool exact_out(std::string_view name, ops::DtypeRule rule) {
  return (rule == ops::DtypeRule::Same && name != "square") || name == "isposinf" || name == "isneginf";
}

constexpr bool hand_bound(std::string_view name) {
  return name == "add" || name == "sub" || name == "div" || name == "round" || name == "logit";
}

}  // namespace lucid::bindings
