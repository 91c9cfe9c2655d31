#include "ops/views.h"

#include <algorithm>
#include <string>

#include "autograd/record.h"
#include "ops/copy_ops.h"
#include "ops/creation.h"
#include "ops/elementwise.h"
#include "ops/gather_ops.h"

namespace lucid::ops {

namespace {

using autograd::Grads;

TensorPtr restride(const TensorPtr& t, Shape shape, Stride stride, int64_t offset) {
  return TensorImpl::view_of(*t, std::move(shape), std::move(stride), offset);
}

// Records a view op's node when t requires grad, and (in grad mode) remembers the
// base the view shows, so that an in-place write through it can rewrite the base's
// history (Note [In-place on views] in copy_ops.cpp).
TensorPtr recorded(const char* name, const TensorPtr& t, TensorPtr out, Vjp vjp, bool is_view = true) {
  if (autograd::needs_grad({&t})) autograd::record(name, {t}, {out}, std::move(vjp))->is_view = is_view;
  if (is_view) set_view_base(out, t);
  return out;
}

// The gradient of a view that picks some of t's elements: zeros shaped like t, with
// the gradient written where the view looks (PyTorch's slice/select/as_strided
// backward). `view_of` applies the same view to a tensor shaped like t; it is the
// VJP of this op in turn, so create_graph works.
using ViewFn = std::function<TensorPtr(const TensorPtr&)>;

TensorPtr scatter_into_zeros(const TensorPtr& g, const TensorSpec& input, const ViewFn& view_of) {
  TensorPtr zeros = TensorImpl::full(input.shape, Scalar(int64_t(0)), g->dtype(), g->device());
  {
    autograd::GradModeGuard no_grad(false);
    view_of(zeros)->copy_from(*g);
  }
  if (autograd::needs_grad({&g}))
    autograd::record("ViewScatterBackward0", {g}, {zeros}, [view_of](const Node&, const Grads& gg) {
      return Grads{view_of(gg[0])};
    });
  return zeros;
}

TensorPtr recorded_pick(const char* name, const TensorPtr& t, TensorPtr out, ViewFn view_of) {
  TensorSpec spec = TensorSpec::of(*t);
  return recorded(name, t, std::move(out), [spec, view_of](const Node&, const Grads& g) {
    return Grads{scatter_into_zeros(g[0], spec, view_of)};
  });
}

// VJP of the views that keep every element and only change the shape.
Vjp reshape_back(const TensorPtr& t) {
  Shape shape = t->shape();
  return [shape](const Node&, const Grads& g) { return Grads{reshape(g[0], shape)}; };
}

// Whether a view of `size` and element strides `stride` reaches some element twice:
// walking its dims from the smallest stride, each must step past everything the dims
// inside it span (a stride of 0 never does).
bool overlaps(const Shape& size, const Shape& stride) {
  std::vector<size_t> dims;
  for (size_t i = 0; i < size.size(); ++i)
    if (size[i] > 1) dims.push_back(i);
  std::sort(dims.begin(), dims.end(), [&](size_t a, size_t b) { return stride[a] < stride[b]; });
  int64_t span = 1;  // elements the dims so far cover, from the first to one past the last
  for (size_t d : dims) {
    if (stride[d] < span) return true;
    span += stride[d] * (size[d] - 1);
  }
  return false;
}

// The gradient of an as_strided view whose elements overlap, for a contiguous t: each
// element's gradient added at its position in t (index_add), so that an entry several
// windows share gets the sum, as PyTorch's as_strided backward.
TensorPtr as_strided_overlap_grad(const TensorPtr& g, const Shape& t_shape, const Shape& size, const Shape& stride,
                                  int64_t rel) {
  const Device device = g->device();
  // pos[i0, i1, ...] = rel + sum_k i_k * stride_k: where each element of the view lies in t
  TensorPtr pos = TensorImpl::full({}, Scalar(rel), Dtype::I64, device);
  for (size_t k = 0; k < size.size(); ++k) {
    Shape along(size.size(), 1);
    along[k] = size[k];
    pos = add(pos, reshape(mul(arange_int(0, size[k], 1, Dtype::I64, device), Scalar(stride[k])), along));
  }
  TensorPtr flat = TensorImpl::full({numel_of(t_shape)}, Scalar(int64_t(0)), g->dtype(), device);
  TensorPtr at = reshape(contiguous(pos), {-1});
  return reshape(index_add(flat, 0, at, reshape(contiguous(g), {-1}), Scalar(int64_t(1))), t_shape);
}

}  // namespace

Shape infer_size(const Shape& shape, int64_t numel) {
  Shape out = shape;
  int64_t known = 1;
  std::optional<size_t> infer;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] == -1) {
      LUCID_CHECK(!infer, RuntimeError, "only one dimension can be inferred");
      infer = i;
    } else {
      LUCID_CHECK(shape[i] >= 0, RuntimeError, "invalid shape dimension ", shape[i]);
      known *= shape[i];
    }
  }
  bool ok = infer ? (known != 0 && numel % known == 0) : known == numel;
  if (infer && known == 0)
    fail<RuntimeError>("cannot reshape tensor of 0 elements into shape ", shape_str(shape),
                       " because the unspecified dimension size -1 can be any value and is ambiguous");
  LUCID_CHECK(ok, RuntimeError, "shape '", shape_str(shape), "' is invalid for input of size ", numel);
  if (infer) out[*infer] = numel / known;
  return out;
}

