// What ops call to join the autograd graph: whether to record, and the recording.
//
//   if (autograd::needs_grad({a, b})) {
//     auto node = autograd::record("MulBackward0", {a, b}, {out}, [](const Node& n, const Grads& g) {
//       return Grads{ops::mul(g[0], n.saved(1)), ops::mul(g[0], n.saved(0))};
//     });
//     node->save(a);  // saved(0)
//     node->save(b);  // saved(1)
//   }
//
// A VJP returns one gradient per input (nullptr for none). It may return a gradient
// of the broadcast shape or another dtype: the engine sums it down to the input's
// shape and casts it to the input's dtype, so VJPs of broadcasting ops stay simple.
#pragma once

#include <initializer_list>

#include "autograd/grad_mode.h"
#include "autograd/node.h"

namespace lucid::autograd {

using Grads = std::vector<TensorPtr>;

// Grad mode is on and some input requires grad (null inputs are skipped).
bool needs_grad(std::initializer_list<const TensorPtr*> inputs);
bool needs_grad(const std::vector<TensorPtr>& inputs);

// Where t's gradient goes: its grad_fn, its AccumulateGrad (a leaf that requires
// grad), or nowhere.
Edge gradient_edge(const TensorPtr& t);
// The leaf's AccumulateGrad node, made on first use and kept by the leaf.
std::shared_ptr<Node> grad_accumulator(const TensorPtr& leaf);

// The tensors an op records, passed as a braced list ({a, b}: an array on the
// caller's stack, no allocation per recorded op) or as a vector. Read during the
// call only. (The list is taken by reference: a temporary bound to a reference
// parameter, and so the list's array, lives until the caller's full-expression
// ends, after the call.)
class TensorList {
 public:
  TensorList() = default;
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Winit-list-lifetime"  // the lifetime is the caller's full-expression (above)
#endif
  TensorList(const std::initializer_list<TensorPtr>& list) : data_(list.begin()), size_(list.size()) {}
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif
  TensorList(const std::vector<TensorPtr>& v) : data_(v.data()), size_(v.size()) {}
  const TensorPtr* begin() const { return data_; }
  const TensorPtr* end() const { return data_ + size_; }
  size_t size() const { return size_; }
  const TensorPtr& operator[](size_t i) const { return data_[i]; }

 private:
  const TensorPtr* data_ = nullptr;
  size_t size_ = 0;
};

// Makes a node whose edges lead to `inputs` (null entries: operands that are not
// tensors) and makes it the grad_fn of every output of a floating or complex dtype.
std::shared_ptr<Node> record(const char* name, TensorList inputs, TensorList outputs, Vjp vjp);
// Attaches an already built node (custom Functions) in the same way.
void attach(const std::shared_ptr<Node>& node, TensorList inputs, TensorList outputs);
// Makes `t` an output of `node` at index nr (in-place ops rebase their target).
void set_history(const TensorPtr& t, const std::shared_ptr<Node>& node, uint32_t nr);

bool is_differentiable(Dtype d);  // floating and complex dtypes

}  // namespace lucid::autograd
