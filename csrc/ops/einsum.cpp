// einsum and tensordot, reduced to views, sums and the batched product primitive
// (PyTorch's own strategy: operands are contracted pairwise, left to right, each pair
// as one bmm after a permute + reshape).
#include <algorithm>
#include <array>

#include "autograd/record.h"
#include "ops/elementwise.h"
#include "ops/linalg.h"
#include "ops/reduce.h"
#include "ops/views.h"

namespace lucid::ops {

namespace {

using autograd::Grads;

constexpr int kLetters = 52;
constexpr int kEllipsis = -1;

// 'A'..'Z' are labels 0..25 and 'a'..'z' 26..51, so implicit outputs list upper case
// first, as PyTorch does.
int label_of(char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return 26 + (c - 'a');
  return -2;
}
char label_char(int l) { return l < 26 ? char('A' + l) : char('a' + l - 26); }

// Parses one side of the equation ("ij...k") into labels with kEllipsis for "...".
std::vector<int> parse_term(const std::string& eq, size_t begin, size_t end, const std::string& what) {
  std::vector<int> term;
  bool ellipsis = false;
  for (size_t i = begin; i < end; ++i) {
    char c = eq[i];
    if (c == ' ') continue;
    if (c == '.') {
      LUCID_CHECK(i + 2 < end && eq[i + 1] == '.' && eq[i + 2] == '.', RuntimeError, "einsum(): found '.' for ",
                  what, " that is not part of any ellipsis");
      LUCID_CHECK(!ellipsis, RuntimeError, "einsum(): found more than one ellipsis for ", what);
      ellipsis = true;
      term.push_back(kEllipsis);
      i += 2;
      continue;
    }
    int l = label_of(c);
    LUCID_CHECK(l >= 0, RuntimeError, "einsum(): invalid subscript given at index ", i,
                " in the equation string, subscripts must be in [a-zA-Z]");
    term.push_back(l);
  }
  return term;
}

// The diagonal of dims d1 < d2 (equal sizes), kept at d1: a view whose stride is the
// sum of both. Its VJP writes the gradient onto the diagonal of zeros, and the VJP of
// that is this view again, so double backward works.
TensorPtr take_diagonal(const TensorPtr& t, int64_t d1, int64_t d2) {
  Shape shape = t->shape();
  Stride stride = t->stride();
  stride[d1] += stride[d2];
  shape.erase(shape.begin() + d2);
  stride.erase(stride.begin() + d2);
  TensorPtr out = TensorImpl::view_of(*t, shape, stride, t->storage_offset());
  if (autograd::needs_grad({&t})) {
    Shape in_shape = t->shape();
    auto node = autograd::record("DiagonalBackward0", {t}, {out}, [in_shape, d1, d2](const Node&, const Grads& g) {
      TensorPtr zeros = TensorImpl::full(in_shape, Scalar(int64_t(0)), g[0]->dtype(), g[0]->device());
      {
        autograd::GradModeGuard no_grad(false);
        take_diagonal(zeros, d1, d2)->copy_from(*g[0]);
      }
      if (autograd::needs_grad({&g[0]}))
        autograd::record("DiagonalBackwardBackward0", {g[0]}, {zeros}, [d1, d2](const Node&, const Grads& gg) {
          return Grads{take_diagonal(gg[0], d1, d2)};
        });
      return Grads{zeros};
    });
    node->is_view = true;
  }
  return out;
}

// One pairwise step: a and b have the same number of dims (one per label, size 1
// where an operand lacks the label); `summed` marks the labels contracted here. The
// result has the same dims, summed ones of size 1.
TensorPtr sum_product_pair(TensorPtr a, TensorPtr b, const std::vector<bool>& summed) {
  const int64_t nd = a->ndim();
  std::vector<int64_t> batch, lo, ro, sum, rest;
  for (int64_t d = 0; d < nd; ++d) {
    const int64_t sa = a->shape()[d], sb = b->shape()[d];
    if (summed[d]) {
      if (sa != 1 && sb != 1) {
        sum.push_back(d);
        continue;
      }
      // Only one side has it: sum it there first (keeping the dtype, as a product would).
      if (sa != 1) a = ops::sum(a, {d}, true, a->dtype());
      if (sb != 1) b = ops::sum(b, {d}, true, b->dtype());
      rest.push_back(d);
    } else if (sa != 1 && sb != 1) {
      batch.push_back(d);
    } else if (sa != 1) {
      lo.push_back(d);
    } else if (sb != 1) {
      ro.push_back(d);
    } else {
      rest.push_back(d);
    }
  }
  auto size_of = [](const TensorPtr& t, const std::vector<int64_t>& dims) {
    int64_t s = 1;
    for (int64_t d : dims) s *= t->shape()[d];
    return s;
  };
  const int64_t bs = size_of(a, batch), ls = size_of(a, lo), ks = size_of(a, sum), rs = size_of(b, ro);
  auto cat = [](std::initializer_list<const std::vector<int64_t>*> parts) {
    std::vector<int64_t> r;
    for (auto* p : parts) r.insert(r.end(), p->begin(), p->end());
    return r;
  };
  TensorPtr a3 = reshape(permute(a, cat({&batch, &lo, &sum, &ro, &rest})), {bs, ls, ks});
  TensorPtr b3 = reshape(permute(b, cat({&batch, &sum, &ro, &lo, &rest})), {bs, ks, rs});
  TensorPtr c = batched_product(a3, b3);  // [bs, ls, rs]
  // Back to one dim per label: the product's dims, then size-1 ones for the rest.
  std::vector<int64_t> order = cat({&batch, &lo, &ro, &sum, &rest});
  Shape shape;
  for (int64_t d : batch) shape.push_back(a->shape()[d]);
  for (int64_t d : lo) shape.push_back(a->shape()[d]);
  for (int64_t d : ro) shape.push_back(b->shape()[d]);
  shape.resize(size_t(nd), 1);
  std::vector<int64_t> inverse(static_cast<size_t>(nd));
  for (int64_t i = 0; i < nd; ++i) inverse[size_t(order[size_t(i)])] = i;
  return permute(reshape(c, shape), inverse);
}

}  // namespace

TensorPtr einsum(const std::string& eq, const std::vector<TensorPtr>& operands) {
  LUCID_CHECK(!operands.empty(), RuntimeError, "einsum(): must provide at least one operand");
  const size_t arrow = eq.find("->");
  const size_t lhs_end = arrow == std::string::npos ? eq.size() : arrow;
  std::vector<std::vector<int>> terms;
  for (size_t begin = 0;;) {
    size_t comma = eq.find(',', begin);
    size_t end = std::min(comma, lhs_end);
    LUCID_CHECK(terms.size() < operands.size(), RuntimeError,
                "einsum(): more operands were provided than specified in the equation");
    terms.push_back(parse_term(eq, begin, end, "operand " + std::to_string(terms.size())));
    if (comma == std::string::npos || comma > lhs_end) break;
    begin = comma + 1;
  }
  LUCID_CHECK(terms.size() == operands.size(), RuntimeError,
              terms.size() < operands.size() ? "einsum(): more operands were provided than specified in the equation"
                                             : "einsum(): fewer operands were provided than specified in the equation");

  // Each operand's dims as global ids: ellipsis dims right-aligned in [0, max_ell),
  // letters at max_ell + label.
  int64_t max_ell = 0;
  std::vector<int64_t> ell_dims(operands.size(), 0);
  std::array<int, kLetters> count{};
  for (size_t i = 0; i < terms.size(); ++i) {
    const int64_t nd = operands[i]->ndim();
    int64_t letters = 0;
    bool has_ell = false;
    for (int l : terms[i]) {
      if (l == kEllipsis) {
        has_ell = true;
      } else {
        ++count[size_t(l)];
        ++letters;
      }
    }
    if (has_ell) {
      LUCID_CHECK(letters <= nd, RuntimeError, "einsum(): the number of subscripts in the equation (", letters,
                  ") is more than the number of dimensions (", nd, ") for operand ", i);
      ell_dims[i] = nd - letters;
      max_ell = std::max(max_ell, ell_dims[i]);
    } else {
      LUCID_CHECK(letters == nd, RuntimeError, "einsum(): the number of subscripts in the equation (", letters,
                  ") does not match the number of dimensions (", nd, ") for operand ", i,
                  " and no ellipsis was given");
    }
  }
  const int64_t n_ids = max_ell + kLetters;

  std::vector<int64_t> out_ids;
  if (arrow != std::string::npos) {
    std::vector<int> out_term = parse_term(eq, arrow + 2, eq.size(), "the output");
    std::vector<bool> seen(size_t(kLetters), false);
    for (int l : out_term) {
      if (l == kEllipsis) {
        for (int64_t e = 0; e < max_ell; ++e) out_ids.push_back(e);
        continue;
      }
      LUCID_CHECK(!seen[size_t(l)], RuntimeError, "einsum(): output subscript ", label_char(l),
                  " appears more than once in the output");
      LUCID_CHECK(count[size_t(l)] > 0, RuntimeError, "einsum(): output subscript ", label_char(l),
                  " does not appear in the equation for any input operand");
      seen[size_t(l)] = true;
      out_ids.push_back(max_ell + l);
    }
  } else {
    for (int64_t e = 0; e < max_ell; ++e) out_ids.push_back(e);
    for (int l = 0; l < kLetters; ++l)
      if (count[size_t(l)] == 1) out_ids.push_back(max_ell + l);
  }

  // The ids in use, in order, and each one's position among them.
  std::vector<bool> used(size_t(n_ids), false);
  for (int64_t e = 0; e < max_ell; ++e) used[size_t(e)] = true;
  for (int l = 0; l < kLetters; ++l) used[size_t(max_ell + l)] = count[size_t(l)] > 0;
  std::vector<int64_t> pos(size_t(n_ids), -1);
  int64_t n_used = 0;
  for (int64_t id = 0; id < n_ids; ++id)
    if (used[size_t(id)]) pos[size_t(id)] = n_used++;

  // Each operand: diagonals for repeated labels, then one dim per used id (size 1
  // where absent), in id order. Sizes must agree or be 1 (broadcast).
  std::vector<int64_t> size(size_t(n_used), 1);
  std::vector<TensorPtr> aligned;
  std::vector<std::vector<bool>> present;  // which ids each operand has
  for (size_t i = 0; i < operands.size(); ++i) {
    TensorPtr t = operands[i];
    std::vector<int64_t> ids;
    for (int l : terms[i]) {
      if (l == kEllipsis)
        for (int64_t e = 0; e < ell_dims[i]; ++e) ids.push_back(max_ell - ell_dims[i] + e);
      else
        ids.push_back(max_ell + l);
    }
    for (size_t d2 = 0; d2 < ids.size(); ++d2) {
      auto first = std::find(ids.begin(), ids.begin() + int64_t(d2), ids[d2]);
      if (first == ids.begin() + int64_t(d2)) continue;
      const int64_t d1 = first - ids.begin();
      LUCID_CHECK(t->shape()[d1] == t->shape()[int64_t(d2)], RuntimeError, "einsum(): subscript ",
                  label_char(int(ids[d2] - max_ell)), " is repeated for operand ", i,
                  " but the sizes don't match, ", t->shape()[d1], " != ", t->shape()[int64_t(d2)]);
      t = take_diagonal(t, d1, int64_t(d2));
      ids.erase(ids.begin() + int64_t(d2));
      --d2;
    }
    std::vector<int64_t> order(ids.size());
    for (size_t d = 0; d < ids.size(); ++d) order[d] = int64_t(d);
    std::sort(order.begin(), order.end(), [&](int64_t x, int64_t y) { return ids[size_t(x)] < ids[size_t(y)]; });
    t = permute(t, order);
    Shape shape(size_t(n_used), 1);
    std::vector<bool> has(size_t(n_used), false);
    for (size_t d = 0; d < order.size(); ++d) {
      const int64_t id = ids[size_t(order[d])], p = pos[size_t(id)];
      const int64_t s = t->shape()[int64_t(d)];
      shape[size_t(p)] = s;
      has[size_t(p)] = true;
      if (s != 1) {
        LUCID_CHECK(size[size_t(p)] == 1 || size[size_t(p)] == s, RuntimeError,
                    id < max_ell ? std::string("einsum(): operands do not broadcast with remapped shapes")
                                 : str_cat("einsum(): subscript ", label_char(int(id - max_ell)), " has size ", s,
                                           " for operand ", i, " which does not broadcast with previously seen size ",
                                           size[size_t(p)]));
        size[size_t(p)] = s;
      }
    }
    aligned.push_back(reshape(t, shape));
    present.push_back(std::move(has));
  }

  std::vector<bool> in_output(size_t(n_used), false);
  for (int64_t id : out_ids) in_output[size_t(pos[size_t(id)])] = true;

  TensorPtr result = aligned[0];
  for (size_t i = 1; i < aligned.size(); ++i) {
    // Contract the ids no later operand and not the output needs.
    std::vector<bool> summed(size_t(n_used), false);
    for (int64_t p = 0; p < n_used; ++p) {
      bool later = false;
      for (size_t j = i + 1; j < aligned.size(); ++j) later = later || present[j][size_t(p)];
      summed[size_t(p)] = !in_output[size_t(p)] && !later;
    }
    result = sum_product_pair(result, aligned[i], summed);
  }
  // A single operand: sum what the output drops (PyTorch's sum, so integers give int64).
  std::vector<int64_t> drop;
  for (int64_t p = 0; p < n_used; ++p)
    if (!in_output[size_t(p)] && result->shape()[p] != 1) drop.push_back(p);
  if (!drop.empty()) result = ops::sum(result, drop, true, std::nullopt);

  // Output order, then drop the size-1 placeholders of the other ids.
  std::vector<int64_t> order;
  Shape out_shape;
  for (int64_t id : out_ids) {
    order.push_back(pos[size_t(id)]);
    out_shape.push_back(result->shape()[pos[size_t(id)]]);
  }
  for (int64_t p = 0; p < n_used; ++p)
    if (!in_output[size_t(p)]) order.push_back(p);
  result = permute(result, order);
  return result->shape() == out_shape ? result : reshape(result, out_shape);
}

TensorPtr tensordot(const TensorPtr& a, const TensorPtr& b, const std::vector<int64_t>& dims_a,
                    const std::vector<int64_t>& dims_b) {
  LUCID_CHECK(dims_a.size() == dims_b.size(), RuntimeError, "both dimension lists should have same length");
  LUCID_CHECK(a->dtype() == b->dtype(), RuntimeError, "both inputs should have same dtype");
  std::vector<bool> ca(size_t(a->ndim()), false), cb(size_t(b->ndim()), false);
  std::vector<int64_t> contract_a, contract_b;
  int64_t k = 1;
  for (size_t i = 0; i < dims_a.size(); ++i) {
    const int64_t da = wrap_dim(dims_a[i], a->ndim()), db = wrap_dim(dims_b[i], b->ndim());
    LUCID_CHECK(a->shape()[da] == b->shape()[db], RuntimeError, "contracted dimensions need to match, but first has size ",
                a->shape()[da], " in dim ", da, " and second has size ", b->shape()[db], " in dim ", db);
    LUCID_CHECK(!ca[size_t(da)] && !cb[size_t(db)], RuntimeError, "dim ", ca[size_t(da)] ? da : db,
                " appears multiple times in the list of dims");
    ca[size_t(da)] = cb[size_t(db)] = true;
    contract_a.push_back(da);
    contract_b.push_back(db);
    k *= a->shape()[da];
  }
  std::vector<int64_t> perm_a, perm_b = contract_b;
  Shape out_shape;
  int64_t fa = 1, fb = 1;
  for (int64_t d = 0; d < a->ndim(); ++d)
    if (!ca[size_t(d)]) perm_a.push_back(d), out_shape.push_back(a->shape()[d]), fa *= a->shape()[d];
  perm_a.insert(perm_a.end(), contract_a.begin(), contract_a.end());
  for (int64_t d = 0; d < b->ndim(); ++d)
    if (!cb[size_t(d)]) perm_b.push_back(d), out_shape.push_back(b->shape()[d]), fb *= b->shape()[d];
  TensorPtr a2 = reshape(permute(a, perm_a), {fa, k});
  TensorPtr b2 = reshape(permute(b, perm_b), {k, fb});
  return reshape(mm(a2, b2), out_shape);
}

TensorPtr tensordot(const TensorPtr& a, const TensorPtr& b, int64_t dims) {
  LUCID_CHECK(dims >= 0, RuntimeError, "tensordot expects dims >= 0, but got dims=", dims);
  LUCID_CHECK(dims <= a->ndim() && dims <= b->ndim(), RuntimeError, "tensordot expects dims < ndim_a or ndim_b, but got dims=",
              dims);
  std::vector<int64_t> da, db;
  for (int64_t i = 0; i < dims; ++i) {
    da.push_back(a->ndim() - dims + i);
    db.push_back(i);
  }
  return tensordot(a, b, da, db);
}

}  // namespace lucid::ops
