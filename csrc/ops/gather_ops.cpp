#include "ops/require_cpu.h"
#include "ops/gather_ops.h"

#include <cstring>

#include "autograd/record.h"
#include "backend/cpu/gather_scatter.h"
#include "ops/elementwise.h"
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
  require_cpu(op, index);
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

cpu::ScatterReduce parse_reduce(const std::string& reduce) {
  if (reduce.empty()) return cpu::ScatterReduce::Assign;
  if (reduce == "add") return cpu::ScatterReduce::Add;
  if (reduce == "multiply") return cpu::ScatterReduce::Multiply;
  fail<RuntimeError>("reduce argument must be either add or multiply, got ", reduce);
}

// scatter's forward: a contiguous copy of self with src (a tensor of self's dtype
// or a broadcast value) written at the indexed places.
TensorPtr scatter_into_copy(const char* op, const TensorPtr& t, int64_t& dim, TensorPtr& index,
                            const TensorPtr& src, bool src_is_tensor, cpu::ScatterReduce mode) {
  require_cpu(op, t);
  index = index64(index, op);
  dim = wrap_dim(dim, t->ndim());
  if (src_is_tensor)
    LUCID_CHECK(src->dtype() == t->dtype(), RuntimeError, op, "(): Expected self.dtype to be equal to src.dtype");
  check_shapes(op, t, dim, index, src_is_tensor ? &src : nullptr);
  TensorPtr out = t->clone();
  if (index->numel() == 0) return out;
  TensorPtr i1 = at_least_1d(index);
  TensorPtr s1 = src_is_tensor ? at_least_1d(src)
                               : TensorImpl::view_of(*src, i1->shape(), Stride(size_t(i1->ndim()), 0), src->storage_offset());
  cpu::scatter(*at_least_1d(out), dim, *i1, *s1, mode);
  return out;
}

TensorPtr zeros_of(const TensorSpec& s, Dtype dtype) {
  return TensorImpl::full(s.shape, Scalar(int64_t(0)), dtype, s.device);
}

}  // namespace

TensorPtr gather(const TensorPtr& t, int64_t dim, const TensorPtr& index_in) {
  require_cpu("gather", t);
  TensorPtr index = index64(index_in, "gather");
  dim = wrap_dim(dim, t->ndim());
  check_shapes("gather", t, dim, index, nullptr);
  TensorPtr out = TensorImpl::empty(index->shape(), t->dtype(), t->device());
  if (index->numel() > 0) cpu::gather(*at_least_1d(out), *at_least_1d(t), *at_least_1d(index), dim);
  if (autograd::needs_grad({&t})) {
    TensorSpec spec = TensorSpec::of(*t);
    auto node = autograd::record("GatherBackward0", {t}, {out}, [spec, dim](const Node& n, const Grads& g) {
      return Grads{scatter_add(zeros_of(spec, g[0]->dtype()), dim, n.saved(0), g[0])};
    });
    node->save(index);
  }
  return out;
}

