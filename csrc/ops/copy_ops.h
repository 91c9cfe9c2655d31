// Copies that join the autograd graph: clone, dtype/device conversion, detach.
#pragma once

#include <optional>

#include "core/tensor_impl.h"

namespace lucid::ops {

// Tensor.clone(): a copy in the same memory order (CloneBackward0).
TensorPtr clone(const TensorPtr& t);
// Tensor.to(dtype, device): always a new tensor in t's memory order (ToCopyBackward0);
// callers return t itself when nothing changes.
TensorPtr copy_to(const TensorPtr& t, std::optional<Dtype> dtype, std::optional<Device> device);
// A tensor sharing t's bytes and version counter, without history.
TensorPtr detach(const TensorPtr& t);

// Tensor.copy_(src) and Tensor.fill_(value), recorded when grad mode is on: self's
// old value gets no gradient, src gets self's.
void copy_(const TensorPtr& self, const TensorPtr& src);
void fill_(const TensorPtr& self, const Scalar& value);

// Writes an in-place op's result into self (cast to its dtype) and gives self the
// history of the write; when self is a view in a graph, its base's history too
// (Note [In-place on views]). writes_through_view says whether that case applies.
void write_inplace_result(const TensorPtr& self, const TensorPtr& result);
bool writes_through_view(const TensorPtr& self, const TensorPtr& source);

// The checks every in-place op makes on its target `self` (op `name`, writing a
// value computed from `source`, which may be null): each element its own memory;
// not a leaf that requires grad (nor a view of one); no write of history into
// memory shared with a tensor lucid cannot update.
void check_inplace_target(const char* name, const TensorPtr& self, const TensorPtr& source);

// Marks `view` (just made from t) as a view of t's root: TensorImpl::base, torch's _base.
void set_root_base(const TensorPtr& view, const TensorPtr& t);
// set_root_base, and in grad mode marks `view` as a view of t's autograd base,
// registering it with that base; refresh_views gives every live view of `base` but `written` fresh
// history after a recorded write into base's memory (Note [Views learn of writes]).
void set_view_base(const TensorPtr& view, const TensorPtr& t);
void refresh_views(const TensorPtr& base, const TensorImpl* written = nullptr);

// The in-place view ops (Tensor.unsqueeze_, t_, transpose_, ...): self takes the
// metadata of `view`, a view of self made by the out-of-place op, and, in a graph, its
// history (its node leads to self's old history); the version is bumped. The checks
// of check_inplace_target on history: not on a leaf that requires grad, nor on a view
// of one (an expanded tensor may change its view, as in torch).
void become_view(const TensorPtr& self, const TensorPtr& view);

}  // namespace lucid::ops
