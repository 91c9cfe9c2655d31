// Advanced indexing, nonzero and masked_select (ops/index_ops.h). The parsing of
// t[key] lives in python/lucid/_indexing.py; it calls _index / _index_put_ here.
#include <nanobind/stl/shared_ptr.h>

#include "bindings/common.h"
#include "ops/index_ops.h"

namespace lucid::bindings {

namespace {

// A sequence of Tensor or None (PyTorch's Tuple[Optional[Tensor]]).
ops::IndexList parse_indices(nb::handle indices, const char* op) {
  LUCID_CHECK(PySequence_Check(indices.ptr()) && !is_tensor(indices), TypeError, op,
              "(): argument 'indices' must be a tuple of Tensors (or None), not ", type_name_of(indices));
  ops::IndexList out;
  for (nb::handle h : nb::iter(indices)) {
    if (h.is_none()) {
      out.push_back(nullptr);
      continue;
    }
    LUCID_CHECK(is_tensor(h), TypeError, op, "(): argument 'indices' must contain Tensors or "
                "None, not ", type_name_of(h));
    out.push_back(nb::cast<TensorPtr>(h));
  }
  return out;
}

TensorPtr tensor_arg(nb::handle h, const char* op, const char* arg) {
  LUCID_CHECK(is_tensor(h), TypeError, op, "(): argument '", arg, "' must be Tensor, not ",
              type_name_of(h));
  return nb::cast<TensorPtr>(h);
}

}  // namespace

void init_indexing(nb::module_& m, TensorClass& cls) {
  cls.def("_index", [](TensorPtr self, nb::handle indices) {
    return ops::index(self, parse_indices(indices, "index"));
  });
  cls.def("_index_put_", [](TensorPtr self, nb::handle indices, TensorPtr values, bool accumulate) {
    return ops::index_put_(self, parse_indices(indices, "index_put_"), values, accumulate);
  });
  // index_put_ returns self: the same Python object comes back (nanobind keeps it).
  cls.def("index_put_", [](TensorPtr self, nb::handle indices, nb::handle values, bool accumulate) {
    return ops::index_put_(self, parse_indices(indices, "index_put_"), tensor_arg(values, "index_put_", "values"),
                           accumulate);
  }, nb::arg("indices"), nb::arg("values"), nb::arg("accumulate") = false);
  cls.def("index_put", [](TensorPtr self, nb::handle indices, nb::handle values, bool accumulate) {
    return ops::index_put(self, parse_indices(indices, "index_put"), tensor_arg(values, "index_put", "values"),
                          accumulate);
  }, nb::arg("indices"), nb::arg("values"), nb::arg("accumulate") = false);
  cls.def("_nonzero", [](TensorPtr self) { return ops::nonzero(self); });
  cls.def("masked_select", [](TensorPtr self, nb::handle mask) {
    return ops::masked_select(self, tensor_arg(mask, "masked_select", "mask"));
  }, nb::arg("mask"));
  m.def("masked_select", [](nb::handle input, nb::handle mask) {
    return ops::masked_select(tensor_arg(input, "masked_select", "input"),
                              tensor_arg(mask, "masked_select", "mask"));
  }, nb::arg("input"), nb::arg("mask"));
}

}  // namespace lucid::bindings