// The strides that let `t` be viewed as `shape` without copying, if any. This is
// PyTorch's computeStride: walk the old dims in chunks that are contiguous with
// each other and match them against the new dims.
static std::optional<Stride> view_strides(const TensorImpl& t, const Shape& shape) {
  const Shape& old = t.shape();
  const Stride& os = t.stride();
  Stride out(shape.size());
  // No elements, or a single one (a 0-d tensor): any shape of that numel is a view.
  if (t.numel() <= 1) return contiguous_strides(shape, int64_t(t.itemsize()));
  int64_t view_d = int64_t(shape.size()) - 1;
  int64_t chunk_base = os.empty() ? int64_t(t.itemsize()) : os.back();
  int64_t tensor_numel = 1, view_numel = 1;
  for (int64_t d = int64_t(old.size()) - 1; d >= 0; --d) {
    tensor_numel *= old[d];
    if (d == 0 || (old[d - 1] != 1 && os[d - 1] != tensor_numel * chunk_base)) {
      while (view_d >= 0 && (view_numel < tensor_numel || shape[view_d] == 1)) {
        out[view_d] = view_numel * chunk_base;
        view_numel *= shape[view_d];
        --view_d;
      }
      if (view_numel != tensor_numel) return std::nullopt;
      if (d > 0) {
        chunk_base = os[d - 1];
        tensor_numel = 1;
        view_numel = 1;
      }
    }
  }
  if (view_d != -1) return std::nullopt;
  return out;
}

TensorPtr view(const TensorPtr& t, const Shape& shape) {
  Shape s = infer_size(shape, t->numel());
  auto st = view_strides(*t, s);
  LUCID_CHECK(st, RuntimeError,
              "view size is not compatible with input tensor's size and stride (at least one "
              "dimension spans across two contiguous subspaces). Use .reshape(...) instead.");
  return recorded("ViewBackward0", t, restride(t, std::move(s), std::move(*st), t->storage_offset()), reshape_back(t));
}

TensorPtr reshape(const TensorPtr& t, const Shape& shape) {
  Shape s = infer_size(shape, t->numel());
  if (auto st = view_strides(*t, s))
    return recorded("ViewBackward0", t, restride(t, std::move(s), std::move(*st), t->storage_offset()),
                    reshape_back(t));
  TensorPtr copy = t->clone();
  return recorded("UnsafeViewBackward0", t, restride(copy, s, contiguous_strides(s, int64_t(t->itemsize())), 0),
                  reshape_back(t), false);
}

