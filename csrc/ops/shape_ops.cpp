#include "ops/shape_ops.h"

#include <algorithm>

#include "autograd/record.h"
#include "ops/copy_ops.h"
#include "ops/prims/shape.h"
#include "ops/reduce.h"
#include "ops/views.h"

namespace lucid::ops {

using autograd::Grads;

namespace {

// A fresh contiguous tensor shaped like t; the ops below fill it.
TensorPtr empty_like(const TensorPtr& t, Dtype dtype) { return TensorImpl::empty(t->shape(), dtype, t->device()); }

std::vector<int64_t> negated(std::vector<int64_t> v) {
  for (int64_t& x : v) x = -x;
  return v;
}

}  // namespace

TensorPtr embed_into_zeros(const TensorPtr& g, const TensorSpec& input, const ViewFn& view_of) {
  TensorPtr zeros = TensorImpl::full(input.shape, Scalar(int64_t(0)), g->dtype(), g->device());
  {
    autograd::GradModeGuard no_grad(false);
    view_of(zeros)->copy_from(*g);
  }
  if (autograd::needs_grad({&g}))
    autograd::record("EmbedBackward0", {g}, {zeros}, [view_of](const Node&, const Grads& gg) {
      return Grads{view_of(gg[0])};
    });
  return zeros;
}

// ---- cat ------------------------------------------------------------------------------

TensorPtr cat(const std::vector<TensorPtr>& tensors, int64_t dim) {
  LUCID_CHECK(!tensors.empty(), ValueError, "torch.cat(): expected a non-empty list of Tensors");
  // PyTorch skips 1-D empty tensors when checking shapes (they predate 0-size dims).
  auto skipped = [](const TensorPtr& t) { return t->ndim() == 1 && t->shape()[0] == 0; };
  const TensorPtr* ref = nullptr;
  Dtype dtype = tensors[0]->dtype();
  for (size_t i = 0; i < tensors.size(); ++i) {
    const TensorPtr& t = tensors[i];
    LUCID_CHECK(t, TypeError, "cat(): expected Tensors, got None at position ", i);
    LUCID_CHECK(t->ndim() > 0, RuntimeError, "zero-dimensional tensor (at position ", i, ") cannot be concatenated");
    LUCID_CHECK(t->device() == tensors[0]->device(), RuntimeError, "Expected all tensors to be on the same device, "
                "but found at least two devices, ", tensors[0]->device().str(), " and ", t->device().str(), "!");
    dtype = promote_types(dtype, t->dtype());
    if (!ref && !skipped(t)) ref = &t;
  }
  if (!ref) ref = &tensors[0];
  const int64_t nd = (*ref)->ndim();
  dim = wrap_dim(dim, nd);
  Shape shape = (*ref)->shape();
  int64_t total = 0;
  for (size_t i = 0; i < tensors.size(); ++i) {
    const TensorPtr& t = tensors[i];
    if (skipped(t) && &t != ref) continue;
    LUCID_CHECK(t->ndim() == nd, RuntimeError, "Tensors must have same number of dimensions: got ", nd, " and ",
                t->ndim());
    for (int64_t d = 0; d < nd; ++d)
      LUCID_CHECK(d == dim || t->shape()[d] == shape[d], RuntimeError, "Sizes of tensors must match except in "
                  "dimension ", dim, ". Expected size ", shape[d], " but got size ", t->shape()[d], " for tensor "
                  "number ", i, " in the list.");
    total += t->shape()[dim];
  }
  shape[dim] = total;
  TensorPtr out = TensorImpl::empty(shape, dtype, (*ref)->device());
  std::vector<int64_t> starts(tensors.size(), -1);  // -1: a skipped empty input
  {
    autograd::GradModeGuard no_grad(false);
    int64_t at = 0;
    for (size_t i = 0; i < tensors.size(); ++i) {
      const TensorPtr& t = tensors[i];
      if (skipped(t) && &t != ref) continue;
      starts[i] = at;
      narrow(out, dim, at, t->shape()[dim])->copy_from(*t);
      at += t->shape()[dim];
    }
  }
  if (autograd::needs_grad(tensors)) {
    std::vector<int64_t> sizes;
    for (auto& t : tensors) sizes.push_back(t->ndim() ? t->shape()[std::min(dim, t->ndim() - 1)] : 0);
    autograd::record("CatBackward0", tensors, {out}, [dim, starts, sizes](const Node&, const Grads& g) {
      Grads r(starts.size());
      for (size_t i = 0; i < starts.size(); ++i)
        r[i] = starts[i] >= 0 ? narrow(g[0], dim, starts[i], sizes[i])
                              : TensorImpl::empty({0}, g[0]->dtype(), g[0]->device());  // a skipped empty input
      return r;
    });
  }
  return out;
}

// ---- split, unbind -----------------------------------------------------------------------

namespace {

// Makes `pieces` (views of t) the outputs of one view node whose VJP joins their
// gradients with `join` (missing ones arrive as zeros from the engine).
void record_pieces(const char* name, const TensorPtr& t, const std::vector<TensorPtr>& pieces,
                   std::function<TensorPtr(const std::vector<TensorPtr>&)> join) {
  for (const TensorPtr& p : pieces) set_view_base(p, t);  // (Note [Views learn of writes])
  if (pieces.empty() || !autograd::needs_grad({&t})) return;
  autograd::record(name, {t}, pieces, [join](const Node&, const Grads& g) { return Grads{join(g)}; })->is_view = true;
}

}  // namespace

std::vector<TensorPtr> split_with_sizes(const TensorPtr& t, const std::vector<int64_t>& sizes, int64_t dim,
                                        bool equal_split) {
  LUCID_CHECK(t->ndim() > 0, RuntimeError, "split expects at least a 1-dimensional tensor");
  dim = wrap_dim(dim, t->ndim());
  const int64_t n = t->shape()[dim];
  int64_t total = 0;
  for (int64_t s : sizes) {
    LUCID_CHECK(s >= 0, RuntimeError, "split_with_sizes expects split_sizes have only non-negative entries, but got "
                "split_sizes=", shape_str(sizes));
    total += s;
  }
  LUCID_CHECK(total == n, RuntimeError, "split_with_sizes expects split_sizes to sum exactly to ", n,
              " (input tensor's size at dimension ", dim, "), but got split_sizes=", shape_str(sizes));
  std::vector<TensorPtr> out;
  {
    autograd::GradModeGuard no_grad(false);
    int64_t at = 0;
    for (int64_t s : sizes) {
      out.push_back(narrow(t, dim, at, s));
      at += s;
    }
  }
  record_pieces(equal_split ? "SplitBackward0" : "SplitWithSizesBackward0", t, out,
                [dim](const std::vector<TensorPtr>& g) { return cat(g, dim); });
  return out;
}

std::vector<TensorPtr> unbind(const TensorPtr& t, int64_t dim) {
  LUCID_CHECK(t->ndim() > 0, IndexError, "Dimension specified as ", dim, " but tensor has no dimensions");
  dim = wrap_dim(dim, t->ndim());
  std::vector<TensorPtr> out;
  {
    autograd::GradModeGuard no_grad(false);
    for (int64_t i = 0; i < t->shape()[dim]; ++i) out.push_back(select(t, dim, i));
  }
  record_pieces("UnbindBackward0", t, out, [dim](const std::vector<TensorPtr>& g) {
    std::vector<TensorPtr> parts;
    for (const TensorPtr& x : g) parts.push_back(unsqueeze(x, dim));
    return cat(parts, dim);
  });
  return out;
}

// ---- flip, roll, repeat ------------------------------------------------------------------

TensorPtr flip(const TensorPtr& t, const std::vector<int64_t>& dims) {
  const int64_t nd = t->ndim();
  std::vector<bool> flipped(size_t(std::max<int64_t>(nd, 0)), false);
  Flip p;
  for (int64_t d : dims) {
    int64_t w = wrap_dim(d, nd);
    if (nd == 0) continue;
    LUCID_CHECK(!flipped[w], RuntimeError, "dim ", w, " appears multiple times in the list of dims");
    flipped[w] = true;
    p.dims.push_back(w);
  }
  TensorPtr out = empty_like(t, t->dtype());
  launch(p, {out.get()}, {t.get()});
  if (autograd::needs_grad({&t}))
    autograd::record("FlipBackward0", {t}, {out}, [dims](const Node&, const Grads& g) {
      return Grads{flip(g[0], dims)};
    });
  return out;
}

TensorPtr roll(const TensorPtr& t, const std::vector<int64_t>& shifts, const std::vector<int64_t>& dims) {
  LUCID_CHECK(!shifts.empty(), RuntimeError, "`shifts` required");
  TensorPtr out;
  {
    autograd::GradModeGuard no_grad(false);
    if (dims.empty()) {
      LUCID_CHECK(shifts.size() == 1, RuntimeError, "shifts and dimensions must align. shifts: ", shifts.size(),
                  ", dims:0");
      out = reshape(roll(reshape(t, {-1}), shifts, {0}), t->shape());
    } else {
      LUCID_CHECK(shifts.size() == dims.size(), RuntimeError, "shifts and dimensions must align. shifts: ",
                  shifts.size(), ", dims:", dims.size());
      LUCID_CHECK(t->ndim() > 0, IndexError, "Dimension specified as ", dims[0], " but tensor has no dimensions");
      out = t;
      for (size_t i = 0; i < dims.size(); ++i) {
        int64_t d = wrap_dim(dims[i], t->ndim());
        int64_t n = t->ndim() ? t->shape()[d] : 1;
        if (n == 0) continue;
        int64_t s = ((shifts[i] % n) + n) % n;
        // The last s elements move to the front.
        out = cat({narrow(out, d, n - s, s), narrow(out, d, 0, n - s)}, d);
      }
      if (out == t) out = t->clone();
    }
  }
  if (autograd::needs_grad({&t}))
    autograd::record("RollBackward0", {t}, {out}, [shifts, dims](const Node&, const Grads& g) {
      return Grads{roll(g[0], negated(shifts), dims)};
    });
  return out;
}

TensorPtr repeat(const TensorPtr& t, const Shape& repeats) {
  const int64_t n = int64_t(repeats.size()), nd = t->ndim();
  LUCID_CHECK(n >= nd, RuntimeError, "Number of dimensions of repeat dims can not be smaller than number of "
              "dimensions of tensor");
  for (int64_t r : repeats)
    LUCID_CHECK(r >= 0, RuntimeError, "Trying to create tensor with negative dimension ", r, ": ",
                shape_str(repeats));
  // t as (1, s0, 1, s1, ...) expanded to (r0, s0, r1, s1, ...): row-major, that is
  // s0*r0 blocks of t laid end to end, which is what repeat means.
  Shape padded(size_t(n - nd), 1), pairs, expanded, result;
  padded.insert(padded.end(), t->shape().begin(), t->shape().end());
  for (int64_t i = 0; i < n; ++i) {
    pairs.push_back(1), pairs.push_back(padded[i]);
    expanded.push_back(repeats[i]), expanded.push_back(padded[i]);
    result.push_back(repeats[i] * padded[i]);
  }
  TensorPtr out;
  {
    autograd::GradModeGuard no_grad(false);
    // One copy into fresh memory (repeat never aliases its input, even when every
    // repeat is 1), then a free view to the result's shape.
    TensorPtr dense = TensorImpl::empty(expanded, t->dtype(), t->device());
    dense->copy_from(*expand(reshape(t, pairs), expanded));
    out = view(dense, result);
  }
  if (autograd::needs_grad({&t})) {
    Shape in_shape = t->shape();
    autograd::record("RepeatBackward0", {t}, {out}, [expanded, in_shape, n](const Node&, const Grads& g) {
      std::vector<int64_t> rdims;
      for (int64_t i = 0; i < n; ++i) rdims.push_back(2 * i);
      TensorPtr s = n ? sum(reshape(g[0], expanded), rdims, false, std::nullopt) : g[0];
      return Grads{reshape(s, in_shape)};
    });
  }
  return out;
}

// ---- tril / triu ------------------------------------------------------------------------

static TensorPtr tri(const char* op, const char* node, const TensorPtr& t, int64_t diagonal, bool lower) {
  LUCID_CHECK(t->ndim() >= 2, RuntimeError, op, ": input tensor must have at least 2 dimensions");
  TensorPtr out = t->clone();  // contiguous
  Tri p;
  p.diagonal = diagonal;
  p.lower = lower;
  launch(p, {out.get()}, {});
  if (autograd::needs_grad({&t}))
    autograd::record(node, {t}, {out}, [diagonal, lower](const Node&, const Grads& g) {
      return Grads{lower ? tril(g[0], diagonal) : triu(g[0], diagonal)};
    });
  return out;
}

TensorPtr tril(const TensorPtr& t, int64_t diagonal) { return tri("tril", "TrilBackward0", t, diagonal, true); }
TensorPtr triu(const TensorPtr& t, int64_t diagonal) { return tri("triu", "TriuBackward0", t, diagonal, false); }

// ---- diagonal ------------------------------------------------------------------------------

TensorPtr diagonal(const TensorPtr& t, int64_t offset, int64_t dim1, int64_t dim2) {
  const int64_t nd = t->ndim();
  int64_t d1 = wrap_dim(dim1, nd), d2 = wrap_dim(dim2, nd);  // IndexError first, as PyTorch
  LUCID_CHECK(nd >= 2, RuntimeError, "diagonal(): input must have at least 2 dimensions, got ", nd);
  LUCID_CHECK(d1 != d2, RuntimeError, "diagonal dimensions cannot be identical ", dim1, ", ", dim2);
  const Shape& sh = t->shape();
  const Stride& st = t->stride();
  int64_t len, start = t->storage_offset();
  if (offset >= 0) {
    len = std::max<int64_t>(0, std::min(sh[d1], sh[d2] - offset));
    if (len > 0) start += offset * st[d2];
  } else {
    len = std::max<int64_t>(0, std::min(sh[d1] + offset, sh[d2]));
    if (len > 0) start -= offset * st[d1];
  }
  Shape shape;
  Stride stride;
  for (int64_t d = 0; d < nd; ++d)
    if (d != d1 && d != d2) shape.push_back(sh[d]), stride.push_back(st[d]);
  shape.push_back(len);
  stride.push_back(st[d1] + st[d2]);
  TensorPtr out = TensorImpl::view_of(*t, std::move(shape), std::move(stride), start);
  if (autograd::needs_grad({&t})) {
    TensorSpec spec = TensorSpec::of(*t);
    auto node = autograd::record("DiagonalBackward0", {t}, {out}, [spec, offset, d1, d2](const Node&, const Grads& g) {
      return Grads{embed_into_zeros(g[0], spec, [offset, d1, d2](const TensorPtr& x) {
        return diagonal(x, offset, d1, d2);
      })};
    });
    node->is_view = true;
  }
  set_view_base(out, t);
  return out;
}

}  // namespace lucid::ops