TensorPtr scatter(const TensorPtr& t, int64_t dim, const TensorPtr& index_in, const TensorPtr& src,
                  const std::string& reduce) {
  TensorPtr index = index_in;
  cpu::ScatterReduce mode = parse_reduce(reduce);
  TensorPtr out = scatter_into_copy("scatter", t, dim, index, src, true, mode);
  if (autograd::needs_grad({&t, &src})) {
    TensorSpec sspec = TensorSpec::of(*src);
    auto node = autograd::record(mode == cpu::ScatterReduce::Assign ? "ScatterBackward0" : "ScatterReduceBackward0",
                                 {t, src, nullptr}, {out}, [dim, sspec, mode](const Node& n, const Grads& g) {
      LUCID_CHECK(mode == cpu::ScatterReduce::Assign, RuntimeError,
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
  cpu::ScatterReduce mode = parse_reduce(reduce);
  TensorPtr v = TensorImpl::full({}, value, t->dtype(), t->device());
  TensorPtr out = scatter_into_copy("scatter", t, dim, index, v, false, mode);
  if (autograd::needs_grad({&t})) {
    auto node = autograd::record(mode == cpu::ScatterReduce::Assign ? "ScatterBackward1" : "ScatterReduceBackward1",
                                 {t}, {out}, [dim, mode](const Node& n, const Grads& g) {
      LUCID_CHECK(mode == cpu::ScatterReduce::Assign, RuntimeError,
                  "the derivative for 'scatter' with reduce= is not implemented");
      return Grads{scatter(g[0], dim, n.saved(0), Scalar(int64_t(0)))};
    });
    node->save(index);
  }
  return out;
}

TensorPtr scatter_add(const TensorPtr& t, int64_t dim, const TensorPtr& index_in, const TensorPtr& src) {
  TensorPtr index = index_in;
  TensorPtr out = scatter_into_copy("scatter_add", t, dim, index, src, true, cpu::ScatterReduce::Add);
  if (autograd::needs_grad({&t, &src})) {
    TensorSpec sspec = TensorSpec::of(*src);
    auto node = autograd::record("ScatterAddBackward0", {t, src}, {out}, [dim, sspec](const Node& n, const Grads& g) {
      return Grads{g[0], src_grad(g[0], dim, n.saved(0), sspec)};
    });
    node->save(index);
  }
  return out;
}

namespace {

// index_select/index_add's index: a vector (or 0-d) of int64/int32, each entry in
// [0, size). Returned as a contiguous int64 vector.
TensorPtr vector_index(const char* op, const TensorPtr& index, int64_t size) {
  LUCID_CHECK(index->ndim() <= 1, IndexError, op, "(): Index is supposed to be a vector");
  LUCID_CHECK(index->dtype() == Dtype::I64 || index->dtype() == Dtype::I32, RuntimeError, op,
              "(): Expected dtype int32 or int64 for index");
  require_cpu(op, index);
  TensorPtr idx = index->clone(Dtype::I64);
  idx = TensorImpl::view_of(*idx, {idx->numel()}, {8}, 0);
  const std::byte* p = idx->host_ptr();
  for (int64_t k = 0; k < idx->numel(); ++k) {
    int64_t i;
    std::memcpy(&i, p + 8 * k, 8);
    LUCID_CHECK(i >= 0 && i < size, IndexError, "index out of range in self");
  }
  return idx;
}

// The 1-d index viewed along `dim` and broadcast over `shape` (stride 0 elsewhere),
// so that gather/scatter do index_select/index_add's work.
TensorPtr index_along(const TensorPtr& idx, int64_t dim, const Shape& shape) {
  Stride st(shape.size(), 0);
  st[dim] = 8;
  return TensorImpl::view_of(*idx, shape, st, idx->storage_offset());
}

}  // namespace

TensorPtr index_select(const TensorPtr& t, int64_t dim, const TensorPtr& index) {
  require_cpu("index_select", t);
  dim = wrap_dim(dim, t->ndim());
  TensorPtr t1 = at_least_1d(t);
  TensorPtr idx = vector_index("index_select", index, t1->shape()[dim]);
  LUCID_CHECK(t->ndim() > 0 || idx->numel() == 1, RuntimeError, "index_select(): Index to scalar can have only 1 "
              "value, got ", idx->numel(), " value(s)");
  Shape shape = t1->shape();
  shape[dim] = idx->numel();
  TensorPtr out = TensorImpl::empty(shape, t->dtype(), t->device());
  if (out->numel() > 0) {
    // Whole slices when the selected dim is outermost (contiguous slices), else gather.
    if (out->numel() / idx->numel() >= 64 && dim == 0)
      cpu::index_select_slices(*out, *t1, reinterpret_cast<const int64_t*>(idx->host_ptr()), dim);
    else
      cpu::gather(*out, *t1, *index_along(idx, dim, shape), dim);
  }
  if (t->ndim() == 0) out = TensorImpl::view_of(*out, {}, {}, 0);  // a scalar's one value, as PyTorch
  if (autograd::needs_grad({&t})) {
    TensorSpec spec = TensorSpec::of(*t);
    auto node = autograd::record("IndexSelectBackward0", {t}, {out}, [spec, dim](const Node& n, const Grads& g) {
      return Grads{index_add(zeros_of(spec, g[0]->dtype()), dim, n.saved(0), g[0], Scalar(int64_t(1)))};
    });
    node->save(idx);
  }
  return out;
}

TensorPtr index_add(const TensorPtr& t, int64_t dim, const TensorPtr& index, const TensorPtr& source,
                    const Scalar& alpha) {
  require_cpu("index_add", t);
  dim = wrap_dim(dim, t->ndim());
  TensorPtr t1 = at_least_1d(t), s1 = at_least_1d(source);
  TensorPtr idx = vector_index("index_add", index, t1->shape()[dim]);
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
  TensorPtr out = t->clone();
  if (s1->numel() > 0) {
    TensorPtr scaled = s1;
    if (!unit) {
      autograd::GradModeGuard no_grad(false);
      scaled = binary(BinaryOp::Mul, {s1, {}}, {nullptr, alpha})->clone(t->dtype());
    }
    cpu::scatter(*at_least_1d(out), dim, *index_along(idx, dim, s1->shape()), *scaled, cpu::ScatterReduce::Add);
  }
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

TensorPtr masked_fill(const TensorPtr& t, const TensorPtr& mask, const TensorPtr& value) {
  require_cpu("masked_fill", t);
  LUCID_CHECK(mask->dtype() == Dtype::Bool, RuntimeError, "masked_fill_ only supports boolean masks, but got mask "
              "with dtype ", dtype_name(mask->dtype()));
  LUCID_CHECK(value->ndim() == 0, RuntimeError, "masked_fill_ only supports a 0-dimensional value tensor, but got "
              "tensor with ", value->ndim(), " dimension(s).");
  require_cpu("masked_fill", mask);
  Shape shape = broadcast_shapes(t->shape(), mask->shape());
  TensorPtr out = TensorImpl::empty(shape, t->dtype(), t->device());
  out->copy_from(*t);
  TensorPtr v = value->clone(t->dtype());
  {
    autograd::GradModeGuard no_grad(false);
    cpu::masked_fill(*out, *expand(mask, shape), *v);
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
