// lucid._C's sparse-times-dense product (ops/sparse.h), raw: python/lucid/_sparse.py
// holds the sparse layouts (Python objects over dense index and value tensors) and the
// gradients. Also the second overloads of lucid.mm and lucid.matmul: a sparse operand
// is no engine tensor, so the dense overload refuses it and this one hands the call to
// _sparse.py (the dense path pays nothing for it).
#include <nanobind/stl/shared_ptr.h>

#include "bindings/common.h"
#include "ops/sparse.h"

namespace lucid::bindings {

namespace {

nb::object sparse_product(const char* name, nb::handle a, nb::handle b, nb::handle out) {
  return nb::module_::import_("lucid._sparse").attr("_product")(name, a, b, out);
}

}  // namespace

void init_sparse(nb::module_& m) {
  m.def("_csr_matmul", &ops::csr_matmul, nb::arg("crow_indices"), nb::arg("col_indices"), nb::arg("values"),
        nb::arg("dense"), nb::arg("rows"));
  m.def("mm", [](nb::handle a, nb::handle b, nb::handle out) { return sparse_product("mm", a, b, out); },
        nb::arg("input"), nb::arg("mat2"), nb::kw_only(), nb::arg("out") = nb::none());
  m.def("matmul", [](nb::handle a, nb::handle b, nb::handle out) { return sparse_product("matmul", a, b, out); },
        nb::arg("input"), nb::arg("other"), nb::kw_only(), nb::arg("out") = nb::none());
}

}  // namespace lucid::bindings
