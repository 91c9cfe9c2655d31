// The normalisation kernels (ops/norm.h) as lucid._C._batch_norm / _group_norm;
// python/lucid/nn/_functional_norm.py parses torch's signatures around them.
#include <nanobind/stl/optional.h>
#include <nanobind/stl/shared_ptr.h>

#include "bindings/common.h"
#include "ops/norm.h"

namespace lucid::bindings {

void init_norm(nb::module_& m) {
  m.def("_batch_norm",
        [](TensorPtr input, std::optional<TensorPtr> weight, std::optional<TensorPtr> bias,
           std::optional<TensorPtr> running_mean, std::optional<TensorPtr> running_var, bool training,
           double momentum, double eps) {
          return ops::batch_norm(input, weight.value_or(nullptr), bias.value_or(nullptr),
                                 running_mean.value_or(nullptr), running_var.value_or(nullptr), training, momentum,
                                 eps);
        },
        nb::arg("input"), nb::arg("weight").none(), nb::arg("bias").none(), nb::arg("running_mean").none(),
        nb::arg("running_var").none(), nb::arg("training"), nb::arg("momentum"), nb::arg("eps"));
  m.def("_group_norm",
        [](TensorPtr input, int64_t num_groups, std::optional<TensorPtr> weight, std::optional<TensorPtr> bias,
           double eps) {
          return ops::group_norm(input, num_groups, weight.value_or(nullptr), bias.value_or(nullptr), eps);
        },
        nb::arg("input"), nb::arg("num_groups"), nb::arg("weight").none(), nb::arg("bias").none(), nb::arg("eps"));
}

}  // namespace lucid::bindings
