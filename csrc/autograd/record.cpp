#include "autograd/record.h"

#include "core/error.h"

namespace lucid::autograd {

bool is_differentiable(Dtype d) { return is_floating(d) || is_complex(d); }

bool needs_grad(std::initializer_list<const TensorPtr*> inputs) {
  if (!grad_enabled()) return false;
  for (const TensorPtr* t : inputs)
    if (*t && (*t)->requires_grad()) return true;
  return false;
}

bool needs_grad(const std::vector<TensorPtr>& inputs) {
  if (!grad_enabled()) return false;
  for (const TensorPtr& t : inputs)
    if (t && t->requires_grad()) return true;
  return false;
}

std::shared_ptr<Node> grad_accumulator(const TensorPtr& leaf) {
  AutogradMeta* meta = leaf->autograd_meta();
  if (!meta->grad_accumulator) meta->grad_accumulator = std::make_shared<AccumulateGrad>(leaf);
  return meta->grad_accumulator;
}

Edge gradient_edge(const TensorPtr& t) {
  if (!t) return {};
  if (const std::shared_ptr<Node>& fn = t->grad_fn()) return {fn, t->output_nr()};
  if (t->requires_grad()) return {grad_accumulator(t), 0};
  return {};
}

void set_history(const TensorPtr& t, const std::shared_ptr<Node>& node, uint32_t nr) {
  AutogradMeta* meta = t->autograd_meta();
  meta->requires_grad = true;
  meta->is_leaf = false;
  meta->grad_fn = node;
  meta->output_nr = nr;
}

void attach(const std::shared_ptr<Node>& node, TensorList inputs, TensorList outputs) {
  node->next_edges.reserve(inputs.size());
  node->inputs.reserve(inputs.size());
  for (const TensorPtr& in : inputs) {
    node->next_edges.push_back(gradient_edge(in));
    node->inputs.push_back(in ? TensorSpec::of(*in) : TensorSpec{});
  }
  node->outputs.reserve(outputs.size());
  for (size_t i = 0; i < outputs.size(); ++i) {
    const TensorPtr& out = outputs[i];
    node->outputs.push_back(out ? TensorSpec::of(*out) : TensorSpec{});
    if (out && is_differentiable(out->dtype())) set_history(out, node, uint32_t(i));
  }
}

std::shared_ptr<Node> record(const char* name, TensorList inputs, TensorList outputs, Vjp vjp) {
  auto node = std::make_shared<FunctionNode>(name, std::move(vjp));
  attach(node, inputs, outputs);
  return node;
}

}  // namespace lucid::autograd