TensorPtr permute(const TensorPtr& t, const std::vector<int64_t>& dims) {
  int64_t nd = t->ndim();
  LUCID_CHECK(int64_t(dims.size()) == nd, RuntimeError,
              "permute(sparse_coo): number of dimensions in the tensor input does not match the "
              "length of the desired ordering of dimensions i.e. input.dim() = ", nd,
              " is not equal to len(dims) = ", dims.size());
  Shape shape(nd);
  Stride stride(nd);
  std::vector<bool> seen(nd, false);
  for (int64_t i = 0; i < nd; ++i) {
    int64_t d = wrap_dim(dims[i], nd);
    LUCID_CHECK(!seen[d], RuntimeError, "permute(): duplicate dims are not allowed.");
    seen[d] = true;
    shape[i] = t->shape()[d];
    stride[i] = t->stride()[d];
  }
  std::vector<int64_t> inverse(nd);
  for (int64_t i = 0; i < nd; ++i) inverse[wrap_dim(dims[i], nd)] = i;
  return recorded("PermuteBackward0", t, restride(t, std::move(shape), std::move(stride), t->storage_offset()),
                  [inverse](const Node&, const Grads& g) { return Grads{permute(g[0], inverse)}; });
}

TensorPtr transpose(const TensorPtr& t, int64_t dim0, int64_t dim1) {
  int64_t nd = t->ndim();
  dim0 = wrap_dim(dim0, nd);
  dim1 = wrap_dim(dim1, nd);
  Shape shape = t->shape();
  Stride stride = t->stride();
  if (nd > 0) {
    std::swap(shape[dim0], shape[dim1]);
    std::swap(stride[dim0], stride[dim1]);
  }
  return recorded("TransposeBackward0", t, restride(t, std::move(shape), std::move(stride), t->storage_offset()),
                  [dim0, dim1](const Node&, const Grads& g) { return Grads{transpose(g[0], dim0, dim1)}; });
}

TensorPtr expand(const TensorPtr& t, const Shape& sizes) {
  int64_t nd = t->ndim(), nn = int64_t(sizes.size());
  LUCID_CHECK(nn >= nd, RuntimeError, "expand(", shape_str(t->shape()), ", size=", shape_str(sizes),
              "): the number of sizes provided (", nn,
              ") must be greater or equal to the number of dimensions in the tensor (", nd, ")");
  Shape shape(nn);
  Stride stride(nn);
  for (int64_t i = nn - 1; i >= 0; --i) {
    int64_t j = i - (nn - nd);
    int64_t want = sizes[i];
    if (j >= 0) {
      int64_t have = t->shape()[j];
      if (want == -1) want = have;
      LUCID_CHECK(have == want || have == 1, RuntimeError, "The expanded size of the tensor (", want,
                  ") must match the existing size (", have, ") at non-singleton dimension ", i,
                  ".  Target sizes: ", shape_str(sizes), ".  Tensor sizes: ", shape_str(t->shape()));
      shape[i] = want;
      stride[i] = have == want ? t->stride()[j] : 0;
    } else {
      LUCID_CHECK(want >= 0, RuntimeError, "The expanded size of the tensor (", want,
                  ") isn't allowed in a leading, non-existing dimension ", i);
      shape[i] = want;
      stride[i] = 0;
    }
  }
  // The engine sums a gradient down to its input's shape: nothing to do here.
  return recorded("ExpandBackward0", t, restride(t, std::move(shape), std::move(stride), t->storage_offset()),
                  [](const Node&, const Grads& g) { return Grads{g[0]}; });
}

TensorPtr squeeze(const TensorPtr& t, const std::vector<int64_t>& dims) {
  int64_t nd = t->ndim();
  std::vector<bool> drop(nd, false);
  if (dims.empty()) {
    for (int64_t d = 0; d < nd; ++d) drop[d] = t->shape()[d] == 1;
  } else {
    for (int64_t d : dims) {
      int64_t w = wrap_dim(d, nd);
      if (nd > 0 && t->shape()[w] == 1) drop[w] = true;  // non-1 dims are left alone, as PyTorch
    }
  }
  Shape shape;
  Stride stride;
  for (int64_t d = 0; d < nd; ++d) {
    if (drop[d]) continue;
    shape.push_back(t->shape()[d]);
    stride.push_back(t->stride()[d]);
  }
  return recorded(dims.empty() ? "SqueezeBackward0" : "SqueezeBackward1", t,
                  restride(t, std::move(shape), std::move(stride), t->storage_offset()), reshape_back(t));
}

