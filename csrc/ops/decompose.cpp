// The matrix decompositions (ops/decompose.h): operand checks, the column-major work
// copies the primitives factor in place, and the launches.
#include "ops/decompose.h"

#include <algorithm>

#include "core/error.h"
#include "ops/elementwise.h"
#include "ops/prims/decompose.h"
#include "ops/reduce_plan.h"
#include "ops/views.h"

namespace lucid::ops {

namespace {

int64_t rows(const TensorImpl& t) { return t.shape()[t.ndim() - 2]; }
int64_t cols(const TensorImpl& t) { return t.shape()[t.ndim() - 1]; }
Shape batch(const TensorImpl& t) { return Shape(t.shape().begin(), t.shape().end() - 2); }
Shape with(Shape s, std::initializer_list<int64_t> tail) {
  s.insert(s.end(), tail);
  return s;
}

void check_matrix(const char* op, const TensorPtr& a, bool square) {
  LUCID_CHECK(a->ndim() >= 2, RuntimeError, op, ": The input tensor A must have at least 2 dimensions.");
  const Dtype d = a->dtype();
  LUCID_CHECK(d == Dtype::F32 || d == Dtype::F64 || d == Dtype::C64 || d == Dtype::C128, RuntimeError, op,
              ": Expected a float32, float64, complex64 or complex128 tensor, got ", dtype_name(d));
  LUCID_CHECK(!square || rows(*a) == cols(*a), RuntimeError, op,
              ": A must be batches of square matrices, but they are ", rows(*a), " by ", cols(*a), " matrices");
}

// The primitives' layout of a batch + [r, c] (bytes): each matrix column-major, the
// batch dense (ops/prims/decompose.h).
Stride column_major_strides(const Shape& s, int64_t itemsize) {
  const int64_t r = int64_t(s.size());
  Stride st(s.size());
  st[r - 2] = itemsize;
  st[r - 1] = itemsize * std::max<int64_t>(1, s[r - 2]);
  int64_t step = st[r - 1] * std::max<int64_t>(1, s[r - 1]);
  for (int64_t i = r - 3; i >= 0; --i) {
    st[i] = step;
    step *= std::max<int64_t>(1, s[i]);
  }
  return st;
}

TensorPtr empty_column_major(const Shape& s, Dtype dtype, Device device) {
  return TensorImpl::empty_strided(s, column_major_strides(s, int64_t(dtype_size(dtype))), dtype, device);
}

// A fresh copy of `a` in that layout (the primitives factor their copies in place).
TensorPtr column_major(const TensorPtr& a) {
  TensorPtr out = empty_column_major(a->shape(), a->dtype(), a->device());
  out->copy_from(*a);
  return out;
}

// `a` itself when it is laid out so (an operand the primitive only reads: lu_factor's
// LU, say), else column_major(a).
TensorPtr column_major_input(const TensorPtr& a) {
  const Stride want = column_major_strides(a->shape(), int64_t(a->itemsize()));
  bool same = true;
  for (int64_t i = 0; same && i < a->ndim(); ++i) same = a->shape()[i] == 1 || a->stride()[i] == want[i];
  return same ? a : column_major(a);
}

// The dtype of a real-valued result (singular values, a Hermitian matrix's
// eigenvalues): float32 for complex64, float64 for complex128.
Dtype real_of(Dtype d) { return d == Dtype::C64 ? Dtype::F32 : d == Dtype::C128 ? Dtype::F64 : d; }

TensorPtr info_for(const TensorImpl& a) { return TensorImpl::empty(batch(a), Dtype::I32, a.device()); }

}  // namespace

std::vector<TensorPtr> lu_factor(const TensorPtr& a) {
  check_matrix("linalg.lu_factor", a, false);
  TensorPtr lu = column_major(a);
  TensorPtr pivots = TensorImpl::empty(with(batch(*a), {std::min(rows(*a), cols(*a))}), Dtype::I32, a->device());
  TensorPtr info = info_for(*a);
  launch(LuFactor{}, {lu.get(), pivots.get(), info.get()}, {});
  return {lu, pivots, info};
}

TensorPtr lu_solve(const TensorPtr& lu, const TensorPtr& pivots, const TensorPtr& b, bool adjoint) {
  const char* op = "linalg.lu_solve";
  check_matrix(op, lu, true);
  check_matrix(op, b, false);
  op_device(op, {lu.get(), pivots.get(), b.get()});
  LUCID_CHECK(b->dtype() == lu->dtype(), RuntimeError, op, ": Expected LU and B to have the same dtype, but found LU "
              "of type ", dtype_name(lu->dtype()), " and B of type ", dtype_name(b->dtype()), " instead");
  LUCID_CHECK(pivots->dtype() == Dtype::I32, RuntimeError, op, ": pivots must be int32, got ",
              dtype_name(pivots->dtype()));
  LUCID_CHECK(batch(*b) == batch(*lu) && rows(*b) == rows(*lu) && pivots->shape() == with(batch(*lu), {rows(*lu)}),
              RuntimeError, op, ": incompatible shapes: LU ", shape_str(lu->shape()), ", pivots ",
              shape_str(pivots->shape()), ", B ", shape_str(b->shape()));
  TensorPtr x = column_major(b);
  TensorPtr l = column_major_input(lu), p = contiguous_as(pivots, Dtype::I32);
  LuSolve prim;
  prim.adjoint = adjoint;
  launch(prim, {x.get()}, {l.get(), p.get()});
  return x;
}

std::vector<TensorPtr> cholesky(const TensorPtr& a) {
  check_matrix("linalg.cholesky", a, true);
  TensorPtr l = column_major(a), info = info_for(*a);
  launch(Cholesky{}, {l.get(), info.get()}, {});
  return {l, info};
}

TensorPtr solve_triangular(const TensorPtr& a, const TensorPtr& b, bool upper, bool left, bool unit,
                           bool transpose) {
  const char* op = "linalg.solve_triangular";
  check_matrix(op, a, true);
  check_matrix(op, b, false);
  op_device(op, {a.get(), b.get()});
  LUCID_CHECK(a->dtype() == b->dtype(), RuntimeError, op, ": Expected A and B to have the same dtype, got ",
              dtype_name(a->dtype()), " and ", dtype_name(b->dtype()));
  const int64_t along = left ? rows(*b) : cols(*b);
  LUCID_CHECK(batch(*a) == batch(*b) && along == rows(*a), RuntimeError, op, ": incompatible shapes ",
              shape_str(a->shape()), " and ", shape_str(b->shape()), " (left=", left ? "True" : "False", ")");
  TensorPtr x = column_major(b), am = column_major_input(a);
  TriangularSolve prim;
  prim.upper = upper, prim.left = left, prim.unit = unit, prim.transpose = transpose;
  launch(prim, {x.get()}, {am.get()});
  return x;
}

std::vector<TensorPtr> qr_factor(const TensorPtr& a) {
  check_matrix("linalg.qr", a, false);
  TensorPtr r = column_major(a);
  TensorPtr tau = TensorImpl::empty(with(batch(*a), {std::min(rows(*a), cols(*a))}), a->dtype(), a->device());
  launch(QrFactor{}, {r.get(), tau.get()}, {});
  return {r, tau};
}

TensorPtr householder_product(const TensorPtr& a, const TensorPtr& tau) {
  const char* op = "linalg.householder_product";
  check_matrix(op, a, false);
  op_device(op, {a.get(), tau.get()});
  LUCID_CHECK(rows(*a) >= cols(*a), RuntimeError, op,
              ": input.shape[-2] must be greater than or equal to input.shape[-1]");
  LUCID_CHECK(tau->ndim() == a->ndim() - 1 && Shape(tau->shape().begin(), tau->shape().end() - 1) == batch(*a),
              RuntimeError, op, ": Expected batch dimensions of tau to be equal to input.shape[:-2], got ",
              shape_str(tau->shape()), " for input ", shape_str(a->shape()));
  LUCID_CHECK(tau->shape().back() <= cols(*a), RuntimeError, op,
              ": input.shape[-1] must be greater than or equal to tau.shape[-1]");
  LUCID_CHECK(tau->dtype() == a->dtype(), RuntimeError, op, ": tau dtype ", dtype_name(tau->dtype()),
              " does not match input dtype ", dtype_name(a->dtype()));
  TensorPtr q = column_major(a), t = contiguous_as(tau, tau->dtype());
  launch(HouseholderProduct{}, {q.get()}, {t.get()});
  return q;
}

std::vector<TensorPtr> eigh(const TensorPtr& a, bool upper, bool vectors) {
  check_matrix("linalg.eigh", a, true);
  TensorPtr v = column_major(a), info = info_for(*a);
  TensorPtr w = TensorImpl::empty(with(batch(*a), {rows(*a)}), real_of(a->dtype()), a->device());
  Eigh prim;
  prim.upper = upper, prim.vectors = vectors;
  launch(prim, {v.get(), w.get(), info.get()}, {});
  return {w, vectors ? v : nullptr, info};
}

std::vector<TensorPtr> ldl_factor(const TensorPtr& a, bool hermitian) {
  check_matrix("linalg.ldl_factor", a, true);
  TensorPtr ld = column_major(a);
  TensorPtr pivots = TensorImpl::empty(with(batch(*a), {rows(*a)}), Dtype::I32, a->device());
  TensorPtr info = info_for(*a);
  LdlFactor prim;
  prim.hermitian = hermitian;
  launch(prim, {ld.get(), pivots.get(), info.get()}, {});
  return {ld, pivots, info};
}

void fail_bad_ldl_pivot(int64_t position, int64_t value, int64_t n) {
  fail<RuntimeError>("linalg.ldl_solve: pivots[", position, "] = ", value, " is not a pivot of ldl_factor for ", n,
                     " x ", n, " matrices (1 to ", n, ", or -1 to -", n, " twice in a row for a 2 x 2 block)");
}

TensorPtr ldl_solve(const TensorPtr& ld, const TensorPtr& pivots, const TensorPtr& b, bool hermitian) {
  const char* op = "linalg.ldl_solve";
  check_matrix(op, ld, true);
  check_matrix(op, b, false);
  op_device(op, {ld.get(), pivots.get(), b.get()});
  LUCID_CHECK(b->dtype() == ld->dtype(), RuntimeError, op, ": Expected LD and B to have the same dtype, but found LD "
              "of type ", dtype_name(ld->dtype()), " and B of type ", dtype_name(b->dtype()), " instead");
  LUCID_CHECK(pivots->dtype() == Dtype::I32, RuntimeError, op, ": Expected pivots to be integers. Got ",
              dtype_name(pivots->dtype()));
  LUCID_CHECK(batch(*b) == batch(*ld) && rows(*b) == rows(*ld) && pivots->shape() == with(batch(*ld), {rows(*ld)}),
              RuntimeError, op, ": incompatible shapes: LD ", shape_str(ld->shape()), ", pivots ",
              shape_str(pivots->shape()), ", B ", shape_str(b->shape()));
  TensorPtr x = column_major(b);
  TensorPtr l = column_major_input(ld), p = contiguous_as(pivots, Dtype::I32);
  LdlSolve prim;
  prim.hermitian = hermitian;
  launch(prim, {x.get()}, {l.get(), p.get()});
  return x;
}

std::vector<TensorPtr> eig(const TensorPtr& a, bool vectors) {
  check_matrix("linalg.eig", a, true);
  const int64_t n = rows(*a);
  TensorPtr work = column_major(a), info = info_for(*a);
  // (a real matrix's eigenvalues in LAPACK's packing, [re; im]; a complex one's as they are)
  const Shape w_shape = is_complex(a->dtype()) ? with(batch(*a), {n}) : with(batch(*a), {2, n});
  TensorPtr w = TensorImpl::empty(w_shape, a->dtype(), a->device());
  Eig prim;
  prim.vectors = vectors;
  if (!vectors) {
    launch(prim, {work.get(), w.get(), info.get()}, {});
    return {w, nullptr, info};
  }
  TensorPtr v = empty_column_major(a->shape(), a->dtype(), a->device());
  launch(prim, {work.get(), w.get(), info.get(), v.get()}, {});
  return {w, v, info};
}

std::vector<TensorPtr> svd(const TensorPtr& a, bool full, bool vectors) {
  check_matrix("linalg.svd", a, false);
  const int64_t m = rows(*a), n = cols(*a), k = std::min(m, n);
  TensorPtr work = column_major(a), info = info_for(*a);
  TensorPtr s = TensorImpl::empty(with(batch(*a), {k}), real_of(a->dtype()), a->device());
  Svd prim;
  prim.vectors = vectors, prim.full = full;
  if (!vectors) {
    launch(prim, {s.get(), info.get()}, {work.get()});
    return {nullptr, s, nullptr, info};
  }
  TensorPtr u = empty_column_major(with(batch(*a), {m, full ? m : k}), a->dtype(), a->device());
  TensorPtr vh = empty_column_major(with(batch(*a), {full ? n : k, n}), a->dtype(), a->device());
  launch(prim, {s.get(), info.get(), u.get(), vh.get()}, {work.get()});
  return {u, s, vh, info};
}

}  // namespace lucid::ops
