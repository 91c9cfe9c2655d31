#include "ops/gather_ops.h"

#include "autograd/record.h"
#include "ops/elementwise.h"
#include "ops/prims/index.h"
#include "ops/reduce.h"
#include "ops/shape_ops.h"
#include "ops/views.h"

namespace lucid::ops {

using autograd::Grads;

namespace {

// gather/scatter take int64 or int32 indices (PyTorch 2.x); an int32 index is
// widened once here so that the kernels read one index type.
TensorPtr index64(const TensorPtr& index, const char* op) {
  LUCID_CHECK(index->dtype() == Dtype::I64 || index->dtype() == Dtype::I32, RuntimeError, op,
              "(): Expected dtype int32/int64 for index, got ", dtype_name(index->dtype()));
  return index->dtype() == Dtype::I64 ? index : index->clone(Dtype::I64);
}

// 0-d tensors take part as 1-d tensors of one element (PyTorch's ensure_nonempty_dim).
TensorPtr at_least_1d(const TensorPtr& t) {
  if (t->ndim() > 0) return t;
  return TensorImpl::view_of(*t, {1}, {int64_t(t->itemsize())}, t->storage_offset());
}


// PyTorch's gather_shape_check / scatter_shape_check: same number of dims, and the
// index no larger than self (apart from dim) and than src (everywhere).
void check_shapes(const char* op, const TensorPtr& self, int64_t dim, const TensorPtr& index, const TensorPtr* src) {
  const TensorPtr s1 = at_least_1d(self), i1 = at_least_1d(index);
  if (index->numel() == 0) return;
  LUCID_CHECK(i1->ndim() == s1->ndim(), RuntimeError, op, "(): Index tensor must have the same number of dimensions as ",
              src ? "self tensor" : "input tensor");
  for (int64_t d = 0; d < i1->ndim(); ++d) {
    LUCID_CHECK(d == dim || i1->shape()[d] <= s1->shape()[d], RuntimeError, "Size does not match at dimension ", d,
                " expected index ", shape_str(index->shape()), " to be no larger than self ", shape_str(self->shape()),
                " apart from dimension ", dim);
    if (src) {
      TensorPtr r1 = at_least_1d(*src);
      LUCID_CHECK(r1->ndim() == i1->ndim(), RuntimeError, "Index tensor must have the same number of dimensions as "
                  "src tensor");
      LUCID_CHECK(i1->shape()[d] <= r1->shape()[d], RuntimeError, "Expected index ", shape_str(index->shape()),
                  " to be no larger than src ", shape_str((*src)->shape()), " apart from dimension ", dim);
    }
  }
}

// The gradient of src in scatter/scatter_add: g at the scattered positions, padded
// with zeros where src is larger than index (those elements were never read).
TensorPtr src_grad(const TensorPtr& g, int64_t dim, const TensorPtr& index, const TensorSpec& src) {
  TensorPtr picked = gather(g, dim, index);
  if (picked->shape() == src.shape) return picked;
  Shape ishape = index->shape();
  return embed_into_zeros(picked, src, [ishape](const TensorPtr& x) {
    TensorPtr v = x;
    for (size_t d = 0; d < ishape.size(); ++d) v = narrow(v, int64_t(d), 0, ishape[d]);
    return v;
  });
}

// (amax / amin: scatter_reduce's, python/lucid/_scatter_reduce.py; scatter's own
// reduce= takes add and multiply only, checked in Python)
ScatterReduce parse_reduce(const std::string& reduce) {
  if (reduce.empty()) return ScatterReduce::Assign;
  if (reduce == "add") return ScatterReduce::Add;
  if (reduce == "multiply") return ScatterReduce::Multiply;
  if (reduce == "amax") return ScatterReduce::Maximum;
  if (reduce == "amin") return ScatterReduce::Minimum;
  fail<RuntimeError>("reduce argument must be either add or multiply, got ", reduce);
}

// A number converted to `dtype` as fill() converts it (RuntimeError when it does not fit).
Scalar checked_number(const Scalar& value, Dtype dtype) {
  return TensorImpl::full({}, value, dtype, Device::cpu())->item();
}

// scatter's forward: a contiguous copy of self with src (a tensor of self's dtype,
// or the number `value` already of self's dtype) written at the indexed places.
// (scratch: t is the caller's own new tensor (a gradient's zeros), written in place
// instead of copied first)
TensorPtr scatter_into_copy(const char* op, const TensorPtr& t, int64_t& dim, TensorPtr& index,
                            const TensorPtr& src, const std::optional<Scalar>& value, ScatterReduce mode,
                            bool scratch = false) {
  index = index64(index, op);
  dim = wrap_dim(dim, t->ndim());
  if (src)
    LUCID_CHECK(src->dtype() == t->dtype(), RuntimeError, op, "(): Expected self.dtype to be equal to src.dtype");
  check_shapes(op, t, dim, index, src ? &src : nullptr);
  TensorPtr out = scratch ? t : t->clone();
  if (index->numel() == 0) return out;
  Scatter p;
  p.dim = dim;
  p.reduce = mode;
  p.value = value;
  TensorPtr out1 = at_least_1d(out), i1 = at_least_1d(index);
  if (src) launch(p, {out1.get()}, {i1.get(), at_least_1d(src).get()});
  else launch(p, {out1.get()}, {i1.get()});
  return out;
}

TensorPtr scatter_add_impl(const TensorPtr& t, int64_t dim, const TensorPtr& index, const TensorPtr& src, bool scratch);
TensorPtr index_add_impl(const TensorPtr& t, int64_t dim, const TensorPtr& index, const TensorPtr& source,
                         const Scalar& alpha, bool scratch);

TensorPtr zeros_of(const TensorSpec& s, Dtype dtype) {
  return TensorImpl::full(s.shape, Scalar(int64_t(0)), dtype, s.device);
}

}  // namespace

TensorPtr gather(const TensorPtr& t, int64_t dim, const TensorPtr& index_in) {
  TensorPtr index = index64(index_in, "gather");
  dim = wrap_dim(dim, t->ndim());
  check_shapes("gather", t, dim, index, nullptr);
  TensorPtr out = TensorImpl::empty(index->shape(), t->dtype(), t->device());
  if (index->numel() > 0) {
    Gather p;
    p.dim = dim;
    launch(p, {at_least_1d(out).get()}, {at_least_1d(t).get(), at_least_1d(index).get()});
  }
  if (autograd::needs_grad({&t})) {
    TensorSpec spec = TensorSpec::of(*t);
    auto node = autograd::record("GatherBackward0", {t}, {out}, [spec, dim](const Node& n, const Grads& g) {
      // (the zeros are this gradient's own: added into in place, not copied first)
      return Grads{scatter_add_impl(zeros_of(spec, g[0]->dtype()), dim, n.saved(0), g[0], true)};
    });
    node->save(index);
  }
  return out;
}

TensorPtr scatter(const TensorPtr& t, int64_t dim, const TensorPtr& index_in, const TensorPtr& src,
                  const std::string& reduce) {
  TensorPtr index = index_in;
  ScatterReduce mode = parse_reduce(reduce);
  TensorPtr out = scatter_into_copy("scatter", t, dim, index, src, std::nullopt, mode);
  if (autograd::needs_grad({&t, &src})) {
    TensorSpec sspec = TensorSpec::of(*src);
    auto node = autograd::record(mode == ScatterReduce::Assign ? "ScatterBackward0" : "ScatterReduceBackward0",
                                 {t, src, nullptr}, {out}, [dim, sspec, mode](const Node& n, const Grads& g) {
      LUCID_CHECK(mode == ScatterReduce::Assign, RuntimeError,
                  "the derivative for 'scatter' with reduce= is not implemented");
      TensorPtr index = n.saved(0);
      return Grads{scatter(g[0], dim, index, Scalar(int64_t(0))), src_grad(g[0], dim, index, sspec), nullptr};
    });
    node->save(index);
  }
  return out;
}

TensorPtr scatter(const TensorPtr& t, int64_t dim, const TensorPtr& index_in, const Scalar& value,
                  const std::string& reduce) {
  TensorPtr index = index_in;
  ScatterReduce mode = parse_reduce(reduce);
  Scalar v = checked_number(value, t->dtype());
  TensorPtr out = scatter_into_copy("scatter", t, dim, index, nullptr, v, mode);
  if (autograd::needs_grad({&t})) {
    auto node = autograd::record(mode == ScatterReduce::Assign ? "ScatterBackward1" : "ScatterReduceBackward1",
                                 {t}, {out}, [dim, mode](const Node& n, const Grads& g) {
      LUCID_CHECK(mode == ScatterReduce::Assign, RuntimeError,
                  "the derivative for 'scatter' with reduce= is not implemented");
      return Grads{scatter(g[0], dim, n.saved(0), Scalar(int64_t(0)))};
    });
    node->save(index);
  }
  return out;
}

namespace {

TensorPtr scatter_add_impl(const TensorPtr& t, int64_t dim, const TensorPtr& index_in, const TensorPtr& src,
                           bool scratch) {
  TensorPtr index = index_in;
  TensorPtr out = scatter_into_copy("scatter_add", t, dim, index, src, std::nullopt, ScatterReduce::Add, scratch);
  if (autograd::needs_grad({&t, &src})) {
    TensorSpec sspec = TensorSpec::of(*src);
    auto node = autograd::record("ScatterAddBackward0", {t, src}, {out}, [dim, sspec](const Node& n, const Grads& g) {
      return Grads{g[0], src_grad(g[0], dim, n.saved(0), sspec)};
    });
    node->save(index);
  }
  return out;
}

}  // namespace

TensorPtr scatter_add(const TensorPtr& t, int64_t dim, const TensorPtr& index, const TensorPtr& src) {
  return scatter_add_impl(t, dim, index, src, false);
}

namespace {

// index_select/index_add's index: a vector (or 0-d) of int64/int32, returned as a
// contiguous int64 vector. The kernels check that each entry lies in [0, size).
TensorPtr vector_index(const char* op, const TensorPtr& index) {
  LUCID_CHECK(index->ndim() <= 1, IndexError, op, "(): Index is supposed to be a vector");
  LUCID_CHECK(index->dtype() == Dtype::I64 || index->dtype() == Dtype::I32, RuntimeError, op,
              "(): Expected dtype int32 or int64 for index");
  TensorPtr idx = index->clone(Dtype::I64);
  return TensorImpl::view_of(*idx, {idx->numel()}, {8}, 0);
}

}  // namespace

TensorPtr index_select(const TensorPtr& t, int64_t dim, const TensorPtr& index) {
  dim = wrap_dim(dim, t->ndim());
  TensorPtr t1 = at_least_1d(t);
  TensorPtr idx = vector_index("index_select", index);
  LUCID_CHECK(t->ndim() > 0 || idx->numel() == 1, RuntimeError, "index_select(): Index to scalar can have only 1 "
              "value, got ", idx->numel(), " value(s)");
  Shape shape = t1->shape();
  shape[dim] = idx->numel();
  TensorPtr out = TensorImpl::empty(shape, t->dtype(), t->device());
  IndexSelect p;
  p.dim = dim;
  launch(p, {out.get()}, {t1.get(), idx.get()});
  if (t->ndim() == 0) out = TensorImpl::view_of(*out, {}, {}, 0);  // a scalar's one value, as PyTorch
  if (autograd::needs_grad({&t})) {
    TensorSpec spec = TensorSpec::of(*t);
    auto node = autograd::record("IndexSelectBackward0", {t}, {out}, [spec, dim](const Node& n, const Grads& g) {
      // (the zeros are this gradient's own: added into in place, not copied first)
      return Grads{index_add_impl(zeros_of(spec, g[0]->dtype()), dim, n.saved(0), g[0], Scalar(int64_t(1)), true)};
    });
    node->save(idx);
  }
  return out;
}

namespace {

TensorPtr index_add_impl(const TensorPtr& t, int64_t dim, const TensorPtr& index, const TensorPtr& source,
                         const Scalar& alpha, bool scratch) {
  dim = wrap_dim(dim, t->ndim());
  TensorPtr t1 = at_least_1d(t), s1 = at_least_1d(source);
  TensorPtr idx = vector_index("index_add", index);
  LUCID_CHECK(source->dtype() == t->dtype(), RuntimeError, "index_add_(): self (", dtype_name(t->dtype()),
              ") and source (", dtype_name(source->dtype()), ") must have the same scalar type");
  LUCID_CHECK(s1->ndim() == t1->ndim(), RuntimeError, "index_add_(): source and self must have the same number of "
              "dimensions");
  LUCID_CHECK(s1->shape()[dim] == idx->numel(), RuntimeError, "index_add_(): Number of indices (", idx->numel(),
              ") should be equal to source.size(dim) (", s1->shape()[dim], ")");
  for (int64_t d = 0; d < t1->ndim(); ++d)
    LUCID_CHECK(d == dim || s1->shape()[d] == t1->shape()[d], RuntimeError, "index_add_(): source ",
                shape_str(source->shape()), " and self ", shape_str(t->shape()), " must match apart from dimension ", dim);
  bool unit = std::visit([](auto a) { return a == decltype(a)(1); }, alpha);
  TensorPtr out = scratch ? t : t->clone();
  TensorPtr scaled = s1;
  if (!unit && s1->numel() > 0) {
    autograd::GradModeGuard no_grad(false);
    scaled = binary(BinaryOp::Mul, {s1, {}}, {nullptr, alpha})->clone(t->dtype());
  }
  IndexAdd p;
  p.dim = dim;
  launch(p, {at_least_1d(out).get()}, {idx.get(), scaled.get()});
  if (autograd::needs_grad({&t, &source})) {
    auto node = autograd::record("IndexAddBackward0", {t, nullptr, source}, {out},
                                 [dim, alpha, unit](const Node& n, const Grads& g) {
      TensorPtr gs = index_select(g[0], dim, n.saved(0));
      return Grads{g[0], nullptr, unit ? gs : mul(gs, alpha)};
    });
    node->save(idx);
  }
  return out;
}

}  // namespace

TensorPtr index_add(const TensorPtr& t, int64_t dim, const TensorPtr& index, const TensorPtr& source,
                    const Scalar& alpha) {
  return index_add_impl(t, dim, index, source, alpha, false);
}

TensorPtr masked_fill(const TensorPtr& t, const TensorPtr& mask, const TensorPtr& value) {
  LUCID_CHECK(mask->dtype() == Dtype::Bool, RuntimeError, "masked_fill_ only supports boolean masks, but got mask "
              "with dtype ", dtype_name(mask->dtype()));
  LUCID_CHECK(value->ndim() == 0, RuntimeError, "masked_fill_ only supports a 0-dimensional value tensor, but got "
              "tensor with ", value->ndim(), " dimension(s).");
  Shape shape = broadcast_shapes(t->shape(), mask->shape());
  TensorPtr out = TensorImpl::empty(shape, t->dtype(), t->device());
  out->copy_from(*t);
  // The value is a parameter, read on the host (as PyTorch's masked_fill reads it
  // with item()): a 0-d CPU value may fill a tensor on any device.
  MaskedFill p;
  p.value = value->clone(t->dtype())->item();
  {
    autograd::GradModeGuard no_grad(false);
    launch(p, {out.get()}, {expand(mask, shape).get()});
  }
  if (autograd::needs_grad({&t, &value})) {
    auto node = autograd::record(value->requires_grad() ? "MaskedFillBackward1" : "MaskedFillBackward0",
                                 {t, nullptr, value}, {out}, [](const Node& n, const Grads& g) {
      TensorPtr m = n.saved(0);
      TensorPtr zero = TensorImpl::full({}, Scalar(int64_t(0)), g[0]->dtype(), g[0]->device());
      TensorPtr gv = sum(masked_fill(g[0], eq(m, Scalar(false)), zero), {}, false, std::nullopt);
      return Grads{masked_fill(g[0], m, zero), nullptr, gv};
    });
    node->save(mask);
  }
  return out;
}

TensorPtr masked_fill(const TensorPtr& t, const TensorPtr& mask, const Scalar& value) {
  return masked_fill(t, mask, scalar_tensor(value));
}

}  // namespace lucid::ops
