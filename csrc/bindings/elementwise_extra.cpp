// Elementwise ops with extra arguments, bound by hand: add/sub (alpha=), div
// (rounding_mode=), round (decimals=), logit (eps=), where, clamp/clip, lerp,
// addcmul/addcdiv, nan_to_num, isclose/allclose/equal, result_type/can_cast.
// Functions take out= where torch's do.
#include <nanobind/stl/optional.h>
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/string.h>

#include "bindings/elementwise_common.h"
#include "ops/elementwise_extra.h"
#include "ops/promotion.h"

namespace lucid::bindings {

namespace {

using ops::BinaryOp;
using ops::Operand;
using OptOperand = std::optional<Operand>;

OptOperand optional_operand(nb::handle h, const char* op, const char* arg) {
  if (h.is_none()) return std::nullopt;
  return operand(h, op, arg);
}

Scalar number_arg(nb::handle h, const char* op, const char* arg) {
  LUCID_CHECK(is_number(h), TypeError, op, "(): argument '", arg, "' must be Number, not ", type_name_of(h));
  return scalar_from_python(h);
}

// add/sub with alpha: function, method and in-place method.
void bind_alpha_op(nb::module_& m, TensorClass& cls, const char* name, const char* iname, BinaryOp op) {
  m.def(name, [name, op](nb::handle a, nb::handle b, nb::handle alpha, nb::handle out) {
    return with_out(name, ops::add_alpha(op, operand(a, name, "input"), operand(b, name, "other"),
                                         number_arg(alpha, name, "alpha")), out);
  }, nb::arg("input"), nb::arg("other"), nb::kw_only(), nb::arg("alpha") = 1, nb::arg("out") = nb::none());
  cls.def(name, [name, op](TensorPtr self, nb::handle b, nb::handle alpha) {
    return ops::add_alpha(op, {self, {}}, operand(b, name, "other"), number_arg(alpha, name, "alpha"));
  }, nb::arg("other"), nb::kw_only(), nb::arg("alpha") = 1);
  cls.def(iname, [iname, op](nb::handle self_h, nb::handle b, nb::handle alpha) {
    ops::add_alpha_inplace(op, nb::cast<TensorPtr>(self_h), operand(b, iname, "other"),
                           number_arg(alpha, iname, "alpha"));
    return nb::borrow(self_h);
  }, nb::arg("other"), nb::kw_only(), nb::arg("alpha") = 1);
}

}  // namespace

void init_elementwise_extra(nb::module_& m, TensorClass& cls) {
  bind_alpha_op(m, cls, "add", "add_", BinaryOp::Add);
  bind_alpha_op(m, cls, "sub", "sub_", BinaryOp::Sub);

  using Mode = std::optional<std::string>;
  m.def("div", [](nb::handle a, nb::handle b, Mode mode, nb::handle out) {
    return with_out("div", ops::binary(ops::div_op(mode), operand(a, "div", "input"), operand(b, "div", "other")), out);
  }, nb::arg("input"), nb::arg("other"), nb::kw_only(), nb::arg("rounding_mode") = nb::none(),
     nb::arg("out") = nb::none());
  cls.def("div", [](TensorPtr self, nb::handle b, Mode mode) {
    return ops::binary(ops::div_op(mode), {self, {}}, operand(b, "div", "other"));
  }, nb::arg("other"), nb::kw_only(), nb::arg("rounding_mode") = nb::none());
  cls.def("div_", [](nb::handle self, nb::handle b, Mode mode) {
    ops::binary_inplace(ops::div_op(mode), nb::cast<TensorPtr>(self), operand(b, "div_", "other"));
    return nb::borrow(self);
  }, nb::arg("other"), nb::kw_only(), nb::arg("rounding_mode") = nb::none());

  // decimals given at all (even 0) is torch's round.decimals, which integers lack.
  using Decimals = std::optional<int64_t>;
  auto rounded = [](const TensorPtr& a, Decimals d) { return d ? ops::round_decimals(a, *d) : ops::unary(ops::UnaryOp::Round, a); };
  m.def("round", [rounded](TensorPtr a, Decimals decimals, nb::handle out) {
    return with_out("round", rounded(a, decimals), out, true);
  }, nb::arg("input"), nb::kw_only(), nb::arg("decimals") = nb::none(), nb::arg("out") = nb::none());
  cls.def("round", rounded, nb::kw_only(), nb::arg("decimals") = nb::none());
  cls.def("round_", [](nb::handle self, Decimals decimals) {
    TensorPtr t = nb::cast<TensorPtr>(self);
    if (!decimals) ops::unary_inplace(ops::UnaryOp::Round, t);
    else ops::inplace_via("round_", t, nullptr, [decimals](const TensorPtr& x) { return ops::round_decimals(x, *decimals); });
    return nb::borrow(self);
  }, nb::kw_only(), nb::arg("decimals") = nb::none());

  using Eps = std::optional<double>;
  m.def("logit", [](TensorPtr a, Eps eps, nb::handle out) { return with_out("logit", ops::logit(a, eps), out); },
        nb::arg("input"), nb::arg("eps") = nb::none(), nb::kw_only(), nb::arg("out") = nb::none());
  cls.def("logit", [](TensorPtr a, Eps eps) { return ops::logit(a, eps); }, nb::arg("eps") = nb::none());
  cls.def("logit_", [](nb::handle self, Eps eps) {
    ops::inplace_via("logit_", nb::cast<TensorPtr>(self), nullptr, [eps](const TensorPtr& x) { return ops::logit(x, eps); });
    return nb::borrow(self);
  }, nb::arg("eps") = nb::none());

  m.def("where", [](nb::handle cond, nb::handle a, nb::handle b, nb::handle out) {
    return with_out("where", ops::where(tensor_arg(cond, "where", "condition"), operand(a, "where", "input"),
                                        operand(b, "where", "other")), out, true);
  }, nb::arg("condition"), nb::arg("input"), nb::arg("other"), nb::kw_only(), nb::arg("out") = nb::none());
  // where(condition) alone is torch's nonzero(condition, as_tuple=True)
  m.def("where", [](nb::handle cond) {
    tensor_arg(cond, "where", "condition");  // (raises for anything else)
    return cond.attr("nonzero")(nb::arg("as_tuple") = true);
  }, nb::arg("condition"));
  cls.def("where", [](TensorPtr self, nb::handle cond, nb::handle b) {
    return ops::where(tensor_arg(cond, "where", "condition"), {self, {}}, operand(b, "where", "other"));
  }, nb::arg("condition"), nb::arg("other"));

  // clamp / clip and the one-sided forms.
  for (const char* name : {"clamp", "clip"}) {
    m.def(name, [name](TensorPtr a, nb::handle lo, nb::handle hi, nb::handle out) {
      return with_out(name, ops::clamp(a, optional_operand(lo, name, "min"), optional_operand(hi, name, "max")), out, true);
    }, nb::arg("input"), nb::arg("min") = nb::none(), nb::arg("max") = nb::none(), nb::kw_only(),
       nb::arg("out") = nb::none());
    cls.def(name, [name](TensorPtr a, nb::handle lo, nb::handle hi) {
      return ops::clamp(a, optional_operand(lo, name, "min"), optional_operand(hi, name, "max"));
    }, nb::arg("min") = nb::none(), nb::arg("max") = nb::none());
    cls.def((std::string(name) + "_").c_str(), [name](nb::handle self, nb::handle lo, nb::handle hi) {
      OptOperand l = optional_operand(lo, name, "min"), h = optional_operand(hi, name, "max");
      TensorPtr src = l && l->tensor ? l->tensor : h ? h->tensor : nullptr;
      ops::inplace_via(name, nb::cast<TensorPtr>(self), src, [&](const TensorPtr& x) { return ops::clamp(x, l, h); });
      return nb::borrow(self);
    }, nb::arg("min") = nb::none(), nb::arg("max") = nb::none());
  }
  m.def("hardtanh", [](TensorPtr a, nb::handle lo, nb::handle hi) {
    return ops::hardtanh(a, scalar_from_python(lo), scalar_from_python(hi));
  }, nb::arg("input"), nb::arg("min_val"), nb::arg("max_val"));
  m.def("clamp_min", [](TensorPtr a, nb::handle lo, nb::handle out) {
    return with_out("clamp_min", ops::clamp(a, operand(lo, "clamp_min", "min"), std::nullopt, true), out);
  }, nb::arg("input"), nb::arg("min"), nb::kw_only(), nb::arg("out") = nb::none());
  m.def("clamp_max", [](TensorPtr a, nb::handle hi, nb::handle out) {
    return with_out("clamp_max", ops::clamp(a, std::nullopt, operand(hi, "clamp_max", "max"), true), out);
  }, nb::arg("input"), nb::arg("max"), nb::kw_only(), nb::arg("out") = nb::none());
  cls.def("clamp_min", [](TensorPtr a, nb::handle lo) { return ops::clamp(a, operand(lo, "clamp_min", "min"), std::nullopt, true); },
          nb::arg("min"));
  cls.def("clamp_max", [](TensorPtr a, nb::handle hi) { return ops::clamp(a, std::nullopt, operand(hi, "clamp_max", "max"), true); },
          nb::arg("max"));
  cls.def("clamp_min_", [](nb::handle self, nb::handle lo) {
    Operand l = operand(lo, "clamp_min_", "min");
    ops::inplace_via("clamp_min_", nb::cast<TensorPtr>(self), l.tensor,
                     [&](const TensorPtr& x) { return ops::clamp(x, l, std::nullopt, true); });
    return nb::borrow(self);
  }, nb::arg("min"));
  cls.def("clamp_max_", [](nb::handle self, nb::handle hi) {
    Operand h = operand(hi, "clamp_max_", "max");
    ops::inplace_via("clamp_max_", nb::cast<TensorPtr>(self), h.tensor,
                     [&](const TensorPtr& x) { return ops::clamp(x, std::nullopt, h, true); });
    return nb::borrow(self);
  }, nb::arg("max"));

  m.def("lerp", [](TensorPtr a, TensorPtr end, nb::handle w, nb::handle out) {
    return with_out("lerp", ops::lerp(a, end, operand(w, "lerp", "weight")), out);
  }, nb::arg("input"), nb::arg("end"), nb::arg("weight"), nb::kw_only(), nb::arg("out") = nb::none());
  cls.def("lerp", [](TensorPtr a, TensorPtr end, nb::handle w) { return ops::lerp(a, end, operand(w, "lerp", "weight")); },
          nb::arg("end"), nb::arg("weight"));
  cls.def("lerp_", [](nb::handle self, TensorPtr end, nb::handle w) {
    Operand wt = operand(w, "lerp_", "weight");
    ops::inplace_via("lerp_", nb::cast<TensorPtr>(self), end, [&](const TensorPtr& x) { return ops::lerp(x, end, wt); });
    return nb::borrow(self);
  }, nb::arg("end"), nb::arg("weight"));

  using Ternary = TensorPtr (*)(const TensorPtr&, const TensorPtr&, const TensorPtr&, const Scalar&);
  for (auto [name, fn] : {std::pair<const char*, Ternary>{"addcmul", &ops::addcmul}, {"addcdiv", &ops::addcdiv}}) {
    m.def(name, [name, fn](TensorPtr a, TensorPtr t1, TensorPtr t2, nb::handle value, nb::handle out) {
      return with_out(name, fn(a, t1, t2, number_arg(value, name, "value")), out);
    }, nb::arg("input"), nb::arg("tensor1"), nb::arg("tensor2"), nb::kw_only(), nb::arg("value") = 1,
       nb::arg("out") = nb::none());
    cls.def(name, [name, fn](TensorPtr a, TensorPtr t1, TensorPtr t2, nb::handle value) {
      return fn(a, t1, t2, number_arg(value, name, "value"));
    }, nb::arg("tensor1"), nb::arg("tensor2"), nb::kw_only(), nb::arg("value") = 1);
    cls.def((std::string(name) + "_").c_str(), [name, fn](nb::handle self, TensorPtr t1, TensorPtr t2, nb::handle value) {
      Scalar v = number_arg(value, name, "value");
      ops::inplace_via(name, nb::cast<TensorPtr>(self), t1, [&](const TensorPtr& x) { return fn(x, t1, t2, v); });
      return nb::borrow(self);
    }, nb::arg("tensor1"), nb::arg("tensor2"), nb::kw_only(), nb::arg("value") = 1);
  }

  using OptD = std::optional<double>;
  m.def("nan_to_num", [](TensorPtr a, OptD nan, OptD posinf, OptD neginf, nb::handle out) {
    return with_out("nan_to_num", ops::nan_to_num(a, nan, posinf, neginf), out);
  }, nb::arg("input"), nb::arg("nan") = 0.0, nb::arg("posinf") = nb::none(), nb::arg("neginf") = nb::none(),
     nb::kw_only(), nb::arg("out") = nb::none());
  cls.def("nan_to_num", [](TensorPtr a, OptD nan, OptD posinf, OptD neginf) {
    return ops::nan_to_num(a, nan, posinf, neginf);
  }, nb::arg("nan") = 0.0, nb::arg("posinf") = nb::none(), nb::arg("neginf") = nb::none());
  cls.def("nan_to_num_", [](nb::handle self, OptD nan, OptD posinf, OptD neginf) {
    ops::inplace_via("nan_to_num_", nb::cast<TensorPtr>(self), nullptr,
                     [&](const TensorPtr& x) { return ops::nan_to_num(x, nan, posinf, neginf); });
    return nb::borrow(self);
  }, nb::arg("nan") = 0.0, nb::arg("posinf") = nb::none(), nb::arg("neginf") = nb::none());

  m.def("isclose", &ops::isclose, nb::arg("input"), nb::arg("other"), nb::arg("rtol") = 1e-05,
        nb::arg("atol") = 1e-08, nb::arg("equal_nan") = false);
  cls.def("isclose", &ops::isclose, nb::arg("other"), nb::arg("rtol") = 1e-05, nb::arg("atol") = 1e-08,
          nb::arg("equal_nan") = false);
  m.def("allclose", &ops::allclose, nb::arg("input"), nb::arg("other"), nb::arg("rtol") = 1e-05,
        nb::arg("atol") = 1e-08, nb::arg("equal_nan") = false);
  cls.def("allclose", &ops::allclose, nb::arg("other"), nb::arg("rtol") = 1e-05, nb::arg("atol") = 1e-08,
          nb::arg("equal_nan") = false);
  m.def("equal", &ops::equal, nb::arg("input"), nb::arg("other"));
  cls.def("equal", &ops::equal, nb::arg("other"));

  m.attr("_elementwise_extra_ops") = nb::make_tuple("clamp", "clip", "clamp_min", "clamp_max", "where", "lerp",
      "addcmul", "addcdiv", "nan_to_num", "isclose", "allclose", "equal");

  // Dtypes travel as codes; python/lucid/_elementwise.py wraps these.
  m.def("_result_type", [](nb::handle a, nb::handle b) {
    Operand x = operand(a, "result_type", "tensor1"), y = operand(b, "result_type", "other");
    return int(ops::result_type({&x, &y}));
  });
  m.def("_can_cast", [](int from, int to) { return ops::can_cast(dtype_from_code(from), dtype_from_code(to)); });
}

}  // namespace lucid::bindings
