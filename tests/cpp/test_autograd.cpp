// The autograd engine from C++: graph construction, the dependency-counted walk,
// accumulation, capture (autograd.grad), saved-tensor checks, create_graph, hooks
// and graph freeing. Values are small enough to check by hand.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "autograd/engine.h"
#include "autograd/record.h"
#include "core/error.h"
#include "ops/elementwise.h"
#include "ops/reduce.h"

using namespace lucid;
using namespace lucid::ops;

namespace {

TensorPtr vec(std::vector<double> v, bool requires_grad = true) {
  TensorPtr t = TensorImpl::empty({int64_t(v.size())}, Dtype::F64, Device::cpu());
  std::memcpy(t->host_ptr(), v.data(), v.size() * sizeof(double));
  if (requires_grad) t->set_requires_grad(true);
  return t;
}

std::vector<double> values(const TensorPtr& t) {
  std::vector<std::byte> b = t->to_bytes();
  std::vector<double> v(b.size() / sizeof(double));
  std::memcpy(v.data(), b.data(), b.size());
  return v;
}

TensorPtr total(const TensorPtr& t) { return ops::sum(t, {}, false, std::nullopt); }

void backward(const TensorPtr& out, bool keep_graph = false) {
  autograd::run_backward({out}, {nullptr}, {}, {keep_graph, false, true, false});
}

}  // namespace

TEST(Autograd, RecordsNodesOnlyWhenNeeded) {
  TensorPtr x = vec({1, 2}), c = vec({3, 4}, false);
  EXPECT_EQ(mul(c, c)->grad_fn(), nullptr);
  TensorPtr y = mul(x, c);
  ASSERT_NE(y->grad_fn(), nullptr);
  EXPECT_STREQ(y->grad_fn()->name(), "MulBackward0");
  EXPECT_FALSE(y->is_leaf());
  ASSERT_EQ(y->grad_fn()->next_edges.size(), 2u);
  EXPECT_TRUE(y->grad_fn()->next_edges[0].valid());   // x: its AccumulateGrad
  EXPECT_FALSE(y->grad_fn()->next_edges[1].valid());  // c does not require grad
  autograd::GradModeGuard off(false);
  EXPECT_EQ(mul(x, x)->grad_fn(), nullptr);
}

TEST(Autograd, DiamondSumsGradientsOnce) {
  // y = sum((2x) * (2x) + 2x): dy/dx = 8x + 2
  TensorPtr x = vec({1, -2, 0.5});
  TensorPtr a = mul(x, Scalar(2.0));
  backward(total(add(mul(a, a), a)));
  EXPECT_EQ(values(x->grad_to_tensor()), (std::vector<double>{10, -14, 6}));
}

TEST(Autograd, GradientsAccumulateAndBroadcastsSumDown) {
  TensorPtr x = vec({1, 2});
  TensorPtr s = TensorImpl::full({}, Scalar(3.0), Dtype::F64, Device::cpu());
  s->set_requires_grad(true);
  backward(total(mul(x, s)));
  backward(total(mul(x, s)));
  EXPECT_EQ(values(x->grad_to_tensor()), (std::vector<double>{6, 6}));
  EXPECT_EQ(values(s->grad_to_tensor()), (std::vector<double>{6}));
  EXPECT_EQ(s->grad_to_tensor()->shape(), Shape{});
}

TEST(Autograd, CaptureReturnsWithoutAccumulating) {
  TensorPtr x = vec({1, 2}), w = vec({3, 5});
  TensorPtr y = total(mul(x, w));
  std::vector<TensorPtr> g = autograd::run_backward({y}, {nullptr}, {w}, {false, false, false, false});
  EXPECT_EQ(values(g[0]), (std::vector<double>{1, 2}));
  EXPECT_EQ(x->grad_to_tensor(), nullptr);
  EXPECT_EQ(w->grad_to_tensor(), nullptr);
}

TEST(Autograd, SavedTensorModifiedInPlaceRaises) {
  TensorPtr x = vec({1, 2});
  TensorPtr h = mul(x, Scalar(1.0));
  TensorPtr y = total(mul(h, h));
  binary_inplace(BinaryOp::Add, h, {nullptr, Scalar(1.0)});
  EXPECT_THROW(backward(y), RuntimeError);
}

TEST(Autograd, FreedGraphRaisesOnSecondBackward) {
  TensorPtr x = vec({1, 2});
  TensorPtr y = total(mul(x, x));
  backward(y);
  EXPECT_THROW(backward(y), RuntimeError);
  TensorPtr z = total(mul(x, x));
  backward(z, true);
  backward(z);  // retained once: runs again
  EXPECT_EQ(values(x->grad_to_tensor()), (std::vector<double>{2 + 2 + 2, 4 + 4 + 4}));
}

TEST(Autograd, CreateGraphGivesDifferentiableGradients) {
  // y = x^3: dy/dx = 3x^2, d2y/dx2 = 6x
  TensorPtr x = vec({2});
  TensorPtr y = total(mul(mul(x, x), x));
  TensorPtr g = autograd::run_backward({y}, {nullptr}, {x}, {true, true, false, false})[0];
  EXPECT_EQ(values(g), (std::vector<double>{12}));
  ASSERT_TRUE(g->requires_grad());
  TensorPtr g2 = autograd::run_backward({total(g)}, {nullptr}, {x}, {false, false, false, false})[0];
  EXPECT_EQ(values(g2), (std::vector<double>{12}));
}

TEST(Autograd, TensorHookReplacesGradient) {
  TensorPtr x = vec({1, 1});
  TensorPtr h = mul(x, Scalar(2.0));
  h->grad_fn()->tensor_hooks.push_back({Node::next_hook_id(), 0, [](const TensorPtr& g) {
                                          return mul(g, Scalar(10.0));
                                        }});
  backward(total(h));
  EXPECT_EQ(values(x->grad_to_tensor()), (std::vector<double>{20, 20}));
}

TEST(Autograd, GraphIsFreedWithItsOutput) {
  TensorPtr x = vec({1, 2});
  std::weak_ptr<Node> node;
  {
    TensorPtr y = exp(mul(x, x));
    node = y->grad_fn();
    EXPECT_FALSE(node.expired());
  }
  EXPECT_TRUE(node.expired());  // the saved output does not keep its own node alive
}

TEST(Autograd, NonScalarOutputNeedsGradient) {
  TensorPtr x = vec({1, 2});
  EXPECT_THROW(backward(mul(x, x)), RuntimeError);
  EXPECT_THROW(backward(vec({1}, false)), RuntimeError);  // no grad_fn, no requires_grad
}
