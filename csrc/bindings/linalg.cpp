// Matrix products (ops/linalg.h) as lucid.<op>(...) functions, Tensor methods and the
// @ operator, plus the CPU backend's thread count (lucid.get_num_threads /
// set_num_threads) and BLAS build (ops::cpu_settings).
#include <nanobind/stl/optional.h>
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "autograd/grad_mode.h"
#include "bindings/common.h"
#include "ops/decompose.h"
#include "ops/linalg.h"

namespace lucid::bindings {

namespace {

using Binary = TensorPtr (*)(const TensorPtr&, const TensorPtr&);
using Addmm = TensorPtr (*)(const TensorPtr&, const TensorPtr&, const TensorPtr&, const Scalar&, const Scalar&);

// out=: PyTorch's contract for ops with an out argument. The result is computed,
// then written into out (resized, as PyTorch resizes, when its shape differs); out
// must have the result's dtype, and no input may require grad.
nb::object with_out(const char* op, Binary fn, const TensorPtr& a, const TensorPtr& b, nb::handle out) {
  if (out.is_none()) return nb::cast(fn(a, b));
  LUCID_CHECK(is_tensor(out), TypeError, op, "(): argument 'out' must be Tensor, not ",
              type_name_of(out));
  LUCID_CHECK(!(autograd::grad_enabled() && (a->requires_grad() || b->requires_grad())), RuntimeError, op,
              "(): functions with out=... arguments don't support automatic differentiation, but one of the "
              "arguments requires grad.");
  TensorPtr dst = nb::cast<TensorPtr>(out);
  TensorPtr r = fn(a, b);
  LUCID_CHECK(dst->dtype() == r->dtype(), RuntimeError, "Expected out tensor to have dtype ", dtype_name(r->dtype()),
              ", but got ", dtype_name(dst->dtype()), " instead");
  LUCID_CHECK(dst->device() == r->device(), RuntimeError, op, "(): out is on ", dst->device().str(),
              " but the result is on ", r->device().str());
  if (dst->shape() == r->shape()) {
    dst->copy_from(*r);
  } else {
    dst->set_data(*r);  // PyTorch's resize of out: new storage of the right size
    dst->bump_version();
  }
  return nb::borrow(out);
}

Scalar coefficient(nb::handle h, const char* op, const char* arg) {
  PyObject* o = h.ptr();
  LUCID_CHECK(PyBool_Check(o) || PyLong_Check(o) || PyFloat_Check(o) || PyComplex_Check(o), TypeError, op,
              "(): argument '", arg, "' must be Number, not ", type_name_of(h));
  return scalar_from_python(h);
}

// tensordot's dims: an int, or a pair of (int or sequence of ints).
std::vector<int64_t> dim_list(nb::handle h) {
  if (PyLong_Check(h.ptr())) return {nb::cast<int64_t>(h)};
  LUCID_CHECK(PySequence_Check(h.ptr()), TypeError, "tensordot(): dims must be an int or a pair of lists of ints, "
              "not ", type_name_of(h));
  std::vector<int64_t> r;
  for (nb::handle d : nb::iter(h)) {
    LUCID_CHECK(PyLong_Check(d.ptr()), TypeError, "tensordot(): dims must contain ints, not ", type_name_of(d));
    r.push_back(nb::cast<int64_t>(d));
  }
  return r;
}

TensorPtr tensordot_py(TensorPtr a, TensorPtr b, nb::handle dims) {
  autocast_args("tensordot", a, b);
  if (PyLong_Check(dims.ptr()) && !PyBool_Check(dims.ptr())) return ops::tensordot(a, b, nb::cast<int64_t>(dims));
  if (is_tensor(dims) && nb::cast<TensorPtr>(dims)->ndim() == 0)
    return ops::tensordot(a, b, nb::cast<int64_t>(nb::int_(dims)));
  LUCID_CHECK(PySequence_Check(dims.ptr()) && PySequence_Size(dims.ptr()) == 2, TypeError,
              "tensordot(): dims must be an int or a pair of lists of ints, not ", type_name_of(dims));
  nb::sequence pair = nb::borrow<nb::sequence>(dims);
  return ops::tensordot(a, b, dim_list(pair[0]), dim_list(pair[1]));
}

// einsum(equation, *operands) or einsum(equation, [operands]).
TensorPtr einsum_py(const std::string& equation, nb::args args) {
  std::vector<TensorPtr> operands;
  nb::handle src = args;
  if (args.size() == 1 && !is_tensor(args[0]) && PySequence_Check(args[0].ptr())) src = args[0];
  for (nb::handle h : nb::iter(src)) {
    LUCID_CHECK(is_tensor(h), TypeError, "einsum(): operands must be Tensors, not ",
                type_name_of(h));
    operands.push_back(nb::cast<TensorPtr>(h));
  }
  if (ops::autocast::any_enabled()) operands = ops::autocast::cast("einsum", std::move(operands));
  return ops::einsum(equation, operands);
}

}  // namespace

void init_linalg(nb::module_& m, TensorClass& cls) {
  // Functions with out=: matmul, mm, bmm.
  m.def("matmul", [](TensorPtr a, TensorPtr b, nb::handle out) {
    if (out.is_none()) autocast_args("matmul", a, b);  // out= runs as given, as in torch
    return with_out("matmul", ops::matmul, a, b, out);
  },
        nb::arg("input"), nb::arg("other"), nb::kw_only(), nb::arg("out") = nb::none());
  m.def("mm", [](TensorPtr a, TensorPtr b, nb::handle out) {
    if (out.is_none()) autocast_args("mm", a, b);  // out= runs as given, as in torch
    return with_out("mm", ops::mm, a, b, out);
  },
        nb::arg("input"), nb::arg("mat2"), nb::kw_only(), nb::arg("out") = nb::none());
  m.def("bmm", [](TensorPtr a, TensorPtr b, nb::handle out) {
    if (out.is_none()) autocast_args("bmm", a, b);  // out= runs as given, as in torch
    return with_out("bmm", ops::bmm, a, b, out);
  },
        nb::arg("input"), nb::arg("mat2"), nb::kw_only(), nb::arg("out") = nb::none());
  m.def("mv", [](TensorPtr a, TensorPtr b) {
    autocast_args("mv", a, b);
    return ops::mv(a, b);
  }, nb::arg("input"), nb::arg("vec"));
  m.def("dot", &ops::dot, nb::arg("input"), nb::arg("tensor"));
  m.def("vdot", &ops::vdot, nb::arg("input"), nb::arg("other"));
  for (const char* name : {"outer", "ger"}) {
    m.def(name, [](TensorPtr a, TensorPtr b) { return ops::outer(a, b); }, nb::arg("input"), nb::arg("vec2"));
  }

#define LUCID_BIND_ADD_PRODUCT(name, a1, a2)                                                                 \
  m.def(#name, [](TensorPtr input, TensorPtr x, TensorPtr y, nb::handle beta, nb::handle alpha) {            \
    autocast_args(#name, input, x, y);                                                                       \
    return ops::name(input, x, y, coefficient(beta, #name, "beta"), coefficient(alpha, #name, "alpha"));      \
  }, nb::arg("input"), nb::arg(a1), nb::arg(a2), nb::kw_only(), nb::arg("beta") = 1, nb::arg("alpha") = 1); \
  cls.def(#name, [](TensorPtr input, TensorPtr x, TensorPtr y, nb::handle beta, nb::handle alpha) {          \
    autocast_args(#name, input, x, y);                                                                       \
    return ops::name(input, x, y, coefficient(beta, #name, "beta"), coefficient(alpha, #name, "alpha"));      \
  }, nb::arg(a1), nb::arg(a2), nb::kw_only(), nb::arg("beta") = 1, nb::arg("alpha") = 1);
  LUCID_BIND_ADD_PRODUCT(addmm, "mat1", "mat2")
  LUCID_BIND_ADD_PRODUCT(addmv, "mat", "vec")
  LUCID_BIND_ADD_PRODUCT(baddbmm, "batch1", "batch2")
#undef LUCID_BIND_ADD_PRODUCT

  m.def("einsum", &einsum_py, nb::arg("equation"), nb::arg("operands"));
  m.def("tensordot", &tensordot_py, nb::arg("a"), nb::arg("b"), nb::arg("dims") = 2);
  m.def("_linear", [](TensorPtr input, TensorPtr weight, std::optional<TensorPtr> bias) {
    TensorPtr b = bias.value_or(nullptr);
    autocast_args("linear", input, weight, b);
    return ops::linear(input, weight, b);
  }, nb::arg("input"), nb::arg("weight"), nb::arg("bias") = nb::none());

  m.def("get_num_threads", [] { return ops::cpu_settings().get_num_threads(); });
  m.def("set_num_threads", [](int n) { ops::cpu_settings().set_num_threads(n); }, nb::arg("int"));
  m.def("_has_blas", [] { return ops::cpu_settings().has_blas(); });
  m.def("_blas_info", [] { return ops::cpu_settings().blas_info(); });
  m.def("_has_lapack", [] { return ops::cpu_settings().has_lapack(); });
  // The decompositions (ops/decompose.h), raw: lucid.linalg adds broadcasting, errors
  // and gradients. Absent results (no vectors asked for) are None.
  m.def("_linalg_lu_factor", [](TensorPtr a) { auto r = ops::lu_factor(a); return nb::make_tuple(r[0], r[1], r[2]); });
  m.def("_linalg_lu_solve", &ops::lu_solve, nb::arg("LU"), nb::arg("pivots"), nb::arg("B"), nb::arg("adjoint"));
  m.def("_linalg_cholesky", [](TensorPtr a) { auto r = ops::cholesky(a); return nb::make_tuple(r[0], r[1]); });
  m.def("_linalg_solve_triangular", [](TensorPtr a, TensorPtr b, bool upper, bool left, bool unit) {
    return ops::solve_triangular(a, b, upper, left, unit);
  }, nb::arg("A"), nb::arg("B"), nb::arg("upper"), nb::arg("left"), nb::arg("unitriangular"));
  m.def("_linalg_qr_factor", [](TensorPtr a) { auto r = ops::qr_factor(a); return nb::make_tuple(r[0], r[1]); });
  m.def("_linalg_householder_product", &ops::householder_product, nb::arg("input"), nb::arg("tau"));
  m.def("_linalg_eigh", [](TensorPtr a, bool upper, bool vectors) {
    auto r = ops::eigh(a, upper, vectors);
    return nb::make_tuple(r[0], r[1] ? nb::cast(r[1]) : nb::none(), r[2]);
  }, nb::arg("A"), nb::arg("upper"), nb::arg("vectors"));
  m.def("_linalg_ldl_factor", [](TensorPtr a, bool hermitian) {
    auto r = ops::ldl_factor(a, hermitian);
    return nb::make_tuple(r[0], r[1], r[2]);
  }, nb::arg("A"), nb::arg("hermitian"));
  m.def("_linalg_ldl_solve", &ops::ldl_solve, nb::arg("LD"), nb::arg("pivots"), nb::arg("B"), nb::arg("hermitian"));
  m.def("_linalg_eig", [](TensorPtr a, bool vectors) {
    auto r = ops::eig(a, vectors);
    return nb::make_tuple(r[0], r[1] ? nb::cast(r[1]) : nb::none(), r[2]);
  }, nb::arg("A"), nb::arg("vectors"));
  m.def("_linalg_svd", [](TensorPtr a, bool full, bool vectors) {
    auto r = ops::svd(a, full, vectors);
    auto opt = [](const TensorPtr& t) { return t ? nb::cast(t) : nb::none(); };
    return nb::make_tuple(opt(r[0]), r[1], opt(r[2]), r[3]);
  }, nb::arg("A"), nb::arg("full_matrices"), nb::arg("vectors"));
  m.def("_set_matmul_allow_tf32", &ops::set_matmul_allow_tf32, nb::arg("allow"));

  // Tensor methods.
  // (autocast: Note [Autocast])
#define LUCID_BIND_PRODUCT_METHOD(method, op, policy_name, arg_name)                          \
  cls.def(method, [](TensorPtr a, TensorPtr b) {                                             \
    autocast_args(policy_name, a, b);                                                        \
    return ops::op(a, b);                                                                    \
  }, nb::arg(arg_name));
  LUCID_BIND_PRODUCT_METHOD("matmul", matmul, "matmul", "other")
  LUCID_BIND_PRODUCT_METHOD("mm", mm, "mm", "mat2")
  LUCID_BIND_PRODUCT_METHOD("bmm", bmm, "bmm", "mat2")
  LUCID_BIND_PRODUCT_METHOD("mv", mv, "mv", "vec")
#undef LUCID_BIND_PRODUCT_METHOD
  for (const char* name : {"outer", "ger"})
    cls.def(name, [](TensorPtr a, TensorPtr b) { return ops::outer(a, b); }, nb::arg("vec2"));
  cls.def("dot", [](TensorPtr a, TensorPtr b) { return ops::dot(a, b); }, nb::arg("tensor"));
  cls.def("vdot", [](TensorPtr a, TensorPtr b) { return ops::vdot(a, b); }, nb::arg("other"));

  // a @ b: NotImplemented for non-tensors, so Python raises its own TypeError.
  cls.def("__matmul__", [](TensorPtr a, nb::handle b) -> nb::object {
    if (!is_tensor(b)) return nb::borrow(Py_NotImplemented);
    TensorPtr other = nb::cast<TensorPtr>(b);
    autocast_args("matmul", a, other);
    return nb::cast(ops::matmul(a, other));
  });
  cls.def("__rmatmul__", [](TensorPtr a, nb::handle b) -> nb::object {
    if (!is_tensor(b)) return nb::borrow(Py_NotImplemented);
    TensorPtr other = nb::cast<TensorPtr>(b);
    autocast_args("matmul", other, a);
    return nb::cast(ops::matmul(other, a));
  });
}

}  // namespace lucid::bindings
