// The VJPs of the elementwise ops, one case per entry of elementwise_table.h (the
// switches have no default, so a new op without a gradient is a compiler warning).
// They are written with ops, so they are differentiable themselves (create_graph).
#include "autograd/record.h"
#include "ops/elementwise.h"

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

// d max(a, b) / da: 1 where a wins, 1/2 where they tie, 0 where b wins (PyTorch's
// convention, which keeps the gradient symmetric).
TensorPtr winner_weight(BinaryOp cmp, const Operand& a, const Operand& b) {
  TensorPtr wins = binary(cmp, a, b), ties = binary(BinaryOp::Eq, a, b);
  return add(mul(ties, Scalar(0.5)), wins);
}

// Returns the node's VJP and saves what it needs.
Vjp binary_vjp(BinaryOp op, Node& node, const Operand& a, const Operand& b) {
  switch (op) {
    case BinaryOp::Add:
      return [](const Node&, const Grads& g) { return Grads{g[0], g[0]}; };
    case BinaryOp::Sub:
      return [](const Node&, const Grads& g) { return Grads{g[0], neg(g[0])}; };
    case BinaryOp::Mul: {
      Side sa = save(node, a), sb = save(node, b);
      return [sa, sb](const Node& n, const Grads& g) { return Grads{times(g[0], sb.get(n)), times(g[0], sa.get(n))}; };
    }
    case BinaryOp::Div: {
      Side sa = save(node, a), sb = save(node, b);
      return [sa, sb](const Node& n, const Grads& g) {
        Operand x = sa.get(n), y = sb.get(n);
        TensorPtr ga = over(g[0], y);
        // d(a/b)/db = -a / b^2, as -(g / b) * a / b
        TensorPtr gb = x.tensor || y.tensor ? neg(over(times(ga, x), y)) : nullptr;
        return Grads{ga, gb};
      };
    }
    case BinaryOp::Maximum:
    case BinaryOp::Minimum: {
      Side sa = save(node, a), sb = save(node, b);
      BinaryOp cmp = op == BinaryOp::Maximum ? BinaryOp::Gt : BinaryOp::Lt;
      return [sa, sb, cmp](const Node& n, const Grads& g) {
        Operand x = sa.get(n), y = sb.get(n);
        return Grads{mul(g[0], winner_weight(cmp, x, y)), mul(g[0], winner_weight(cmp, y, x))};
      };
    }
    case BinaryOp::Eq: case BinaryOp::Ne: case BinaryOp::Lt:
    case BinaryOp::Le: case BinaryOp::Gt: case BinaryOp::Ge:
      break;  // bool results never record
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
      return [](const Node& n, const Grads& g) { return Grads{mul(g[0], sign(n.saved(0)))}; };
    case UnaryOp::Sign:
      return [](const Node&, const Grads& g) { return Grads{mul(g[0], Scalar(0.0))}; };
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
  }
  fail<RuntimeError>("internal: no gradient for ", op_name(op));
}

}  // namespace

void record_binary(BinaryOp op, const Operand& a, const Operand& b, const TensorPtr& out) {
  if (!autograd::needs_grad({&a.tensor, &b.tensor}) || !autograd::is_differentiable(out->dtype())) return;
  std::shared_ptr<Node> node = autograd::record(kBinaryGradName[int(op)], {a.tensor, b.tensor}, {out}, nullptr);
  static_cast<FunctionNode&>(*node).set_vjp(binary_vjp(op, *node, a, b));
}

void record_unary(UnaryOp op, const TensorPtr& a, const TensorPtr& out) {
  if (!autograd::needs_grad({&a}) || !autograd::is_differentiable(out->dtype())) return;
  std::shared_ptr<Node> node = autograd::record(kUnaryGradName[int(op)], {a}, {out}, nullptr);
  static_cast<FunctionNode&>(*node).set_vjp(unary_vjp(op, *node, a, out));
}

}  // namespace lucid::ops