TensorPtr unsqueeze(const TensorPtr& t, int64_t dim) {
  int64_t nd = t->ndim();
  dim = wrap_dim(dim, nd + 1);
  Shape shape = t->shape();
  Stride stride = t->stride();
  int64_t st = dim < nd ? shape[dim] * stride[dim] : int64_t(t->itemsize());
  shape.insert(shape.begin() + dim, 1);
  stride.insert(stride.begin() + dim, st);
  return recorded("UnsqueezeBackward0", t, restride(t, std::move(shape), std::move(stride), t->storage_offset()),
                  reshape_back(t));
}

TensorPtr flatten(const TensorPtr& t, int64_t start_dim, int64_t end_dim) {
  int64_t nd = t->ndim();
  start_dim = wrap_dim(start_dim, nd);
  end_dim = wrap_dim(end_dim, nd);
  LUCID_CHECK(start_dim <= end_dim, RuntimeError,
              "flatten() has invalid args: start_dim cannot come after end_dim");
  if (nd == 0) return reshape(t, {1});
  Shape shape(t->shape().begin(), t->shape().begin() + start_dim);
  int64_t n = 1;
  for (int64_t d = start_dim; d <= end_dim; ++d) n *= t->shape()[d];
  shape.push_back(n);
  shape.insert(shape.end(), t->shape().begin() + end_dim + 1, t->shape().end());
  return reshape(t, shape);
}

TensorPtr unflatten(const TensorPtr& t, int64_t dim, const Shape& sizes) {
  int64_t nd = t->ndim();
  dim = wrap_dim(dim, nd);
  LUCID_CHECK(!sizes.empty(), RuntimeError, "unflatten: sizes must be non-empty");
  Shape inner = infer_size(sizes, nd ? t->shape()[dim] : 1);
  Shape shape(t->shape().begin(), t->shape().begin() + dim);
  shape.insert(shape.end(), inner.begin(), inner.end());
  if (nd) shape.insert(shape.end(), t->shape().begin() + dim + 1, t->shape().end());
  return view(t, shape);
}

TensorPtr slice(const TensorPtr& t, int64_t dim, std::optional<int64_t> start,
                std::optional<int64_t> stop, int64_t step) {
  LUCID_CHECK(t->ndim() > 0, IndexError, "slice() cannot be applied to a 0-dim tensor.");
  dim = wrap_dim(dim, t->ndim());
  LUCID_CHECK(step > 0, ValueError, "step must be greater than zero");
  int64_t n = t->shape()[dim];
  auto clamp = [n](std::optional<int64_t> v, int64_t dflt) {
    if (!v) return dflt;
    int64_t x = *v < 0 ? *v + n : *v;
    return std::clamp<int64_t>(x, 0, n);
  };
  int64_t b = clamp(start, 0), e = clamp(stop, n);
  int64_t len = e > b ? 1 + (e - b - 1) / step : 0;  // (no e - b + step - 1: step may be near 2^63)
  Shape shape = t->shape();
  Stride stride = t->stride();
  shape[dim] = len;
  int64_t offset = t->storage_offset() + b * stride[dim];  // kept for empty slices, as PyTorch
  // A step whose stride overflows can only leave one element: its stride is unused.
  if (__builtin_mul_overflow(stride[dim], step, &stride[dim])) stride[dim] = t->stride()[dim];
  return recorded_pick("SliceBackward0", t, restride(t, std::move(shape), std::move(stride), offset),
                       [dim, b, e, step](const TensorPtr& x) { return slice(x, dim, b, e, step); });
}

