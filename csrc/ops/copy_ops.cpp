#include "ops/copy_ops.h"

#include "autograd/record.h"
#include "ops/elementwise.h"
#include "ops/views.h"

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

namespace {

// In grad mode: not a leaf that requires grad, nor a view of one (the leaf would
// change under the user's feet).
void check_not_leaf(const TensorPtr& self) {
  LUCID_CHECK(!(self->requires_grad() && self->is_leaf()), RuntimeError,
              "a leaf Variable that requires grad is being used in an in-place operation.");
  const TensorPtr& base = self->view_base();
  LUCID_CHECK(!(base && base->requires_grad() && base->is_leaf()), RuntimeError,
              "a view of a leaf Variable that requires grad is being used in an in-place operation.");
}

}  // namespace

// In-place writes need a target each of whose elements is its own memory.
void check_inplace_target(const char* name, const TensorPtr& self, const TensorPtr& source) {
  for (size_t d = 0; d < self->shape().size(); ++d)
    LUCID_CHECK(self->stride()[d] != 0 || self->shape()[d] <= 1, RuntimeError, name,
                "_(): unsupported operation: more than one element of the written-to tensor refers to a single "
                "memory location. Please clone() the tensor before performing the operation.");
  if (!autograd::grad_enabled()) return;
  check_not_leaf(self);
  const TensorPtr& base = self->view_base();
  // Writing a value with history into memory another tensor sees, when lucid does
  // not know that tensor (the view was made without grad mode, or the memory is
  // shared with NumPy), would leave the other tensor's history stale.
  LUCID_CHECK(!(!base && source && source->requires_grad() && !self->requires_grad() && self->storage_is_shared()),
              RuntimeError, name, "_(): writing a tensor that requires grad into memory another tensor shares "
              "(a view made under no_grad, or a NumPy buffer) is not supported: that tensor would not record the "
              "write. Make the view in grad mode, or build the result out of place.");
}

void become_view(const TensorPtr& self, const TensorPtr& view) {
  if (autograd::grad_enabled()) check_not_leaf(self);
  self->set_data(*view);
  if (view->grad_fn()) autograd::set_history(self, view->grad_fn(), view->output_nr());
  self->bump_version();
}

namespace {

// Note [In-place on views]
// An in-place write through a view V of a base B changes B too, so B's history must
// learn of it (PyTorch's CopySlices). The write becomes a node over (B's old history,
// the written value R): B's gradient passes through where V does not look, and the
// part V looks at is R's gradient. B takes that node as its grad_fn, and V becomes a
// fresh view of the new B. The geometry is V's strides and offset relative to B,
// which needs a contiguous B (what a base almost always is); otherwise lucid raises.
void copy_slices(const TensorPtr& view, const TensorPtr& base, const TensorPtr& result) {
  LUCID_CHECK(base->is_contiguous(), NotImplementedError, "in-place write through a view of a non-contiguous "
              "tensor that requires grad is not supported yet; make the base contiguous first");
  const int64_t item = int64_t(base->itemsize());
  Shape size = view->shape();
  Shape strides(view->stride().size());
  for (size_t i = 0; i < strides.size(); ++i) strides[i] = view->stride()[i] / item;
  const int64_t rel = (view->storage_offset() - base->storage_offset()) / item;
  TensorPtr mask = TensorImpl::full(base->shape(), Scalar(int64_t(1)), base->dtype(), base->device());
  {
    autograd::GradModeGuard no_grad(false);
    as_strided(mask, size, strides, rel)->fill(Scalar(int64_t(0)));
  }
  auto node = autograd::record("CopySlices", {base, result}, {}, [=](const Node&, const autograd::Grads& g) {
    TensorPtr gb = contiguous(g[0]);
    int64_t at = gb->storage_offset() / int64_t(gb->itemsize()) + rel;
    return autograd::Grads{mul(gb, mask), as_strided(gb, size, strides, at)};
  });
  view->copy_from(*result);  // writes the base's bytes; bumps the shared version
  node->outputs.push_back(TensorSpec::of(*base));
  autograd::set_history(base, node, 0);
  TensorPtr fresh = as_strided(base, size, strides, base->storage_offset() / item + rel);
  autograd::set_history(view, fresh->grad_fn(), 0);
  refresh_views(base, view.get());
}

}  // namespace

