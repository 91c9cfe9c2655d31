#include "ops/elementwise_extra.h"

#include <cmath>
#include <limits>

#include "autograd/record.h"
#include "core/pending.h"
#include "ops/prims/elementwise.h"
#include "ops/prims/fused.h"
#include "ops/reduce.h"
#include "core/default_dtype.h"
#include "ops/copy_ops.h"
#include "ops/fusion.h"
#include "ops/promotion.h"
#include "ops/views.h"

namespace lucid::ops {

namespace {

using autograd::Grads;

Operand ten(const TensorPtr& t) { return {t, {}}; }
Operand num(const Scalar& s) { return {nullptr, s}; }
TensorPtr one_minus_t(const TensorPtr& t) { return binary(BinaryOp::Sub, num(Scalar(1.0)), ten(t)); }

// An operand as a tensor of `dtype` (numbers as 0-d tensors, converted unchecked
// as wrapped numbers are), broadcast to `shape`. No autograd: callers record.
TensorPtr as_tensor(const Operand& o, Dtype dtype, const Shape& shape) {
  TensorPtr t = o.tensor ? o.tensor : scalar_tensor(o.number);
  if (t->dtype() != dtype) t = t->clone(dtype);
  return t->shape() == shape ? t : expand(t, shape);
}

// Runs `compute` without autograd and makes its result the output of one node with
// torch's name and `vjp` (the fused op's gradient), over `inputs`; the non-null
// inputs are saved, in order.
TensorPtr fused(const char* name, const std::vector<TensorPtr>& inputs, const std::function<TensorPtr()>& compute,
                Vjp vjp) {
  TensorPtr out;
  {
    autograd::GradModeGuard no_grad(false);
    out = compute();
  }
  if (autograd::needs_grad(inputs) && autograd::is_differentiable(out->dtype())) {
    auto node = autograd::record(name, inputs, {out}, std::move(vjp));
    for (const TensorPtr& t : inputs)
      if (t) node->save(t);
  }
  return out;
}

// A real number as a double; nullopt for a complex one.
std::optional<double> real_number(const Scalar& s) {
  return std::visit([](auto v) -> std::optional<double> {
    if constexpr (std::is_same_v<decltype(v), std::complex<double>>) return std::nullopt;
    else return double(v);
  }, s);
}

// The Pointwise primitive (Note [One rounding]) over x, y and z (a tensor, or the
// number z_number), each cast to `dtype` (a float dtype) and broadcast together, into a
// new tensor or `into` (of that dtype and shape, on their device: an in-place op's self).
// No autograd: callers record.
TensorPtr pointwise(PointwiseOp op, Dtype dtype, const TensorPtr& x, const TensorPtr& y, const TensorPtr& z,
                    std::optional<double> z_number, double value, const TensorPtr& into = nullptr) {
  Pointwise p;
  p.op = op;
  p.compute = dtype;
  p.z = z ? std::nullopt : z_number;
  p.value = value;
  Device device = op_device(p.name(), {x.get(), y.get(), z.get()});
  Shape shape = broadcast_shapes(x->shape(), y->shape());
  if (z) shape = broadcast_shapes(shape, z->shape());
  // (a 0-d CPU tensor joining a GPU op moves, one element, before it is broadcast)
  auto ready = [&](const TensorPtr& t) {
    TensorPtr c = t->dtype() == dtype && t->device() == device ? t : t->clone(dtype, device);
    return c->shape() == shape ? c : expand(c, shape);
  };
  TensorPtr in[3] = {ready(x), ready(y), z ? ready(z) : nullptr};
  TensorPtr out = into ? into : TensorImpl::empty(shape, dtype, device);
  const TensorImpl* ins[3] = {in[0].get(), in[1].get(), in[2].get()};
  TensorImpl* outs[1] = {out.get()};
  launch(p, outs, Inputs(ins, z ? 3 : 2));
  return out;
}

// Reduced on the tensor's device; only the one answer is read by the host.
bool all_true(const TensorPtr& t) { return std::get<bool>(all(t, {}, false)->item()); }

// Note [Clamp in one pass]: clamp with two number bounds is maximum, then minimum. A
// GPU flush fuses the two calls (ops/fusion.h), and so does a compiled CPU region; an
// eager CPU call makes them one program here, run by the same kernel (the ops' own row
// kernels over blocks held in cache, Note [Compiled CPU chains]): one pass over memory
// instead of two, with the two calls' bits. Null when it does not apply: other devices,
// inside a compiled region (which fuses the calls with their neighbours), a dtype the
// programs do not take (integers), or an x that is not dense.
TensorPtr clamp_in_one_pass(const TensorPtr& x, const Scalar& lo, const Scalar& hi, Dtype dtype) {
  if (!fusable_dtype(dtype) || x->dtype() != dtype || !x->device().is_cpu() || !x->is_contiguous() || pending::recording_cpu())
    return nullptr;
  FusedElementwise prim;
  FusedProgram& p = prim.program;
  p.dtype = dtype;
  p.n_inputs = 1, p.in_reg[0] = 0, p.in_dtype[0] = dtype;
  p.n_consts = 2;
  for (int c = 0; c < 2; ++c) {  // each bound as the 0-d operand the two calls would read
    alignas(16) std::byte element[16];
    scalar_to_bytes(c == 0 ? lo : hi, dtype, element);
    p.const_reg[c] = uint8_t(c + 1);
    p.consts[c] = std::get<double>(scalar_from_bytes(element, dtype));
  }
  p.n_instrs = 2;
  p.instrs[0] = {FusedKind::Binary, uint8_t(BinaryOp::Maximum), 0, 0, 1, 0, dtype};
  p.instrs[1] = {FusedKind::Binary, uint8_t(BinaryOp::Minimum), 0, 0, 2, 0, dtype};
  p.n_outputs = 1, p.out_reg[0] = 0, p.out_dtype[0] = dtype;
  TensorPtr out = TensorImpl::empty(x->shape(), dtype, x->device());
  const TensorImpl* ins[1] = {x.get()};
  TensorImpl* outs[1] = {out.get()};
  launch(prim, outs, Inputs(ins, 1));
  return out;
}

}  // namespace

// a * b for Python numbers, in the higher of their kinds.
Scalar scalar_mul(const Scalar& a, const Scalar& b) {
  return std::visit([](auto x, auto y) -> Scalar {
    using X = decltype(x);
    using Y = decltype(y);
    if constexpr (std::is_same_v<X, std::complex<double>> || std::is_same_v<Y, std::complex<double>>)
      return Scalar(std::complex<double>(x) * std::complex<double>(y));
    else if constexpr (std::is_same_v<X, double> || std::is_same_v<Y, double>) return Scalar(double(x) * double(y));
    else if constexpr (std::is_same_v<X, bool> && std::is_same_v<Y, bool>) return Scalar(bool(x && y));
    else return Scalar(int64_t(x) * int64_t(y));
  }, a, b);
}

Dtype result_type(std::initializer_list<const Operand*> operands) {
  ResultType promotion(default_dtype());
  for (const Operand* o : operands) {
    if (!o) continue;
    if (o->tensor) promotion.add_tensor(o->tensor->dtype(), o->tensor->ndim() == 0);
    else promotion.add_scalar(dtype_kind(scalar_dtype(o->number)));
  }
  return promotion.result();
}

TensorPtr where(const TensorPtr& cond, const Operand& a, const Operand& b) {
  LUCID_CHECK(cond->dtype() == Dtype::Bool, RuntimeError,
              "where expected condition to be a boolean tensor, but got a tensor with dtype ",
              dtype_name(cond->dtype()));
  Dtype dtype = result_type({&a, &b});
  TensorPtr out;
  {
    autograd::GradModeGuard no_grad(false);
    Shape shape = broadcast_shapes(cond->shape(), broadcast_shapes(a.tensor ? a.tensor->shape() : Shape{},
                                                                   b.tensor ? b.tensor->shape() : Shape{}));
    Device device = op_device("where", {cond.get(), a.tensor.get(), b.tensor.get()});
    // A 0-d CPU condition joining a GPU op moves (one element) before it is broadcast.
    TensorPtr c = cond->device() == device ? cond : cond->clone(std::nullopt, device);
    if (c->shape() != shape) c = expand(c, shape);
    Where p;
    p.lhs = number_param(a, dtype, device, dtype);
    p.rhs = number_param(b, dtype, device, dtype);
    TensorPtr x = p.lhs ? nullptr : as_tensor(a, dtype, shape), y = p.rhs ? nullptr : as_tensor(b, dtype, shape);
    out = TensorImpl::empty(shape, dtype, device);
    const TensorImpl* ins[3] = {c.get()};
    size_t n = 1;
    if (x) ins[n++] = x.get();
    if (y) ins[n++] = y.get();
    TensorImpl* outs[1] = {out.get()};
    launch(p, outs, Inputs(ins, n));
  }
  if (autograd::needs_grad({&a.tensor, &b.tensor}) && autograd::is_differentiable(dtype)) {
    bool ga = bool(a.tensor), gb = bool(b.tensor);
    auto node = autograd::record("WhereBackward0", {nullptr, a.tensor, b.tensor}, {out},
                                 [ga, gb](const Node& n, const Grads& g) {
      TensorPtr c = n.saved(0);
      return Grads{nullptr, ga ? where(c, ten(g[0]), num(0.0)) : nullptr,
                   gb ? where(c, num(0.0), ten(g[0])) : nullptr};
    });
    node->save(cond);
  }
  return out;
}

TensorPtr clamp(const TensorPtr& x, const std::optional<Operand>& min, const std::optional<Operand>& max,
                bool one_sided) {
  LUCID_CHECK(min || max, RuntimeError, "torch.clamp: At least one of 'min' or 'max' must not be None");
  const Operand* lo = min ? &*min : nullptr;
  const Operand* hi = max ? &*max : nullptr;
  Operand self = ten(x);
  Dtype dtype = result_type({&self, lo, hi});
  LUCID_CHECK(!is_complex(dtype), NotImplementedError, "clamp is not supported for complex types");
  // An integer bound outside the integer result's range: one that cannot bind is
  // dropped (clamp(uint8, -1, 2)), one that would empty the range raises, as torch.
  std::optional<Operand> lo_kept = min, hi_kept = max;
  for (auto [bound, kept, is_max] : {std::tuple{lo, &lo_kept, false}, std::tuple{hi, &hi_kept, true}}) {
    if (!bound || bound->tensor || !is_integral(dtype, false) || !std::holds_alternative<int64_t>(bound->number))
      continue;
    int64_t v = std::get<int64_t>(bound->number);
    if (scalar_tensor(Scalar(v))->clone(dtype)->clone(Dtype::I64)->item() == Scalar(v)) continue;
    bool below = v < 0;  // int64 numbers only overflow narrower types; below the lowest or above the highest
    LUCID_CHECK(below != is_max, RuntimeError, "Clamp ", is_max ? "max" : "min", " value ", v,
                " is outside the representable range of ", dtype_name(dtype));
    kept->reset();
  }
  if (!lo_kept && !hi_kept) return clone(x);
  LUCID_CHECK(!(dtype == Dtype::Bool && lo_kept && hi_kept), NotImplementedError,
              "clamp is not implemented for dtype bool with both bounds");
  lo = lo_kept ? &*lo_kept : nullptr;
  hi = hi_kept ? &*hi_kept : nullptr;
  TensorPtr out;
  {
    autograd::GradModeGuard no_grad(false);
    if (lo && hi && !lo->tensor && !hi->tensor) out = clamp_in_one_pass(x, lo->number, hi->number, dtype);
    if (!out) {
      out = x->dtype() == dtype ? x : x->clone(dtype);
      // maximum/minimum propagate NaN from either side, as torch.clamp does.
      if (lo) out = maximum(out, as_tensor(*lo, dtype, lo->tensor ? lo->tensor->shape() : Shape{}));
      if (hi) out = minimum(out, as_tensor(*hi, dtype, hi->tensor ? hi->tensor->shape() : Shape{}));
    }
    if (out == x) out = x->clone();
  }
  TensorPtr tlo = lo ? lo->tensor : nullptr, thi = hi ? hi->tensor : nullptr;
  if (autograd::needs_grad({&x, &tlo, &thi}) && autograd::is_differentiable(dtype)) {
    bool tensors = tlo || thi;
    const char* name = !one_sided ? (tensors ? "ClampBackward0" : "ClampBackward1")
                       : lo     ? (tensors ? "ClampMinBackward1" : "ClampMinBackward0")
                                : (tensors ? "ClampMaxBackward1" : "ClampMaxBackward0");
    auto node = autograd::record(name, {x, tlo, thi}, {out}, nullptr);
    // Bounds given as numbers stay numbers; tensors are saved.
    node->save(x);
    size_t ilo = tlo ? node->save(tlo) : 0, ihi = thi ? node->save(thi) : 0;
    std::optional<Scalar> nlo, nhi;
    if (lo && !tlo) nlo = lo->number;
    if (hi && !thi) nhi = hi->number;
    bool has_lo = lo, has_hi = hi;
    static_cast<FunctionNode&>(*node).set_vjp([=](const Node& n, const Grads& g) {
      TensorPtr s = n.saved(0);
      Operand l = has_lo ? (tlo ? ten(n.saved(ilo)) : num(*nlo)) : Operand{};
      Operand h = has_hi ? (thi ? ten(n.saved(ihi)) : num(*nhi)) : Operand{};
      Operand sv = ten(s);
      // Where the input's gradient passes: min <= x <= max for tensor bounds, and
      // strictly inside number bounds (both as torch 2.15; a NaN x passes only the former).
      const BinaryOp above = tensors ? BinaryOp::Ge : BinaryOp::Gt, below = tensors ? BinaryOp::Le : BinaryOp::Lt;
      TensorPtr pass;
      if (has_lo) pass = binary(above, sv, l);
      if (has_hi) {
        TensorPtr in = binary(below, sv, h);
        pass = pass ? logical_and(pass, in) : in;
      }
      Grads out{where(pass, ten(g[0]), num(0.0)), nullptr, nullptr};
      if (tlo) {
        TensorPtr m = binary(BinaryOp::Lt, sv, l);
        if (has_hi) m = logical_and(m, binary(BinaryOp::Lt, l, h));
        out[1] = where(m, ten(g[0]), num(0.0));
      }
      if (thi) {
        TensorPtr m = binary(BinaryOp::Gt, sv, h);
        if (has_lo) m = logical_or(m, binary(BinaryOp::Lt, h, l));
        out[2] = where(m, ten(g[0]), num(0.0));
      }
      return out;
    });
  }
  return out;
}

TensorPtr hardtanh(const TensorPtr& x, const Scalar& min, const Scalar& max) {
  LUCID_CHECK(x->dtype() != Dtype::Bool, NotImplementedError, "Bool inputs not supported for hardtanh");
  TensorPtr out;
  {
    autograd::GradModeGuard no_grad(false);
    out = clamp(x, num(min), num(max));
  }
  if (autograd::needs_grad({&x}) && autograd::is_differentiable(out->dtype())) {
    auto node = autograd::record("HardtanhBackward0", {x}, {out}, [min, max](const Node& n, const Grads& g) {
      const Operand s = ten(n.saved(0));
      auto real = [](const Scalar& v) {  // (a complex bound has been refused by clamp)
        return std::visit([](auto a) {
          if constexpr (std::is_arithmetic_v<decltype(a)>) return double(a);
          else return 0.0;
        }, v);
      };
      const double lo = real(min), hi = real(max);
      const Dtype d = n.saved(0)->dtype();
      if ((d == Dtype::F32 || d == Dtype::F64) && std::isfinite(lo) && std::isfinite(hi)) {
        // threshold_backward (g where its second operand is > 0, or NaN) twice, on x - min
        // and max - x: a float difference is 0 or less exactly where x <= min (x >= max),
        // since distinct floats never differ by less than the smallest subnormal. Two
        // float passes (one fused kernel on the GPU) instead of two comparisons, an or
        // and a where over bools.
        TensorPtr below = binary(BinaryOp::ThresholdBackward, ten(g[0]), ten(binary(BinaryOp::Sub, s, num(min))));
        return Grads{binary(BinaryOp::ThresholdBackward, ten(below), ten(binary(BinaryOp::Sub, num(max), s)))};
      }
      TensorPtr stop = binary(BinaryOp::LogicalOr, ten(binary(BinaryOp::Le, s, num(min))),
                              ten(binary(BinaryOp::Ge, s, num(max))));
      return Grads{where(stop, num(0.0), ten(g[0]))};
    });
    node->save(x);
  }
  return out;
}

void check_alpha(const Operand& a, const Operand& b, const Scalar& alpha) {  // torch's alpha_check
  Dtype d = result_type({&a, &b});
  LUCID_CHECK(!std::holds_alternative<bool>(alpha) || d == Dtype::Bool, RuntimeError,
              "Boolean alpha only supported for Boolean results.");
  LUCID_CHECK(is_floating(d) || is_complex(d) || std::holds_alternative<bool>(alpha) ||
              std::holds_alternative<int64_t>(alpha), RuntimeError,
              "For integral input tensors, argument alpha must not be a floating point number.");
  LUCID_CHECK(!(std::holds_alternative<std::complex<double>>(alpha) && !is_complex(d)), RuntimeError,
              "For non-complex input tensors, argument alpha must not be a complex number.");
}

Operand alpha_operand(BinaryOp op, const Operand& a, const Operand& b, const Scalar& alpha) {
  auto is_bool = [](const Operand& o) {
    return o.tensor ? o.tensor->dtype() == Dtype::Bool : std::holds_alternative<bool>(o.number);
  };
  if (op == BinaryOp::Sub && (is_bool(a) || is_bool(b))) binary(op, a, b);  // raises, as torch does first
  check_alpha(a, b, alpha);
  Scalar s = alpha;
  if (result_type({&a, &b}) == Dtype::Bool) s = Scalar(!is_zero(alpha));  // a || (alpha && b)
  if (is_one(s)) return b;
  return b.tensor ? ten(mul(b.tensor, s)) : num(scalar_mul(b.number, s));
}

TensorPtr add_alpha(BinaryOp op, const Operand& a, const Operand& b, const Scalar& alpha) {
  const Dtype d = a.tensor && b.tensor ? result_type({&a, &b}) : Dtype::Bool;
  if (!is_floating(d) || is_one(alpha)) return binary(op, a, alpha_operand(op, a, b, alpha));
  check_alpha(a, b, alpha);
  const double scale = *real_number(alpha) * (op == BinaryOp::Sub ? -1.0 : 1.0);  // (real: check_alpha)
  return fused(op == BinaryOp::Add ? "AddBackward0" : "SubBackward0", {a.tensor, b.tensor}, [&] {
    return pointwise(PointwiseOp::AddScaled, d, a.tensor, b.tensor, nullptr, scale, 1.0);
  }, [scale](const Node&, const Grads& g) { return Grads{g[0], mul(g[0], Scalar(scale))}; });
}

void add_alpha_inplace(BinaryOp op, const TensorPtr& self, const Operand& other, const Scalar& alpha) {
  const Operand a = ten(self);
  const Dtype d = other.tensor ? result_type({&a, &other}) : Dtype::Bool;
  if (!other.tensor || is_one(alpha) || !is_floating(d))
    return binary_inplace(op, self, alpha_operand(op, a, other, alpha));
  const char* name = op_name(op);
  check_inplace_target(name, self, other.tensor);
  // One pass written into self (w.add_(g, alpha=-lr)), unless autograd records, the
  // write goes through a view, or the result is cast: then the out-of-place op's result
  // is written back, as every in-place op does then.
  if (d != self->dtype() || broadcast_shapes(self->shape(), other.tensor->shape()) != self->shape() ||
      autograd::needs_grad({&self, &other.tensor}) || writes_through_view(self, other.tensor))
    return inplace_via(name, self, other.tensor, [&](const TensorPtr& x) { return add_alpha(op, ten(x), other, alpha); });
  check_alpha(a, other, alpha);
  const double scale = *real_number(alpha) * (op == BinaryOp::Sub ? -1.0 : 1.0);
  pointwise(PointwiseOp::AddScaled, d, self, read_apart(self, other.tensor), nullptr, scale, 1.0, self);
  self->bump_version();
}

BinaryOp div_op(const std::optional<std::string>& mode) {
  if (!mode) return BinaryOp::Div;
  if (*mode == "trunc") return BinaryOp::DivTrunc;
  if (*mode == "floor") return BinaryOp::FloorDivide;
  fail<RuntimeError>("div expected rounding_mode to be one of None, 'trunc', or 'floor' but found '", *mode, "'");
}

const char* Pointwise::name() const {
  switch (op) {
    case PointwiseOp::AddScaled: return "add";
    case PointwiseOp::Lerp: return "lerp";
    case PointwiseOp::Addcmul: return "addcmul";
    case PointwiseOp::Addcdiv: return "addcdiv";
  }
  return "pointwise";
}

namespace {

TensorPtr lerp_value(const TensorPtr& start, const TensorPtr& end, const Operand& weight) {
  LUCID_CHECK(start->dtype() == end->dtype(), RuntimeError, "expected dtype ", dtype_name(start->dtype()),
              " for `end` but got dtype ", dtype_name(end->dtype()));
  LUCID_CHECK(!weight.tensor || weight.tensor->dtype() == start->dtype(), RuntimeError, "expected dtype ",
              dtype_name(start->dtype()), " for `weight` but got dtype ", dtype_name(weight.tensor->dtype()));
  LUCID_CHECK(is_floating(start->dtype()) || is_complex(start->dtype()), NotImplementedError,
              "lerp is not implemented for dtype ", dtype_name(start->dtype()));
  const std::optional<double> w_number = weight.tensor ? std::nullopt : real_number(weight.number);
  if (is_floating(start->dtype()) && (weight.tensor || w_number))
    return pointwise(PointwiseOp::Lerp, start->dtype(), start, end, weight.tensor, w_number, 1.0);
  TensorPtr diff = sub(end, start);
  // torch's two-sided formula: exact at weight 0 and 1.
  if (!weight.tensor) {
    double w = std::visit([](auto v) -> double {
      if constexpr (std::is_same_v<decltype(v), std::complex<double>>) return v.real();
      else return double(v);
    }, weight.number);
    if (std::abs(w) < 0.5) return add(start, mul(diff, weight.number));
    return sub(end, mul(diff, Scalar(1.0 - w)));
  }
  TensorPtr w = weight.tensor;
  if (is_complex(w->dtype())) return add(start, mul(diff, w));
  return where(lt(abs(w), Scalar(0.5)), ten(add(start, mul(diff, w))), ten(sub(end, mul(diff, one_minus_t(w)))));
}

}  // namespace

TensorPtr lerp(const TensorPtr& start, const TensorPtr& end, const Operand& weight) {
  auto compute = [&] { return lerp_value(start, end, weight); };
  if (weight.tensor)
    return fused("LerpBackward1", {start, end, weight.tensor}, compute, [](const Node& n, const Grads& g) {
      TensorPtr w = n.saved(2);
      return Grads{mul(g[0], one_minus_t(w)), mul(g[0], w), mul(g[0], sub(n.saved(1), n.saved(0)))};
    });
  Scalar w = weight.number;
  Scalar rest = std::visit([](auto v) -> Scalar {  // 1 - w, in w's kind
    if constexpr (std::is_same_v<decltype(v), std::complex<double>>) return Scalar(1.0 - v);
    else return Scalar(1.0 - double(v));
  }, w);
  return fused("LerpBackward0", {start, end, nullptr}, compute, [w, rest](const Node&, const Grads& g) {
    return Grads{mul(g[0], rest), mul(g[0], w), nullptr};
  });
}

// The value of addcmul/addcdiv in the result's kind (an integer result takes the
// float value truncated, as torch's cast does).
Scalar value_for(Dtype d, const Scalar& v) {
  if (is_integral(d, false) && std::holds_alternative<double>(v)) return Scalar(int64_t(std::get<double>(v)));
  return v;
}

TensorPtr addcmul(const TensorPtr& input, const TensorPtr& t1, const TensorPtr& t2, const Scalar& value) {
  Operand a = ten(input), b = ten(t1), c = ten(t2);
  Scalar v = value_for(result_type({&a, &b, &c}), value);
  const Dtype d = result_type({&a, &b, &c});
  const std::optional<double> real_v = real_number(v);
  return fused("AddcmulBackward0", {input, t1, t2}, [&] {
    if (is_floating(d) && real_v) return pointwise(PointwiseOp::Addcmul, d, input, t1, t2, std::nullopt, *real_v);
    TensorPtr prod = mul(t1, t2);
    return add(input, is_one(v) ? prod : mul(prod, v));
  }, [v](const Node& n, const Grads& g) {
    TensorPtr gv = mul(g[0], v);
    return Grads{g[0], mul(gv, n.saved(2)), mul(gv, n.saved(1))};
  });
}

TensorPtr addcdiv(const TensorPtr& input, const TensorPtr& t1, const TensorPtr& t2, const Scalar& value) {
  LUCID_CHECK(!(is_integral(t1->dtype(), true) && is_integral(t2->dtype(), true)), RuntimeError,
              "Integer division with addcdiv is no longer supported, and in a future release addcdiv will "
              "perform a true division of tensor1 and tensor2. Use addcmul(input, tensor1, tensor2 / divisor) "
              "instead.");
  Operand a = ten(input), b = ten(t1), c = ten(t2);
  const Dtype d = result_type({&a, &b, &c});
  const std::optional<double> real_v = real_number(value);
  return fused("AddcdivBackward0", {input, t1, t2}, [&] {
    if (is_floating(d) && real_v) return pointwise(PointwiseOp::Addcdiv, d, input, t1, t2, std::nullopt, *real_v);
    TensorPtr q = div(t1, t2);
    return add(input, is_one(value) ? q : mul(q, value));
  }, [value](const Node& n, const Grads& g) {
    TensorPtr x1 = n.saved(1), x2 = n.saved(2);
    TensorPtr gq = div(mul(g[0], value), x2);  // d/dt1 = value / t2; d/dt2 = -value t1 / t2^2
    return Grads{g[0], gq, neg(div(mul(gq, x1), x2))};
  });
}

TensorPtr round_decimals(const TensorPtr& x, int64_t decimals) {
  LUCID_CHECK(is_floating(x->dtype()), NotImplementedError, "round(decimals=", decimals,
              ") is not implemented for dtype ", dtype_name(x->dtype()));
  if (decimals == 0) return round(x);
  if (x->dtype() == Dtype::F16 || x->dtype() == Dtype::BF16)  // torch scales in float: x * 10^d may not fit a half
    return copy_to(round_decimals(copy_to(x, Dtype::F32, std::nullopt), decimals), x->dtype(), std::nullopt);
  double ten_pow = std::pow(10.0, double(decimals < 0 ? -decimals : decimals));
  if (decimals > 0) return div(round(mul(x, Scalar(ten_pow))), Scalar(ten_pow));
  return mul(round(div(x, Scalar(ten_pow))), Scalar(ten_pow));
}

TensorPtr logit(const TensorPtr& x, std::optional<double> eps) {
  if (!eps) return unary(UnaryOp::Logit, x);
  return unary(UnaryOp::Logit, clamp(x, num(Scalar(*eps)), num(Scalar(1.0 - *eps))));
}

TensorPtr nan_to_num(const TensorPtr& x, std::optional<double> nan, std::optional<double> posinf,
                     std::optional<double> neginf) {
  if (is_complex(x->dtype())) {
    // The real and imaginary parts separately; the gradient is torch's, masked where
    // the element (either part) is not finite.
    return fused("NanToNumBackward0", {x}, [&] {
      return view_as_complex(contiguous(nan_to_num(view_as_real(x), nan, posinf, neginf)));
    }, [](const Node& n, const Grads& g) { return Grads{mul(g[0], isfinite(n.saved(0)))}; });
  }
  if (!is_floating(x->dtype())) return clone(x);
  double big = x->dtype() == Dtype::F16 ? 65504.0
             : x->dtype() == Dtype::BF16 ? 3.3895313892515355e38
             : x->dtype() == Dtype::F32 ? double(std::numeric_limits<float>::max())
                                        : std::numeric_limits<double>::max();
  return fused("NanToNumBackward0", {x}, [&] {
    TensorPtr out = where(isneginf(x), num(Scalar(neginf.value_or(-big))), ten(x));
    out = where(isposinf(x), num(Scalar(posinf.value_or(big))), ten(out));
    return where(isnan(x), num(Scalar(nan.value_or(0.0))), ten(out));
  }, [](const Node& n, const Grads& g) { return Grads{mul(g[0], isfinite(n.saved(0)))}; });
}

TensorPtr isclose(const TensorPtr& a, const TensorPtr& b, double rtol, double atol, bool equal_nan) {
  LUCID_CHECK(a->dtype() == b->dtype(), RuntimeError, dtype_name(a->dtype()), " did not match ",
              dtype_name(b->dtype()));
  LUCID_CHECK(!(is_complex(a->dtype()) && equal_nan), RuntimeError,
              "isclose with equal_nan=True is not supported for complex inputs.");
  LUCID_CHECK(rtol >= 0, RuntimeError, "rtol must be greater than or equal to zero, but got ", rtol);
  LUCID_CHECK(atol >= 0, RuntimeError, "atol must be greater than or equal to zero, but got ", atol);
  autograd::GradModeGuard no_grad(false);
  TensorPtr close = eq(a, b);
  if (equal_nan && is_floating(a->dtype())) close = logical_or(close, logical_and(isnan(a), isnan(b)));
  if (rtol == 0 && atol == 0) return close;
  // torch's formula: bool operands count in the default float; integers subtract as integers.
  TensorPtr x = a->dtype() == Dtype::Bool ? a->clone(default_dtype()) : a;
  TensorPtr y = b->dtype() == Dtype::Bool ? b->clone(default_dtype()) : b;
  TensorPtr allowed = add(abs(mul(y, Scalar(rtol))), Scalar(atol));
  TensorPtr actual = abs(sub(x, y));
  return logical_or(close, logical_and(isfinite(actual), le(actual, allowed)));
}

bool allclose(const TensorPtr& a, const TensorPtr& b, double rtol, double atol, bool equal_nan) {
  return all_true(isclose(a, b, rtol, atol, equal_nan));
}

bool equal(const TensorPtr& a, const TensorPtr& b) {
  if (a->shape() != b->shape()) return false;
  autograd::GradModeGuard no_grad(false);
  return all_true(eq(a, b));
}

}  // namespace lucid::ops