TensorPtr narrow(const TensorPtr& t, int64_t dim, int64_t start, int64_t length) {
  LUCID_CHECK(t->ndim() > 0, RuntimeError, "narrow() cannot be applied to a 0-dim tensor.");
  dim = wrap_dim(dim, t->ndim());
  int64_t n = t->shape()[dim];
  LUCID_CHECK(start >= -n && start <= n, IndexError, "start out of range (expected to be in range of [",
              -n, ", ", n, "], but got ", start, ")");
  if (start < 0) start += n;
  LUCID_CHECK(length >= 0 && start <= n - length, RuntimeError, "start (", start, ") + length (",
              length, ") exceeds dimension size (", n, ").");
  return slice(t, dim, start, start + length, 1);
}

TensorPtr select(const TensorPtr& t, int64_t dim, int64_t index) {
  LUCID_CHECK(t->ndim() > 0, IndexError, "select() cannot be applied to a 0-dim tensor.");
  dim = wrap_dim(dim, t->ndim());
  int64_t n = t->shape()[dim];
  LUCID_CHECK(index >= -n && index < n, IndexError, "index ", index,
              " is out of bounds for dimension ", dim, " with size ", n);
  if (index < 0) index += n;
  Shape shape = t->shape();
  Stride stride = t->stride();
  int64_t offset = t->storage_offset() + index * stride[dim];
  shape.erase(shape.begin() + dim);
  stride.erase(stride.begin() + dim);
  return recorded_pick("SelectBackward0", t, restride(t, std::move(shape), std::move(stride), offset),
                       [dim, index](const TensorPtr& x) { return select(x, dim, index); });
}

TensorPtr as_strided(const TensorPtr& t, const Shape& size, const Shape& stride,
                     std::optional<int64_t> storage_offset) {
  LUCID_CHECK(size.size() == stride.size(), RuntimeError, "mismatch in length of strides and shape");
  int64_t item = int64_t(t->itemsize());
  Stride bytes(stride.size());
  for (size_t i = 0; i < stride.size(); ++i) {
    LUCID_CHECK(stride[i] >= 0, RuntimeError, "as_strided: Negative strides are not supported at the "
                "moment, got strides: ", shape_str(stride));
    LUCID_CHECK(!__builtin_mul_overflow(stride[i], item, &bytes[i]), RuntimeError,
                "as_strided: stride ", stride[i], " overflows when counted in bytes");
  }
  int64_t offset = t->storage_offset();
  if (storage_offset)
    LUCID_CHECK(!__builtin_mul_overflow(*storage_offset, item, &offset), RuntimeError,
                "as_strided: storage offset ", *storage_offset, " overflows when counted in bytes");
  LUCID_CHECK(offset >= 0, RuntimeError, "Tensor: invalid storage offset ", offset / item);
  TensorPtr out = restride(t, size, std::move(bytes), offset);
  if (!autograd::needs_grad({&t})) {
    set_root_base(out, t);
    return out;
  }
  // The gradient lands in a zero buffer laid out like t's storage, then is read
  // back through t's own geometry; where the view's elements overlap, each adds its
  // gradient at its position instead.
  LUCID_CHECK(t->is_contiguous(), NotImplementedError, "as_strided backward is only supported on a contiguous "
              "input for now; call .contiguous() first");
  int64_t base = t->storage_offset() / item;
  int64_t rel = (storage_offset ? *storage_offset : base) - base;
  if (overlaps(size, stride)) {
    Shape t_shape = t->shape();
    return recorded("AsStridedBackward0", t, std::move(out), [t_shape, size, stride, rel](const Node&, const Grads& g) {
      return Grads{as_strided_overlap_grad(g[0], t_shape, size, stride, rel)};
    });
  }
  return recorded_pick("AsStridedBackward0", t, std::move(out), [size, stride, rel](const TensorPtr& x) {
    return as_strided(x, size, stride, x->storage_offset() / int64_t(x->itemsize()) + rel);
  });
}

TensorPtr contiguous(const TensorPtr& t) {
  if (t->is_contiguous()) return t;
  TensorPtr out = t->clone();
  if (autograd::needs_grad({&t}))
    autograd::record("CloneBackward0", {t}, {out}, [](const Node&, const Grads& g) { return Grads{g[0]}; });
  return out;
}

