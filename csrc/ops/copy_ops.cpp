#include "ops/copy_ops.h"

#include "autograd/record.h"

namespace lucid::ops {

namespace {

// The gradient of a copy is the gradient itself: the engine casts it back to the
// input's dtype and device.
autograd::Grads pass_through(const Node&, const autograd::Grads& g) { return {g[0]}; }

}  // namespace

TensorPtr clone(const TensorPtr& t) {
  TensorPtr out = t->clone(std::nullopt, std::nullopt, true);
  if (autograd::needs_grad({&t})) autograd::record("CloneBackward0", {t}, {out}, pass_through);
  return out;
}

TensorPtr copy_to(const TensorPtr& t, std::optional<Dtype> dtype, std::optional<Device> device) {
  TensorPtr out = t->clone(dtype, device, true);
  if (autograd::needs_grad({&t})) autograd::record("ToCopyBackward0", {t}, {out}, pass_through);
  return out;
}

TensorPtr detach(const TensorPtr& t) { return std::make_shared<TensorImpl>(t->storage(), t->meta()); }

// In-place writes need a target each of whose elements is its own memory.
void check_inplace_target(const char* name, const TensorPtr& self, const TensorPtr& source) {
  for (size_t d = 0; d < self->shape().size(); ++d)
    LUCID_CHECK(self->stride()[d] != 0 || self->shape()[d] <= 1, RuntimeError, name,
                "_(): unsupported operation: more than one element of the written-to tensor refers to a single "
                "memory location. Please clone() the tensor before performing the operation.");
  if (!autograd::grad_enabled()) return;
  LUCID_CHECK(!(self->requires_grad() && self->is_leaf()), RuntimeError,
              "a leaf Variable that requires grad is being used in an in-place operation.");
  // Note [In-place on views]: PyTorch rewrites the base's history (CopySlices);
  // lucid does not yet, and refuses rather than compute a wrong gradient.
  LUCID_CHECK(!(self->grad_fn() && self->grad_fn()->is_view), RuntimeError, name,
              "_(): in-place operations on a view of a tensor that requires grad are not supported yet "
              "(the view comes from ", self->grad_fn()->name(), "). Use an out-of-place op, or clone() the view.");
  // Writing a value with history into memory another tensor also sees (a view of a
  // base that would not learn of it) is the same case.
  LUCID_CHECK(!(source && source->requires_grad() && !self->requires_grad() && self->storage_is_shared()),
              RuntimeError, name, "_(): writing a tensor that requires grad into a view (or a tensor whose "
              "memory another tensor shares) is not supported yet: its base would not record the write. Build "
              "the result out of place (e.g. with lucid.cat / lucid.where) instead.");
}

void copy_(const TensorPtr& self, const TensorPtr& src) {
  check_inplace_target("copy", self, src);
  bool record = autograd::needs_grad({&self, &src});
  std::shared_ptr<Node> node;
  if (record)  // built before the write: its edge to self is self's old history
    node = autograd::record("CopyBackwards", {self, src}, {}, [](const Node&, const autograd::Grads& g) {
      return autograd::Grads{nullptr, g[0]};
    });
  self->copy_from(*src);
  if (record) {
    node->outputs.push_back(TensorSpec::of(*self));
    autograd::set_history(self, node, 0);
  }
}

void fill_(const TensorPtr& self, const Scalar& value) {
  check_inplace_target("fill", self, nullptr);
  bool record = autograd::needs_grad({&self});
  std::shared_ptr<Node> node;
  if (record)
    node = autograd::record("FillBackward0", {self}, {}, [](const Node&, const autograd::Grads&) {
      return autograd::Grads{nullptr};
    });
  self->fill(value);
  if (record) {
    node->outputs.push_back(TensorSpec::of(*self));
    autograd::set_history(self, node, 0);
  }
}

}  // namespace lucid::ops
