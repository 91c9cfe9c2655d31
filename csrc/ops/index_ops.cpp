#include "ops/index_ops.h"

#include <algorithm>
#include <string>
#include <vector>

#include "autograd/record.h"
#include "ops/copy_ops.h"
#include "ops/elementwise.h"
#include "ops/prims/index.h"

namespace lucid::ops {

namespace {

// t broadcast to `shape` (which it must broadcast to) as a view without history:
// the kernels read broadcast operands through stride-0 dimensions.
TensorPtr broadcast_view(const TensorPtr& t, const Shape& shape) {
  int64_t nn = int64_t(shape.size()), lead = nn - t->ndim();
  Stride stride(nn, 0);
  for (int64_t i = lead; i < nn; ++i)
    stride[i] = t->shape()[i - lead] == shape[i] ? t->stride()[i - lead] : 0;
  return TensorImpl::view_of(*t, shape, stride, t->storage_offset());
}

// Do a and b view the same storage? (In-place writes must not read what they write.)
bool same_storage(const TensorImpl& a, const TensorImpl& b) {
  return a.data_ptr() - a.storage_offset() == b.data_ptr() - b.storage_offset();
}

// The index list in its working form: one entry per dimension of self, each null or
// an int64 tensor on self's device (a CPU index may index a tensor on another device,
// as in PyTorch). Bool/uint8 masks become one column of their nonzero() per
// dimension they cover (PyTorch's expandTensors).
IndexList expand_indices(const TensorPtr& self, const IndexList& indices) {
  IndexList out;
  int64_t nd = self->ndim();
  for (const TensorPtr& given : indices) {
    if (!given) {
      out.push_back(nullptr);
      continue;
    }
    TensorPtr idx = given->device() == self->device() ? given : given->clone(std::nullopt, self->device());
    Dtype d = idx->dtype();
    if (d == Dtype::Bool || d == Dtype::U8) {
      int64_t k = idx->ndim(), start = int64_t(out.size());
      // A 0-d mask adds a dimension; t[True] / t[False] do that in the Python layer.
      LUCID_CHECK(k > 0, IndexError, "a 0-d bool index can only be used in t[...] (where it adds a dimension)");
      LUCID_CHECK(start + k <= nd, IndexError, "too many indices for tensor of dimension ", nd);
      for (int64_t j = 0; j < k; ++j)
        LUCID_CHECK(idx->shape()[j] == self->shape()[start + j], IndexError, "The shape of the mask ",
                    shape_str(idx->shape()), " at index ", j, " does not match the shape of the indexed tensor ",
                    shape_str(self->shape()), " at index ", start + j);
      TensorPtr nz = nonzero(idx);  // (N, k)
      for (int64_t j = 0; j < k; ++j)
        out.push_back(TensorImpl::view_of(*nz, {nz->shape()[0]}, {nz->stride()[0]},
                                          nz->storage_offset() + j * nz->stride()[1]));
    } else if (d == Dtype::I64) {
      out.push_back(idx);
    } else if (d == Dtype::I32) {
      out.push_back(idx->clone(Dtype::I64));
    } else {
      fail<IndexError>("tensors used as indices must be long, int, byte or bool tensors");
    }
  }
  LUCID_CHECK(int64_t(out.size()) <= nd, IndexError, "too many indices for tensor of dimension ", nd, " (got ",
              int64_t(out.size()), ")");
  out.resize(nd);
  return out;
}

// The index tensors broadcast together (IndexError when they do not).
Shape broadcast_indices(const IndexList& idx) {
  Shape b;
  bool ok = true;
  for (const TensorPtr& t : idx) {
    if (!t) continue;
    const Shape& s = t->shape();
    Shape r(std::max(b.size(), s.size()));
    for (size_t i = 0; i < r.size(); ++i) {
      int64_t x = i < r.size() - b.size() ? 1 : b[i - (r.size() - b.size())];
      int64_t y = i < r.size() - s.size() ? 1 : s[i - (r.size() - s.size())];
      ok = ok && (x == y || x == 1 || y == 1);
      r[i] = x == 1 ? y : x;
    }
    b = r;
  }
  if (!ok) {
    std::string shapes;
    for (const TensorPtr& t : idx)
      if (t) shapes += (shapes.empty() ? "" : ", ") + shape_str(t->shape());
    fail<IndexError>("shape mismatch: indexing tensors could not be broadcast together with shapes ", shapes);
  }
  return b;
}

// An index list ready for the kernels: the expanded indices (entry d indexes
// dimension d of self, or is null), the defined ones in order (the kernels' index
// operands) and the loop over them.
struct Prepared {
  IndexList idx;
  std::vector<const TensorImpl*> operands;
  IndexLoop loop;
};

// Whether the only index is a 1-d one on the first dim of a tensor with rows of at
// least 64 elements (x[idx] picking rows of a matrix, embeddings).
bool picks_rows(const TensorPtr& self, const IndexList& idx) {
  if (idx.empty() || !idx[0] || idx[0]->ndim() != 1 || self->ndim() < 2) return false;
  for (size_t d = 1; d < idx.size(); ++d)
    if (idx[d]) return false;
  return self->numel() / std::max<int64_t>(self->shape()[0], 1) >= 64;
}

// Note [Advanced index placement]: as in NumPy and PyTorch, the broadcast index
// shape B replaces the indexed dimensions where they are adjacent (x[:, i, j]
// keeps B in the middle) and goes first when other dimensions separate them
// (x[i, :, j] puts B in front).
Prepared prepare(const TensorPtr& self, const IndexList& indices) {
  Prepared p;
  p.idx = expand_indices(self, indices);
  int64_t nd = self->ndim();
  std::vector<int64_t> pos;
  for (int64_t d = 0; d < nd; ++d)
    if (p.idx[d]) pos.push_back(d);
  Shape b = broadcast_indices(p.idx);

  bool adjacent = pos.empty() || pos.back() - pos.front() + 1 == int64_t(pos.size());
  int64_t insert_at = adjacent && !pos.empty() ? pos.front() : 0;  // rest dims before B
  int64_t nb = int64_t(b.size());
  IndexLoop& plan = p.loop;
  int64_t rest = 0;
  auto push_rest = [&](int64_t d) {
    plan.shape.push_back(self->shape()[d]);
    plan.self_stride.push_back(self->stride()[d]);
  };
  std::vector<int64_t> rest_dims;
  for (int64_t d = 0; d < nd; ++d)
    if (!p.idx[d]) rest_dims.push_back(d);
  for (; rest < insert_at; ++rest) push_rest(rest_dims[rest]);
  for (int64_t i = 0; i < nb; ++i) {
    plan.shape.push_back(b[i]);
    plan.self_stride.push_back(0);
  }
  for (; rest < int64_t(rest_dims.size()); ++rest) push_rest(rest_dims[rest]);

  // The index tensors themselves are the operands: a broadcast view would start at
  // the same element, and its strides are in idx_stride.
  for (int64_t d : pos) {
    TensorPtr v = broadcast_view(p.idx[d], b);
    Stride s(plan.shape.size(), 0);
    for (int64_t i = 0; i < nb; ++i) s[insert_at + i] = v->stride()[i];
    p.operands.push_back(p.idx[d].get());
    plan.idx_stride.push_back(s);
    plan.dim.push_back(d);
    plan.dim_size.push_back(self->shape()[d]);
    plan.dim_stride.push_back(self->stride()[d]);
  }
  return p;
}

TensorPtr gather(const TensorPtr& self, const Prepared& p) {
  TensorPtr out = TensorImpl::empty(p.loop.shape, self->dtype(), self->device());
  Index prim;
  prim.loop = p.loop;
  prim.loop.whole_rows = picks_rows(self, p.idx);
  std::vector<const TensorImpl*> ins{self.get()};
  ins.insert(ins.end(), p.operands.begin(), p.operands.end());
  TensorImpl* outs[] = {out.get()};
  launch(prim, outs, ins);
  return out;
}

// Saves the defined indices into `node` for backward (their versions are checked
// when unpacked); slots[d] is the saved position of index d, or -1.
std::vector<int> save_indices(Node& node, const IndexList& idx) {
  std::vector<int> slots;
  for (const TensorPtr& t : idx) slots.push_back(t ? int(node.save(t)) : -1);
  return slots;
}

IndexList unpack_indices(const Node& node, const std::vector<int>& slots) {
  IndexList idx;
  for (int s : slots) idx.push_back(s < 0 ? nullptr : node.saved(size_t(s)));
  return idx;
}

TensorPtr zeros(const Shape& shape, const TensorPtr& like) {
  return TensorImpl::full(shape, int64_t(0), like->dtype(), like->device());
}

}  // namespace

TensorPtr index(const TensorPtr& self, const IndexList& indices) {
  Prepared p = prepare(self, indices);
  TensorPtr out = gather(self, p);
  if (autograd::needs_grad({&self})) {
    Shape shape = self->shape();
    auto node = autograd::record("IndexBackward0", {self}, {out}, nullptr);
    std::vector<int> slots = save_indices(*node, p.idx);
    // The gradient scatters back, summing where an element was read more than once.
    static_cast<FunctionNode&>(*node).set_vjp([shape, slots](const Node& n, const autograd::Grads& g) {
      return autograd::Grads{index_put_(zeros(shape, g[0]), unpack_indices(n, slots), g[0], true)};
    });
  }
  return out;
}

TensorPtr index_put_(const TensorPtr& self, const IndexList& indices, const TensorPtr& values, bool accumulate) {
  LUCID_CHECK(values->dtype() == self->dtype(), RuntimeError, "Index put requires the source and destination "
              "dtypes match, got ", dtype_name(self->dtype()), " for the destination and ",
              dtype_name(values->dtype()), " for the source.");
  check_inplace_target("index_put", self, values);
  // A view in a graph: compute the written tensor out of place (its history covers
  // self's old value and the values) and let the base record the write
  // (Note [In-place on views], ops/copy_ops.cpp).
  if (writes_through_view(self, values)) {
    write_inplace_result(self, index_put(self, indices, values, accumulate));
    return self;
  }
  // An index or value that shares self's memory is read while self is written: copy it first.
  IndexList safe = indices;
  for (TensorPtr& t : safe)
    if (t && same_storage(*t, *self)) t = t->clone();
  Prepared p = prepare(self, safe);
  const Shape& r = p.loop.shape;
  bool fits = values->ndim() <= int64_t(r.size());
  for (int64_t i = 0; fits && i < values->ndim(); ++i) {
    int64_t v = values->shape()[values->ndim() - 1 - i], want = r[r.size() - 1 - i];
    fits = v == want || v == 1;
  }
  LUCID_CHECK(fits, RuntimeError, "shape mismatch: value tensor of shape ", shape_str(values->shape()),
              " cannot be broadcast to indexing result of shape ", shape_str(r));
  TensorPtr src = same_storage(*values, *self) ? values->clone() : values;

  bool record = autograd::needs_grad({&self, &values});
  std::shared_ptr<Node> node;
  if (record) {  // built before the write: its edge to self is self's old history
    node = autograd::record("IndexPutBackward0", {self, values}, {}, nullptr);
    std::vector<int> slots = save_indices(*node, p.idx);
    // self's old values survive where nothing was written (or everywhere, when
    // accumulating); values get the gradient of the positions they went to.
    static_cast<FunctionNode&>(*node).set_vjp([slots, accumulate](const Node& n, const autograd::Grads& g) {
      IndexList idx = unpack_indices(n, slots);
      TensorPtr g_self, g_values;
      if (n.next_edges[0].valid())
        g_self = accumulate ? g[0] : index_put(g[0], idx, zeros({}, g[0]), false);
      if (n.next_edges[1].valid()) g_values = index(g[0], idx);
      return autograd::Grads{g_self, g_values};
    });
  }
  IndexPut put;
  put.loop = p.loop;
  put.accumulate = accumulate;
  TensorPtr values_r = broadcast_view(src, r);
  std::vector<const TensorImpl*> ins{values_r.get()};
  ins.insert(ins.end(), p.operands.begin(), p.operands.end());
  TensorImpl* outs[] = {self.get()};
  launch(put, outs, ins);
  self->bump_version();
  if (record) {
    node->outputs.push_back(TensorSpec::of(*self));
    autograd::set_history(self, node, 0);
    refresh_views(self);  // (Note [Views learn of writes])
  }
  return self;
}

TensorPtr index_put(const TensorPtr& self, const IndexList& indices, const TensorPtr& values, bool accumulate) {
  return index_put_(clone(self), indices, values, accumulate);
}

TensorPtr nonzero(const TensorPtr& t) {
  // The cast to bool (core/copy.cpp) decides what is nonzero for every dtype:
  // NaN is, -0.0 is not, a complex number is when either part is.
  TensorPtr flags = t->clone(Dtype::Bool);  // contiguous
  TensorPtr count = TensorImpl::empty({}, Dtype::I64, t->device());
  launch(CountNonzero{}, {count.get()}, {flags.get()});
  // The result's shape depends on the data: the count is read on the host (one sync
  // on an accelerator, as in PyTorch).
  TensorPtr out = TensorImpl::empty({std::get<int64_t>(count->item()), t->ndim()}, Dtype::I64, t->device());
  launch(Nonzero{}, {out.get()}, {flags.get()});
  return out;
}

TensorPtr masked_select(const TensorPtr& t, const TensorPtr& mask) {
  LUCID_CHECK(mask->dtype() == Dtype::Bool, RuntimeError, "masked_select: expected BoolTensor for mask");
  Shape b = broadcast_shapes(t->shape(), mask->shape());
  if (b.empty()) b = {1};  // a 0-d mask selects like a one-element one
  Prepared p = prepare(broadcast_view(t, b), {broadcast_view(mask, b)});
  TensorPtr out = gather(broadcast_view(t, b), p);
  if (autograd::needs_grad({&t})) {
    auto node = autograd::record("MaskedSelectBackward0", {t}, {out}, nullptr);
    size_t slot = node->save(mask);
    // Scatters the gradient into zeros of the broadcast shape; the engine sums it
    // down to t's shape where t was broadcast.
    static_cast<FunctionNode&>(*node).set_vjp([b, slot](const Node& n, const autograd::Grads& g) {
      TensorPtr m = broadcast_view(n.saved(slot), b);
      return autograd::Grads{index_put_(zeros(b, g[0]), {m}, g[0], true)};
    });
  }
  return out;
}

}  // namespace lucid::ops
