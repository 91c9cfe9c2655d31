// The VJPs of the elementwise ops, one case per entry of elementwise_table.h (the
// switches have no default, so a new op without a gradient is a compiler warning).
// They are written with ops, so they are differentiable themselves (create_graph).
#include <limits>

#include "autograd/record.h"
#include "ops/elementwise.h"
#include "ops/elementwise_extra.h"
#include "ops/linalg.h"

namespace lucid::ops {

namespace {

using autograd::Grads;

constexpr const char* kBinaryGradName[] = {
#define LUCID_NAME(name, Fn, rule, operands) #Fn "Backward0",
    LUCID_BINARY_OPS(LUCID_NAME)
#undef LUCID_NAME
};
constexpr const char* kUnaryGradName[] = {
#define LUCID_NAME(name, Fn, rule) #Fn "Backward0",
    LUCID_UNARY_OPS(LUCID_NAME)
#undef LUCID_NAME
};

// One operand as the VJP sees it: a saved tensor, or the number it was.
struct Side {
  bool is_tensor = false;
  size_t index = 0;  // into the node's saved tensors
  Scalar number;
  Operand get(const Node& n) const { return is_tensor ? Operand{n.saved(index), {}} : Operand{nullptr, number}; }
};

Side save(Node& node, const Operand& o) {
  if (!o.tensor) return {false, 0, o.number};
  return {true, node.save(o.tensor), {}};
}

TensorPtr times(const TensorPtr& g, const Operand& o) { return binary(BinaryOp::Mul, {g, {}}, o); }
TensorPtr over(const TensorPtr& g, const Operand& o) { return binary(BinaryOp::Div, {g, {}}, o); }
TensorPtr one_minus(const TensorPtr& t) { return binary(BinaryOp::Sub, {nullptr, Scalar(1.0)}, {t, {}}); }

// d max(a, b) / da as PyTorch's max/min backward: the gradient where a wins, half of
// it where they tie, and zeros (not g * 0: a NaN gradient stops there) where a
// loses, `loses` being a < b for max. With a NaN on either side neither loses.
TensorPtr winner_grad(const TensorPtr& g, BinaryOp loses, const Operand& a, const Operand& b) {
  TensorPtr shared = where(binary(BinaryOp::Eq, a, b), Operand{mul(g, Scalar(0.5)), {}}, Operand{g, {}});
  return where(binary(loses, a, b), Operand{nullptr, Scalar(0.0)}, Operand{shared, {}});
}

// Complex gradients follow PyTorch's convention: grad_in = grad_out * conj(f'(z)).
Operand conj_of(const Operand& o) {
  if (o.tensor) return {ops::conj(o.tensor), {}};
  if (auto* z = std::get_if<std::complex<double>>(&o.number)) return {nullptr, Scalar(std::conj(*z))};
  return o;
}

Operand num(double v) { return {nullptr, Scalar(v)}; }
Operand ten(const TensorPtr& t) { return {t, {}}; }
// Zeros, not g * 0: a zero derivative stops a NaN or inf gradient (PyTorch's zeros_like).
TensorPtr zeros_like_grad(const TensorPtr& g) { return TensorImpl::full(g->shape(), Scalar(0.0), g->dtype(), g->device()); }
// A gradient for a tensor operand only (numbers get none).
TensorPtr if_tensor(const Operand& o, const std::function<TensorPtr()>& f) { return o.tensor ? f() : nullptr; }

// A Python-number exponent minus one, keeping its kind (int stays int).
Scalar minus_one(const Scalar& s) {
  return std::visit([](auto v) -> Scalar {
    if constexpr (std::is_same_v<decltype(v), bool>) return Scalar(int64_t(v) - 1);
    else return Scalar(v - decltype(v)(1));
  }, s);
}

// d pow(x, y): y * x^(y-1) (0 where y == 0) and pow(x, y) * log(x) (0 where
// x == 0 and y >= 0), as torch's pow_backward / pow_backward_exponent.
Grads pow_grads(const Operand& x, const Operand& y, const TensorPtr& result, const TensorPtr& g) {
  TensorPtr gx = if_tensor(x, [&] {
    if (!y.tensor) {
      if (is_zero(y.number)) return zeros_like_grad(g);
      return times(mul(g, pow(x.tensor, minus_one(y.number))), y);
    }
    TensorPtr d = mul(y.tensor, binary(BinaryOp::Pow, x, ten(sub(y.tensor, Scalar(int64_t(1))))));
    return mul(g, where(eq(y.tensor, Scalar(int64_t(0))), num(0.0), ten(d)));
  });
  TensorPtr gy = if_tensor(y, [&] {
    TensorPtr d;
    if (x.tensor) {
      d = mul(result, log(x.tensor));
      if (!is_complex(d->dtype()))
        d = where(logical_and(eq(x.tensor, Scalar(0.0)), ge(y.tensor, Scalar(0.0))), num(0.0), ten(d));
    } else {
      Scalar lx = std::visit([](auto v) -> Scalar {
        if constexpr (std::is_same_v<decltype(v), std::complex<double>>) return Scalar(std::log(v));
        else return Scalar(std::log(double(v)));
      }, x.number);
      d = mul(result, lx);
      if (is_zero(x.number)) d = where(ge(y.tensor, Scalar(0.0)), num(0.0), ten(d));
    }
    return mul(g, d);
  });
  return {gx, gy};
}

// The second derivative of gelu (exact or tanh form), silu, softplus, logsigmoid or mish
// at x, for the gradient of their derivatives (double backward; ops/activation_functors.h
// has the first).
TensorPtr activation_second_derivative(BinaryOp derivative, const TensorPtr& x) {
  const TensorPtr x_sq = mul(x, x);
  switch (derivative) {
    case BinaryOp::GeluBackward: {  // phi(x) (2 - x^2)
      const TensorPtr pdf = mul(exp(mul(x_sq, Scalar(-0.5))), Scalar(fn::kNormalPdf));
      return mul(pdf, binary(BinaryOp::Sub, num(2.0), ten(x_sq)));
    }
    case BinaryOp::GeluTanhBackward: {  // (1 - t^2) (u' - x t u'^2 + 3 beta kappa x^2), t = tanh(u)
      const double beta = fn::kGeluTanhBeta, kappa = fn::kGeluTanhKappa;
      const TensorPtr t = tanh(mul(add(x, mul(mul(x_sq, x), Scalar(kappa))), Scalar(beta)));
      const TensorPtr du = mul(add(mul(x_sq, Scalar(3.0 * kappa)), Scalar(1.0)), Scalar(beta));
      const TensorPtr inner = add(sub(du, mul(mul(x, t), mul(du, du))), mul(x_sq, Scalar(3.0 * beta * kappa)));
      return mul(one_minus(mul(t, t)), inner);
    }
    case BinaryOp::SoftplusBackward: {  // s (1 - s), s = sigmoid(x); 0 above the threshold
      const TensorPtr s = sigmoid(x);
      return where(gt(x, Scalar(fn::kSoftplusThreshold)), num(0.0), ten(mul(s, one_minus(s))));
    }
    case BinaryOp::LogSigmoidBackward: {  // -s (1 - s)
      const TensorPtr s = sigmoid(x);
      return neg(mul(s, one_minus(s)));
    }
    case BinaryOp::MishBackward: {  // s (1 - t^2) (2 + x (1 - s) - 2 x t s), t = tanh(softplus(x))
      const TensorPtr s = sigmoid(x), t = tanh(log1p(exp(x)));
      const TensorPtr inner = sub(add(mul(x, one_minus(s)), Scalar(2.0)), mul(mul(mul(x, t), s), Scalar(2.0)));
      return mul(mul(s, one_minus(mul(t, t))), inner);
    }
    default: {  // silu: s (1 - s) (2 + x (1 - 2 s)), s = sigmoid(x)
      const TensorPtr s = sigmoid(x);
      const TensorPtr spread = add(mul(x, one_minus(mul(s, Scalar(2.0)))), Scalar(2.0));
      return mul(mul(s, one_minus(s)), spread);
    }
  }
}

// Returns the node's VJP and saves what it needs.
Vjp binary_vjp(BinaryOp op, Node& node, const Operand& a, const Operand& b, const TensorPtr& out) {
  switch (op) {
    case BinaryOp::Add:
      return [](const Node&, const Grads& g) { return Grads{g[0], g[0]}; };
    case BinaryOp::Sub:
      return [](const Node&, const Grads& g) { return Grads{g[0], neg(g[0])}; };
    case BinaryOp::Mul: {
      Side sa = save(node, a), sb = save(node, b);
      return [sa, sb](const Node& n, const Grads& g) {
        return Grads{times(g[0], conj_of(sb.get(n))), times(g[0], conj_of(sa.get(n)))};
      };
    }
    case BinaryOp::Div: {
      Side sa = save(node, a), sb = save(node, b);
      return [sa, sb](const Node& n, const Grads& g) {
        Operand x = conj_of(sa.get(n)), y = conj_of(sb.get(n));
        TensorPtr ga = over(g[0], y);
        // d(a/b)/db = -a / b^2, as -(g / b) * a / b (conjugated for complex)
        TensorPtr gb = x.tensor || y.tensor ? neg(over(times(ga, x), y)) : nullptr;
        return Grads{ga, gb};
      };
    }
    case BinaryOp::ThresholdBackward: {  // linear in g with y's mask; nothing reaches y (as torch's)
      Side sb = save(node, b);
      return [sb](const Node& n, const Grads& g) {
        return Grads{_threshold_backward(g[0], sb.get(n).tensor), nullptr};
      };
    }
    case BinaryOp::LeakyRelu: {  // g times the slope op; to a tensor slope (prelu): g x below 0
      Side sa = save(node, a), sb = save(node, b);
      return [sa, sb](const Node& n, const Grads& g) {
        const Operand x = sa.get(n), slope = sb.get(n);
        return Grads{mul(g[0], binary(BinaryOp::LeakyReluSlope, x, slope)),
                     if_tensor(slope, [&] { return where(gt(x.tensor, Scalar(0.0)), num(0.0), ten(mul(g[0], x.tensor))); })};
      };
    }
    case BinaryOp::LeakyReluSlope: {  // piecewise constant in x; 1 below 0 for a tensor slope
      Side sa = save(node, a), sb = save(node, b);
      return [sa, sb](const Node& n, const Grads& g) {
        const Operand x = sa.get(n), slope = sb.get(n);
        return Grads{zeros_like_grad(x.tensor),
                     if_tensor(slope, [&] { return where(gt(x.tensor, Scalar(0.0)), num(0.0), ten(g[0])); })};
      };
    }
    case BinaryOp::Softshrink:
    case BinaryOp::Hardshrink: {  // g where the result is not 0; to a tensor lambda: -g sign(y) (softshrink)
      size_t r = node.save(out, true);
      const bool soft = op == BinaryOp::Softshrink;
      const Side sb = save(node, b);
      return [r, soft, sb](const Node& n, const Grads& g) {
        const TensorPtr y = n.saved(r);
        const Operand l = sb.get(n);
        return Grads{_shrink_backward(g[0], y),
                     if_tensor(l, [&] { return soft ? neg(mul(g[0], sign(y))) : zeros_like_grad(l.tensor); })};
      };
    }
    case BinaryOp::ShrinkBackward: {  // linear in g with y's mask; zeros to y (torch's zeros_like to x)
      Side sb = save(node, b);
      return [sb](const Node& n, const Grads& g) {
        const TensorPtr y = sb.get(n).tensor;
        return Grads{_shrink_backward(g[0], y), zeros_like_grad(y)};
      };
    }
    case BinaryOp::HardsigmoidBackward: {  // linear in g; f'' is 0 (torch has no gradient here)
      Side sb = save(node, b);
      return [sb](const Node& n, const Grads& g) {
        const TensorPtr x = sb.get(n).tensor;
        return Grads{_hardsigmoid_backward(g[0], x), zeros_like_grad(x)};
      };
    }
    case BinaryOp::HardswishBackward: {  // f'' = 1/3 strictly inside (-3, 3), as torch's
      Side sa = save(node, a), sb = save(node, b);
      return [sa, sb](const Node& n, const Grads& g) {
        const TensorPtr gy = sa.get(n).tensor, x = sb.get(n).tensor;
        const TensorPtr inside = logical_and(gt(x, Scalar(-3.0)), lt(x, Scalar(3.0)));
        return Grads{_hardswish_backward(g[0], x),
                     where(inside, ten(div(mul(g[0], gy), Scalar(3.0))), num(0.0))};
      };
    }
    case BinaryOp::GeluBackward:
    case BinaryOp::GeluTanhBackward:
    case BinaryOp::SiluBackward:
    case BinaryOp::SoftplusBackward:
    case BinaryOp::LogSigmoidBackward:
    case BinaryOp::MishBackward: {  // g f'(x): f'(x) to g, g f''(x) to x
      Side sa = save(node, a), sb = save(node, b);
      return [sa, sb, op](const Node& n, const Grads& g) {
        const TensorPtr gy = sa.get(n).tensor, x = sb.get(n).tensor;
        return Grads{binary(op, ten(g[0]), ten(x)), mul(mul(g[0], gy), activation_second_derivative(op, x))};
      };
    }
    case BinaryOp::Maximum:
    case BinaryOp::Minimum: {
      Side sa = save(node, a), sb = save(node, b);
      BinaryOp loses = op == BinaryOp::Maximum ? BinaryOp::Lt : BinaryOp::Gt;
      return [sa, sb, loses](const Node& n, const Grads& g) {
        Operand x = sa.get(n), y = sb.get(n);
        return Grads{winner_grad(g[0], loses, x, y), winner_grad(g[0], loses, y, x)};
      };
    }
    case BinaryOp::FloorDivide:
    case BinaryOp::DivTrunc:  // piecewise constant: zero almost everywhere, as torch
      return [](const Node&, const Grads& g) { return Grads{zeros_like_grad(g[0]), zeros_like_grad(g[0])}; };
    case BinaryOp::Remainder:
    case BinaryOp::Fmod: {  // a - b * q(a, b): d/db = -q
      Side sa = save(node, a), sb = save(node, b);
      BinaryOp q = op == BinaryOp::Remainder ? BinaryOp::FloorDivide : BinaryOp::DivTrunc;
      return [sa, sb, q](const Node& n, const Grads& g) {
        Operand x = sa.get(n), y = sb.get(n);
        return Grads{g[0], if_tensor(y, [&] { return neg(mul(g[0], binary(q, x, y))); })};
      };
    }
    case BinaryOp::Pow: {
      Side sa = save(node, a), sb = save(node, b);
      size_t r = node.save(out, true);
      return [sa, sb, r](const Node& n, const Grads& g) { return pow_grads(sa.get(n), sb.get(n), n.saved(r), g[0]); };
    }
    case BinaryOp::Fmax:
    case BinaryOp::Fmin: {  // ties go to a; a NaN b sends everything to a
      Side sa = save(node, a), sb = save(node, b);
      BinaryOp cmp = op == BinaryOp::Fmax ? BinaryOp::Ge : BinaryOp::Le;
      return [sa, sb, cmp](const Node& n, const Grads& g) {
        Operand x = sa.get(n), y = sb.get(n);
        TensorPtr to_a = logical_or(binary(cmp, x, y), isnan(y.tensor));
        return Grads{where(to_a, ten(g[0]), num(0.0)), where(to_a, num(0.0), ten(g[0]))};
      };
    }
    case BinaryOp::Atan2: {
      Side sa = save(node, a), sb = save(node, b);
      return [sa, sb](const Node& n, const Grads& g) {
        TensorPtr x = sa.get(n).tensor, y = sb.get(n).tensor;
        TensorPtr r2 = add(mul(x, x), mul(y, y));
        TensorPtr r = where(eq(r2, Scalar(0.0)), num(0.0), ten(div(g[0], r2)));  // at the origin: 0, as torch
        return Grads{mul(r, y), neg(mul(r, x))};
      };
    }
    case BinaryOp::Hypot: {
      Side sa = save(node, a), sb = save(node, b);
      size_t r = node.save(out, true);
      return [sa, sb, r](const Node& n, const Grads& g) {
        TensorPtr q = div(g[0], n.saved(r));
        return Grads{mul(q, sa.get(n).tensor), mul(q, sb.get(n).tensor)};
      };
    }
    case BinaryOp::Xlogy: {
      Side sa = save(node, a), sb = save(node, b);
      return [sa, sb](const Node& n, const Grads& g) {
        Operand x = sa.get(n), y = sb.get(n);
        TensorPtr gx = if_tensor(x, [&] {
          TensorPtr zero = logical_and(binary(BinaryOp::Eq, x, num(0.0)), binary(BinaryOp::Le, y, num(0.0)));
          return where(zero, num(0.0), ten(binary(BinaryOp::Xlogy, ten(g[0]), y)));
        });
        TensorPtr gy = if_tensor(y, [&] { return over(times(g[0], x), y); });
        return Grads{gx, gy};
      };
    }
    case BinaryOp::Zeta: {  // d/dq = -x zeta(x + 1, q); none in x (torch has none either)
      Side sa = save(node, a), sb = save(node, b);
      const bool x_needs_grad = a.tensor && a.tensor->requires_grad();
      return [sa, sb, x_needs_grad](const Node& n, const Grads& g) {
        LUCID_CHECK(!x_needs_grad, NotImplementedError,
                    "the derivative of special_zeta with respect to x (its first argument) is not implemented");
        Operand x = sa.get(n), q = sb.get(n);
        Operand x1 = x.tensor ? ten(add(x.tensor, Scalar(1.0))) : num(std::visit([](auto v) {
          if constexpr (std::is_same_v<decltype(v), std::complex<double>>) return v.real() + 1.0;
          else return double(v) + 1.0;
        }, x.number));
        return Grads{nullptr, if_tensor(q, [&] { return neg(times(mul(g[0], binary(BinaryOp::Zeta, x1, q)), x)); })};
      };
    }
    case BinaryOp::Igamma:
    case BinaryOp::Igammac: {  // d/dx P(a, x) = x^(a-1) e^-x / Gamma(a), Q's its negative; none in a (as torch)
      Side sa = save(node, a), sb = save(node, b);
      const bool a_needs_grad = a.tensor && a.tensor->requires_grad();
      const bool upper = op == BinaryOp::Igammac;
      return [sa, sb, a_needs_grad, upper](const Node& n, const Grads& g) {
        LUCID_CHECK(!a_needs_grad, NotImplementedError, "the derivative for '", upper ? "igammac" : "igamma",
                    ": input' is not implemented.");
        const TensorPtr av = sa.get(n).tensor, x = sb.get(n).tensor;
        const TensorPtr density = exp(sub(sub(mul(sub(av, Scalar(1.0)), log(x)), x), lgamma(av)));
        const TensorPtr gx = mul(g[0], density);
        return Grads{nullptr, upper ? neg(gx) : gx};
      };
    }
    case BinaryOp::Logaddexp:
    case BinaryOp::Logaddexp2: {  // d/da = 1 / (1 + base^(b - a))
      Side sa = save(node, a), sb = save(node, b);
      bool base2 = op == BinaryOp::Logaddexp2;
      return [sa, sb, base2](const Node& n, const Grads& g) {
        TensorPtr x = sa.get(n).tensor, y = sb.get(n).tensor;
        auto e = [base2](const TensorPtr& t) { return base2 ? exp2(t) : exp(t); };
        // (complex, logaddexp only: the derivative conjugated, as torch's)
        auto d = [&](const TensorPtr& t) { return is_complex(t->dtype()) ? conj(t) : t; };
        return Grads{div(g[0], d(add(e(sub(y, x)), Scalar(1.0)))), div(g[0], d(add(e(sub(x, y)), Scalar(1.0))))};
      };
    }
    case BinaryOp::Eq: case BinaryOp::Ne: case BinaryOp::Lt:
    case BinaryOp::Le: case BinaryOp::Gt: case BinaryOp::Ge:
    case BinaryOp::LogicalAnd: case BinaryOp::LogicalOr: case BinaryOp::LogicalXor:
    case BinaryOp::BitwiseAnd: case BinaryOp::BitwiseOr: case BinaryOp::BitwiseXor:
    case BinaryOp::LeftShift: case BinaryOp::RightShift: case BinaryOp::Gcd: case BinaryOp::Lcm:
    case BinaryOp::ChebyshevT: case BinaryOp::ChebyshevU: case BinaryOp::ChebyshevV: case BinaryOp::ChebyshevW:
    case BinaryOp::HermiteH: case BinaryOp::HermiteHe: case BinaryOp::LaguerreL: case BinaryOp::LegendreP:
      break;  // bool and integer results, and the polynomials (non_differentiable), never record
    case BinaryOp::Nextafter:  // (torch has none either)
      return [](const Node&, const Grads&) -> Grads {
        fail<NotImplementedError>("the derivative for 'nextafter' is not implemented");
      };
  }
  fail<RuntimeError>("internal: no gradient for ", op_name(op));
}

Vjp unary_vjp(UnaryOp op, Node& node, const TensorPtr& a, const TensorPtr& out) {
  auto input = [&] { return node.save(a); };
  auto result = [&] { return node.save(out, true); };
  switch (op) {
    case UnaryOp::Neg:
      return [](const Node&, const Grads& g) { return Grads{neg(g[0])}; };
    case UnaryOp::Abs:
      input();
      if (is_complex(a->dtype())) {  // torch's g * sgn(z), sgn(z) = z / |z| (0 at 0)
        result();
        return [](const Node& n, const Grads& g) {
          const TensorPtr& r = n.saved(1);
          return Grads{mul(g[0], div(n.saved(0), where(eq(r, Scalar(0.0)), num(1.0), ten(r))))};
        };
      }
      return [](const Node& n, const Grads& g) { return Grads{mul(g[0], sign(n.saved(0)))}; };
    case UnaryOp::Sign:
      return [](const Node&, const Grads& g) { return Grads{zeros_like_grad(g[0])}; };
    case UnaryOp::Exp:
      result();
      return [](const Node& n, const Grads& g) { return Grads{mul(g[0], n.saved(0))}; };
    case UnaryOp::Log:
      input();
      return [](const Node& n, const Grads& g) { return Grads{div(g[0], n.saved(0))}; };
    case UnaryOp::Sqrt:
      result();
      return [](const Node& n, const Grads& g) { return Grads{div(g[0], mul(n.saved(0), Scalar(2.0)))}; };
    case UnaryOp::Sin:
      input();
      return [](const Node& n, const Grads& g) { return Grads{mul(g[0], cos(n.saved(0)))}; };
    case UnaryOp::Cos:
      input();
      return [](const Node& n, const Grads& g) { return Grads{mul(g[0], neg(sin(n.saved(0))))}; };
    case UnaryOp::Tanh:
      result();
      return [](const Node& n, const Grads& g) {
        TensorPtr y = n.saved(0);
        return Grads{mul(g[0], one_minus(mul(y, y)))};
      };
    case UnaryOp::Sigmoid:
      result();
      return [](const Node& n, const Grads& g) {
        TensorPtr y = n.saved(0);
        return Grads{mul(g[0], mul(y, one_minus(y)))};
      };
    case UnaryOp::Exp2:
      result();
      return [](const Node& n, const Grads& g) { return Grads{mul(mul(g[0], n.saved(0)), Scalar(fn::kLn2))}; };
    case UnaryOp::Expm1:
      result();
      return [](const Node& n, const Grads& g) { return Grads{mul(g[0], add(n.saved(0), Scalar(1.0)))}; };
    case UnaryOp::Log2:
    case UnaryOp::Log10: {
      input();
      double ln = op == UnaryOp::Log2 ? fn::kLn2 : fn::kLn10;
      return [ln](const Node& n, const Grads& g) { return Grads{div(g[0], mul(n.saved(0), Scalar(ln)))}; };
    }
    case UnaryOp::Log1p:
      input();
      return [](const Node& n, const Grads& g) { return Grads{div(g[0], add(n.saved(0), Scalar(1.0)))}; };
    case UnaryOp::Tan:
      result();
      return [](const Node& n, const Grads& g) {
        TensorPtr y = n.saved(0);
        return Grads{mul(g[0], add(mul(y, y), Scalar(1.0)))};
      };
    case UnaryOp::Asin:
    case UnaryOp::Acos: {  // +-1 / sqrt(1 - x^2)
      input();
      bool negate = op == UnaryOp::Acos;
      return [negate](const Node& n, const Grads& g) {
        TensorPtr x = n.saved(0);
        TensorPtr r = mul(g[0], rsqrt(one_minus(mul(x, x))));
        return Grads{negate ? neg(r) : r};
      };
    }
    case UnaryOp::Atan:
      input();
      return [](const Node& n, const Grads& g) {
        TensorPtr x = n.saved(0);
        return Grads{div(g[0], add(mul(x, x), Scalar(1.0)))};
      };
    case UnaryOp::Sinh:
      input();
      return [](const Node& n, const Grads& g) { return Grads{mul(g[0], cosh(n.saved(0)))}; };
    case UnaryOp::Cosh:
      input();
      return [](const Node& n, const Grads& g) { return Grads{mul(g[0], sinh(n.saved(0)))}; };
    case UnaryOp::Asinh:  // 1 / sqrt(x^2 + 1)
      input();
      return [](const Node& n, const Grads& g) {
        TensorPtr x = n.saved(0);
        return Grads{mul(g[0], rsqrt(add(mul(x, x), Scalar(1.0))))};
      };
    case UnaryOp::Acosh:  // 1 / (sqrt(x + 1) sqrt(x - 1)): 1 / sqrt(x^2 - 1) on acosh's branch for complex x
      input();
      return [](const Node& n, const Grads& g) {
        TensorPtr x = n.saved(0);
        return Grads{mul(g[0], mul(rsqrt(add(x, Scalar(1.0))), rsqrt(add(x, Scalar(-1.0)))))};
      };
    case UnaryOp::Atanh:
      input();
      return [](const Node& n, const Grads& g) {
        TensorPtr x = n.saved(0);
        return Grads{div(g[0], one_minus(mul(x, x)))};
      };
    case UnaryOp::Erf:
    case UnaryOp::Erfc: {  // +-2/sqrt(pi) exp(-x^2)
      input();
      double c = op == UnaryOp::Erf ? 1.1283791670955126 : -1.1283791670955126;
      return [c](const Node& n, const Grads& g) {
        TensorPtr x = n.saved(0);
        return Grads{mul(mul(g[0], exp(neg(mul(x, x)))), Scalar(c))};
      };
    }
    case UnaryOp::Erfinv:  // sqrt(pi)/2 exp(y^2)
      result();
      return [](const Node& n, const Grads& g) {
        TensorPtr y = n.saved(0);
        return Grads{mul(mul(g[0], exp(mul(y, y))), Scalar(0.886226925452758))};
      };
    case UnaryOp::Reciprocal:
      result();
      return [](const Node& n, const Grads& g) {
        TensorPtr y = n.saved(0);
        return Grads{neg(mul(g[0], mul(y, y)))};
      };
    case UnaryOp::Rsqrt:  // -y^3 / 2
      result();
      return [](const Node& n, const Grads& g) {
        TensorPtr y = n.saved(0);
        return Grads{mul(mul(g[0], mul(y, mul(y, y))), Scalar(-0.5))};
      };
    case UnaryOp::Logit:  // 1 / (x (1 - x))
      input();
      return [](const Node& n, const Grads& g) {
        TensorPtr x = n.saved(0);  // outside [0, 1]: NaN, as torch
        TensorPtr outside = logical_or(lt(x, Scalar(0.0)), gt(x, Scalar(1.0)));
        return Grads{where(outside, num(std::numeric_limits<double>::quiet_NaN()), ten(div(g[0], mul(x, one_minus(x)))))};
      };
    case UnaryOp::Lgamma:
      input();
      return [](const Node& n, const Grads& g) { return Grads{mul(g[0], digamma(n.saved(0)))}; };
    case UnaryOp::Digamma:  // polygamma(1, x) = zeta(2, x)
      input();
      return [](const Node& n, const Grads& g) {
        return Grads{mul(g[0], binary(BinaryOp::Zeta, num(2.0), ten(n.saved(0))))};
      };
    case UnaryOp::I0:
      input();
      return [](const Node& n, const Grads& g) { return Grads{mul(g[0], special_i1(n.saved(0)))}; };
    case UnaryOp::I0e:  // i1e(x) - sign(x) i0e(x)
      input();
      return [](const Node& n, const Grads& g) {
        TensorPtr x = n.saved(0);
        return Grads{mul(g[0], sub(special_i1e(x), mul(sign(x), special_i0e(x))))};
      };
    case UnaryOp::BesselJ0:  // J0' = -J1, Y0' = -Y1, K0' = -K1
    case UnaryOp::BesselY0:
    case UnaryOp::BesselK0: {
      input();
      const UnaryOp next = op == UnaryOp::BesselJ0 ? UnaryOp::BesselJ1 : op == UnaryOp::BesselY0 ? UnaryOp::BesselY1
                                                                                                 : UnaryOp::BesselK1;
      return [next](const Node& n, const Grads& g) { return Grads{neg(mul(g[0], unary(next, n.saved(0))))}; };
    }
    case UnaryOp::BesselJ1:  // J1' = J0 - J1 / x (1/2 at 0), Y1' = Y0 - Y1 / x, K1' = -K0 - K1 / x
    case UnaryOp::BesselY1:
    case UnaryOp::BesselK1: {
      input();
      return [op](const Node& n, const Grads& g) {
        TensorPtr x = n.saved(0);
        if (op == UnaryOp::BesselJ1) {
          TensorPtr d = sub(special_bessel_j0(x), div(special_bessel_j1(x), x));
          return Grads{mul(g[0], where(eq(x, Scalar(0.0)), num(0.5), ten(d)))};
        }
        if (op == UnaryOp::BesselY1) return Grads{mul(g[0], sub(special_bessel_y0(x), div(special_bessel_y1(x), x)))};
        return Grads{neg(mul(g[0], add(special_modified_bessel_k0(x), div(special_modified_bessel_k1(x), x))))};
      };
    }
    case UnaryOp::I1:
    case UnaryOp::I1e: {  // i0(x) - i1(x) / x, i0e(x) - i1e(x) (sign(x) + 1 / x); 1/2 at 0
      input();
      const bool scaled = op == UnaryOp::I1e;
      return [scaled](const Node& n, const Grads& g) {
        TensorPtr x = n.saved(0);
        TensorPtr d = scaled ? sub(special_i0e(x), mul(special_i1e(x), add(sign(x), reciprocal(x))))
                             : sub(i0(x), div(special_i1(x), x));
        return Grads{mul(g[0], where(eq(x, Scalar(0.0)), num(0.5), ten(d)))};
      };
    }
    case UnaryOp::Erfcx:  // 2 x erfcx(x) - 2 / sqrt(pi)
      input();
      return [](const Node& n, const Grads& g) {
        TensorPtr x = n.saved(0);
        return Grads{mul(g[0], sub(mul(mul(x, Scalar(2.0)), special_erfcx(x)), Scalar(1.1283791670955126)))};
      };
    case UnaryOp::Floor: case UnaryOp::Ceil: case UnaryOp::Round: case UnaryOp::Trunc:
      return [](const Node&, const Grads& g) { return Grads{zeros_like_grad(g[0])}; };
    case UnaryOp::Frac:
      return [](const Node&, const Grads& g) { return Grads{g[0]}; };
    case UnaryOp::Square:
      input();
      return [](const Node& n, const Grads& g) { return Grads{mul(g[0], mul(n.saved(0), Scalar(2.0)))}; };
    case UnaryOp::Gelu:
    case UnaryOp::GeluTanh:
    case UnaryOp::Silu:
    case UnaryOp::Hardsigmoid:
    case UnaryOp::Hardswish:
    case UnaryOp::Softplus:
    case UnaryOp::LogSigmoid:
    case UnaryOp::Mish: {  // one fused kernel: g f'(x)
      input();
      const BinaryOp d = op == UnaryOp::Gelu          ? BinaryOp::GeluBackward
                         : op == UnaryOp::GeluTanh    ? BinaryOp::GeluTanhBackward
                         : op == UnaryOp::Silu        ? BinaryOp::SiluBackward
                         : op == UnaryOp::Hardsigmoid ? BinaryOp::HardsigmoidBackward
                         : op == UnaryOp::Hardswish   ? BinaryOp::HardswishBackward
                         : op == UnaryOp::Softplus    ? BinaryOp::SoftplusBackward
                         : op == UnaryOp::LogSigmoid  ? BinaryOp::LogSigmoidBackward
                                                      : BinaryOp::MishBackward;
      return [d](const Node& n, const Grads& g) { return Grads{binary(d, ten(g[0]), ten(n.saved(0)))}; };
    }
    case UnaryOp::Relu:  // zeros where the result is <= 0 (a NaN input passes), as torch's threshold_backward
      result();
      return [](const Node& n, const Grads& g) { return Grads{_threshold_backward(g[0], n.saved(0))}; };
    case UnaryOp::BitwiseNot: case UnaryOp::Isnan: case UnaryOp::Isinf: case UnaryOp::Isfinite:
    case UnaryOp::Isposinf: case UnaryOp::Isneginf: case UnaryOp::LogicalNot:
    case UnaryOp::BesselK0e: case UnaryOp::BesselK1e: case UnaryOp::AiryAi:
      break;  // integer and bool results, and the scaled K and Ai (record_unary), never record
  }
  fail<RuntimeError>("internal: no gradient for ", op_name(op));
}



// PyTorch's node name, which depends on the overload (which operand is a number).
const char* binary_grad_name(BinaryOp op, const Operand& a, const Operand& b) {
  bool na = !a.tensor, nb = !b.tensor;
  switch (op) {
    case BinaryOp::Pow: return na ? "PowBackward2" : nb ? "PowBackward0" : "PowBackward1";
    case BinaryOp::Remainder: return na ? "RemainderBackward2" : nb ? "RemainderBackward0" : "RemainderBackward1";
    case BinaryOp::Fmod: return nb ? "FmodBackward0" : "FmodBackward1";
    case BinaryOp::Xlogy: return na ? "XlogyBackward1" : nb ? "XlogyBackward2" : "XlogyBackward0";
    case BinaryOp::Sub: return na ? "RsubBackward1" : "SubBackward0";
    case BinaryOp::GeluTanhBackward: return "GeluBackwardBackward0";  // (torch's one node for both forms)
    default: return kBinaryGradName[int(op)];
  }
}

}  // namespace

// Which gradients are right for complex inputs: those whose VJP needs no derivative
// (add, sub, neg), conjugates it (mul, div, pow, the holomorphic unary ops) or is torch's own
// complex formula (abs). The others raise rather than return an unconjugated, wrong
// gradient.
static void check_complex_grad(const char* op, bool complex, bool supported) {
  LUCID_CHECK(!complex || supported, NotImplementedError, op,
              ": autograd for complex tensors is not supported yet for this op (the gradient would need the "
              "conjugate derivative); add, sub, mul, div, pow, logaddexp, neg, abs, exp, log, sqrt, the trigonometric "
              "and hyperbolic functions and the matrix products support it");
}

// torch.special's orthogonal polynomials have no derivative in torch: their results
// never record (requires_grad False), as there.
static bool non_differentiable(BinaryOp op) {
  switch (op) {
    case BinaryOp::ChebyshevT: case BinaryOp::ChebyshevU: case BinaryOp::ChebyshevV: case BinaryOp::ChebyshevW:
    case BinaryOp::HermiteH: case BinaryOp::HermiteHe: case BinaryOp::LaguerreL: case BinaryOp::LegendreP:
      return true;
    default:
      return false;
  }
}

void record_binary(BinaryOp op, const Operand& a, const Operand& b, const TensorPtr& out) {
  if (!autograd::needs_grad({&a.tensor, &b.tensor}) || !autograd::is_differentiable(out->dtype())) return;
  if (non_differentiable(op)) return;
  const bool complex = is_complex(out->dtype());
  check_complex_grad(op_name(op), complex, op == BinaryOp::Add || op == BinaryOp::Sub || op == BinaryOp::Mul ||
                                               op == BinaryOp::Div || op == BinaryOp::Pow || op == BinaryOp::Logaddexp);
  std::shared_ptr<Node> node = autograd::record(binary_grad_name(op, a, b), {a.tensor, b.tensor}, {out}, nullptr);
  Vjp vjp = binary_vjp(op, *node, a, b, out);
  if (complex && op == BinaryOp::Pow)  // holomorphic in both: g * conj(d) = conj(conj(g) * d)
    vjp = [vjp = std::move(vjp)](const Node& n, const Grads& g) {
      Grads r = vjp(n, Grads{conj(g[0])});
      for (TensorPtr& t : r)
        if (t) t = conj(t);
      return r;
    };
  static_cast<FunctionNode&>(*node).set_vjp(std::move(vjp));
}

// The holomorphic ops whose VJP is g * f'(z), f' written with ops that hold for complex
// z: for a complex input their gradient is torch's g * conj(f'(z)) = conj(vjp(conj(g))).
static bool holomorphic(UnaryOp op) {
  switch (op) {
    case UnaryOp::Exp: case UnaryOp::Exp2: case UnaryOp::Expm1: case UnaryOp::Log: case UnaryOp::Log2:
    case UnaryOp::Log10: case UnaryOp::Log1p: case UnaryOp::Sqrt: case UnaryOp::Rsqrt: case UnaryOp::Reciprocal:
    case UnaryOp::Square: case UnaryOp::Sin: case UnaryOp::Cos: case UnaryOp::Tan: case UnaryOp::Sinh:
    case UnaryOp::Cosh: case UnaryOp::Tanh: case UnaryOp::Sigmoid: case UnaryOp::Asin: case UnaryOp::Acos:
    case UnaryOp::Atan: case UnaryOp::Asinh: case UnaryOp::Acosh: case UnaryOp::Atanh:
      return true;
    default:
      return false;
  }
}

void record_unary(UnaryOp op, const TensorPtr& a, const TensorPtr& out) {
  if (!autograd::needs_grad({&a}) || !autograd::is_differentiable(out->dtype())) return;
  // torch.special's scaled K0 and K1 and airy_ai have no derivative in torch: their results never record
  if (op == UnaryOp::BesselK0e || op == UnaryOp::BesselK1e || op == UnaryOp::AiryAi) return;
  const bool complex = is_complex(a->dtype());
  check_complex_grad(op_name(op), complex, op == UnaryOp::Neg || op == UnaryOp::Abs || holomorphic(op));
  const char* name = op == UnaryOp::Log1p ? "Log1PBackward0" : op == UnaryOp::Square ? "PowBackward0"
                     : op == UnaryOp::GeluTanh                          ? "GeluBackward0"
                                                                        : kUnaryGradName[int(op)];
  std::shared_ptr<Node> node = autograd::record(name, {a}, {out}, nullptr);
  Vjp vjp = unary_vjp(op, *node, a, out);
  if (complex && holomorphic(op))
    vjp = [vjp = std::move(vjp)](const Node& n, const Grads& g) { return Grads{conj(vjp(n, Grads{conj(g[0])})[0])}; };
  static_cast<FunctionNode&>(*node).set_vjp(std::move(vjp));
}

}  // namespace lucid::ops