void set_root_base(const TensorPtr& view, const TensorPtr& t) { view->set_base(t->base() ? t->base() : t); }

// Note [Views learn of writes]
// A recorded write into a base B, directly (a.mul_(3)) or through one of its views
// (which makes B's history a CopySlices node, above), leaves B's other views with
// history from before the write, so their gradients missed it: b = a[:2]; a.mul_(3);
// b.sum().backward() gave a the gradient of b as it was. torch regenerates a view's
// grad_fn when it finds its base's version moved; lucid does it at the write instead:
// a base keeps weak references to the views made of it in grad mode, and after a
// recorded write each live one becomes a fresh view of the new B (as_strided with its
// own geometry, as the written view above). A view of a base that did not require grad
// (o = zeros(2, 3).t(); o[0] = w) joins the graph the same way.
void set_view_base(const TensorPtr& view, const TensorPtr& t) {
  set_root_base(view, t);
  if (!autograd::grad_enabled()) return;
  const TensorPtr& base = t->view_base() ? t->view_base() : t;
  view->autograd_meta()->view_base = base;
  std::vector<std::weak_ptr<TensorImpl>>& views = base->autograd_meta()->views;
  // The dead ones go when the list reaches a power of two, so a long-lived base (a
  // parameter sliced every step) holds about as many entries as it has live views.
  if (views.size() >= 8 && (views.size() & (views.size() - 1)) == 0)
    std::erase_if(views, [](const std::weak_ptr<TensorImpl>& w) { return w.expired(); });
  views.push_back(view);
}

void refresh_views(const TensorPtr& base, const TensorImpl* written) {
  // (A non-contiguous base keeps its views' old history: as_strided's gradient, which
  // the fresh views take, needs a contiguous input, as copy_slices does.)
  if (!base->has_autograd_meta() || !base->requires_grad() || !autograd::grad_enabled() || !base->is_contiguous())
    return;
  std::vector<TensorPtr> live;  // (as_strided below registers views too: not while iterating the list)
  for (const std::weak_ptr<TensorImpl>& w : base->autograd_meta()->views)
    if (TensorPtr v = w.lock(); v && v.get() != written && v->dtype() == base->dtype()) live.push_back(v);
  const int64_t item = int64_t(base->itemsize());
  for (const TensorPtr& v : live) {
    Shape strides(v->stride().size());
    for (size_t i = 0; i < strides.size(); ++i) strides[i] = v->stride()[i] / item;
    TensorPtr fresh = as_strided(base, v->shape(), strides, v->storage_offset() / item);
    autograd::set_history(v, fresh->grad_fn(), 0);
  }
}

bool writes_through_view(const TensorPtr& self, const TensorPtr& source) {
  const TensorPtr& base = self->view_base();
  return autograd::grad_enabled() && base && (base->requires_grad() || (source && source->requires_grad()));
}

void write_inplace_result(const TensorPtr& self, const TensorPtr& result) {
  if (writes_through_view(self, result)) return copy_slices(self, self->view_base(), result);
  self->copy_from(*result);  // casts; bumps the version
  if (!result->grad_fn()) return;
  autograd::set_history(self, result->grad_fn(), result->output_nr());
  refresh_views(self);
}

void copy_(const TensorPtr& self, const TensorPtr& src) {
  check_inplace_target("copy", self, src);
  if (writes_through_view(self, src)) {
    TensorPtr value = src->shape() == self->shape() ? src : expand(src, self->shape());
    return copy_slices(self, self->view_base(), copy_to(value, self->dtype(), self->device()));
  }
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
    refresh_views(self);
  }
}

void fill_(const TensorPtr& self, const Scalar& value) {
  check_inplace_target("fill", self, nullptr);
  if (writes_through_view(self, nullptr))
    return copy_slices(self, self->view_base(), TensorImpl::full(self->shape(), value, self->dtype(), self->device()));
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
    refresh_views(self);
  }
}

}  // namespace lucid::ops
