// The shape and index ops (ops/shape_ops.h, ops/gather_ops.h) as lucid._C._<op>
// entry points. Argument parsing in PyTorch's many spellings (dims as varargs or a
// list, src= or value=, ...) lives in python/lucid/_shape.py, which installs the
// public functions and Tensor methods.
#include <nanobind/stl/optional.h>
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "bindings/common.h"
#include "ops/gather_ops.h"
#include "ops/shape_ops.h"

namespace lucid::bindings {

namespace {

using Dims = std::vector<int64_t>;

}  // namespace

void init_shape(nb::module_& m) {
  m.def("_cat", [](std::vector<TensorPtr> ts, int64_t dim) { return ops::cat(ts, dim); });
  m.def("_split_with_sizes", [](TensorPtr t, Dims sizes, int64_t dim, bool equal) {
    return ops::split_with_sizes(t, sizes, dim, equal);
  });
  m.def("_unbind", [](TensorPtr t, int64_t dim) { return ops::unbind(t, dim); });
  m.def("_flip", [](TensorPtr t, Dims dims) { return ops::flip(t, dims); });
  m.def("_roll", [](TensorPtr t, Dims shifts, Dims dims) { return ops::roll(t, shifts, dims); });
  m.def("_repeat", [](TensorPtr t, Dims repeats) { return ops::repeat(t, repeats); });
  m.def("_tril", [](TensorPtr t, int64_t k) { return ops::tril(t, k); });
  m.def("_triu", [](TensorPtr t, int64_t k) { return ops::triu(t, k); });
  m.def("_diagonal", [](TensorPtr t, int64_t off, int64_t d1, int64_t d2) { return ops::diagonal(t, off, d1, d2); });
  m.def("_gather", [](TensorPtr t, int64_t dim, TensorPtr index) { return ops::gather(t, dim, index); });
  m.def("_scatter", [](TensorPtr t, int64_t dim, TensorPtr index, nb::handle src, std::string reduce) {
    if (is_tensor(src)) return ops::scatter(t, dim, index, nb::cast<TensorPtr>(src), reduce);
    return ops::scatter(t, dim, index, scalar_from_python(src), reduce);
  });
  m.def("_scatter_add", [](TensorPtr t, int64_t dim, TensorPtr index, TensorPtr src) {
    return ops::scatter_add(t, dim, index, src);
  });
  m.def("_index_select", [](TensorPtr t, int64_t dim, TensorPtr index) { return ops::index_select(t, dim, index); });
  m.def("_index_add", [](TensorPtr t, int64_t dim, TensorPtr index, TensorPtr source, nb::handle alpha) {
    return ops::index_add(t, dim, index, source, scalar_from_python(alpha));
  });
  m.def("_masked_fill", [](TensorPtr t, TensorPtr mask, nb::handle value) {
    if (is_tensor(value)) return ops::masked_fill(t, mask, nb::cast<TensorPtr>(value));
    return ops::masked_fill(t, mask, scalar_from_python(value));
  });
}

}  // namespace lucid::bindings