TensorPtr view_as_real(const TensorPtr& t) {
  LUCID_CHECK(is_complex(t->dtype()), RuntimeError, "view_as_real is only supported for complex tensors, got ",
              dtype_name(t->dtype()));
  const Dtype part = t->dtype() == Dtype::C128 ? Dtype::F64 : Dtype::F32;
  Shape shape = t->shape();
  Stride stride = t->stride();
  shape.push_back(2);
  stride.push_back(int64_t(dtype_size(part)));
  TensorPtr out = TensorImpl::view_of(*t, std::move(shape), std::move(stride), t->storage_offset(), part);
  return recorded("ViewAsRealBackward0", t, out, [](const Node&, const Grads& g) {
    return Grads{view_as_complex(contiguous(g[0]))};
  });
}

TensorPtr view_as_complex(const TensorPtr& t) {
  LUCID_CHECK(t->dtype() == Dtype::F32 || t->dtype() == Dtype::F64, RuntimeError,
              "view_as_complex is only supported for float and double tensors, but got a tensor of scalar type: ",
              dtype_name(t->dtype()));
  LUCID_CHECK(t->ndim() >= 1 && t->shape().back() == 2, RuntimeError,
              "Tensor must have a last dimension of size 2");
  const int64_t item = int64_t(t->itemsize());
  LUCID_CHECK(t->stride().back() == item, RuntimeError, "Tensor must have a last dimension with stride 1");
  for (int64_t i = 0; i + 1 < t->ndim(); ++i)
    LUCID_CHECK(t->stride()[size_t(i)] % (2 * item) == 0 || t->shape()[size_t(i)] == 1, RuntimeError,
                "Tensor must have a stride divisible by 2 for all but last dimension");
  LUCID_CHECK(t->storage_offset() % (2 * item) == 0, RuntimeError, "Tensor must have a storage_offset divisible by 2");
  Shape shape(t->shape().begin(), t->shape().end() - 1);
  Stride stride(t->stride().begin(), t->stride().end() - 1);
  TensorPtr out = TensorImpl::view_of(*t, std::move(shape), std::move(stride), t->storage_offset(),
                                      t->dtype() == Dtype::F64 ? Dtype::C128 : Dtype::C64);
  return recorded("ViewAsComplexBackward0", t, out, [](const Node&, const Grads& g) {
    return Grads{view_as_real(g[0])};
  });
}

TensorPtr view_dtype(const TensorPtr& t, Dtype dtype) {
  const int64_t from = int64_t(t->itemsize()), to = int64_t(dtype_size(dtype));
  // (no base, no autograd base: torch's x.view(dtype)._base is None)
  if (from == to) return TensorImpl::view_of(*t, t->shape(), t->stride(), t->storage_offset(), dtype);
  const std::string what = str_cat(" to view ", dtype_name(t->dtype()), " as ", dtype_name(dtype),
                                   " (different element sizes)");
  LUCID_CHECK(t->ndim() > 0, RuntimeError, "self.dim() cannot be 0", what);
  LUCID_CHECK(t->stride().back() == from, RuntimeError, "self.stride(-1) must be 1", what, ", but got ",
              t->stride().back() / from);
  Shape shape = t->shape();
  Stride stride = t->stride();
  if (to > from) {
    const int64_t ratio = to / from;
    LUCID_CHECK(shape.back() % ratio == 0, RuntimeError, "self.size(-1) must be divisible by ", ratio, what,
                ", but got ", shape.back());
    LUCID_CHECK(t->storage_offset() % to == 0, RuntimeError, "self.storage_offset() must be divisible by ", ratio,
                what, ", but got ", t->storage_offset() / from);
    for (int64_t i = 0; i + 1 < t->ndim(); ++i)
      LUCID_CHECK(shape[size_t(i)] == 1 || stride[size_t(i)] % to == 0, RuntimeError, "self.stride(", i,
                  ") must be divisible by ", ratio, what, ", but got ", stride[size_t(i)] / from);
    shape.back() /= ratio;
  } else {
    shape.back() *= from / to;
  }
  stride.back() = to;
  return TensorImpl::view_of(*t, std::move(shape), std::move(stride), t->storage_offset(), dtype);
}

}  // namespace lucid::ops
