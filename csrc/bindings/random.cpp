// Generators and the random fills and creation functions (ops/random.h).
#include <nanobind/stl/optional.h>
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/vector.h>

#include "bindings/common.h"
#include "core/generator.h"
#include "ops/random.h"

namespace lucid::bindings {

void init_random(nb::module_& m) {
  nb::class_<Generator>(m, "Generator")
      .def(nb::init<uint64_t>(), nb::arg("seed") = kDefaultRngSeed)
      .def("manual_seed", &Generator::manual_seed)
      .def("seed", &Generator::seed)
      .def("initial_seed", &Generator::initial_seed)
      .def_prop_rw("offset", &Generator::offset, &Generator::set_offset)
      .def("get_state", [](const Generator& g) {
        std::vector<uint8_t> s = g.get_state();
        return nb::bytes(reinterpret_cast<const char*>(s.data()), s.size());
      })
      .def("set_state", [](Generator& g, nb::bytes state) {
        g.set_state(reinterpret_cast<const uint8_t*>(state.c_str()), state.size());
      });
  m.def("default_generator", &default_generator, nb::rv_policy::reference);

  m.def("uniform_", [](const TensorPtr& t, double from, double to, Generator& g) { ops::uniform_(t, from, to, g); });
  m.def("normal_", [](const TensorPtr& t, double mean, double std, Generator& g) { ops::normal_(t, mean, std, g); });
  m.def("random_", [](const TensorPtr& t, int64_t low, int64_t high, Generator& g) { ops::random_(t, low, high, g); });
  m.def("bernoulli_", [](const TensorPtr& t, double p, Generator& g) { ops::bernoulli_(t, p, g); });
  m.def("bernoulli_tensor_",
        [](const TensorPtr& t, const TensorPtr& probs, Generator& g) { ops::bernoulli_(t, probs, g); });

  m.def("uniform", [](std::vector<int64_t> shape, int dtype, int device, double from, double to, Generator& g) {
    return ops::uniform(shape, dtype_from_code(dtype), device_from_code(device), from, to, g);
  });
  m.def("normal", [](std::vector<int64_t> shape, int dtype, int device, double mean, double std, Generator& g) {
    return ops::normal(shape, dtype_from_code(dtype), device_from_code(device), mean, std, g);
  });
  m.def("integers", [](std::vector<int64_t> shape, int dtype, int device, int64_t low, int64_t high, Generator& g) {
    return ops::integers(shape, dtype_from_code(dtype), device_from_code(device), low, high, g);
  });
  m.def("bernoulli", [](const TensorPtr& probs, std::optional<double> p, Generator& g) {
    return ops::bernoulli(probs, p, g);
  });
  m.def("poisson", [](const TensorPtr& rates, Generator& g) { return ops::poisson(rates, g); });
  m.def("standard_gamma", [](const TensorPtr& alpha, Generator& g) { return ops::standard_gamma(alpha, g); });
  m.def("standard_gamma_grad", &ops::standard_gamma_grad);
  m.def("binomial", [](const TensorPtr& count, const TensorPtr& prob, Generator& g) {
    return ops::binomial(count, prob, g);
  });
  m.def("dirichlet_grad", &ops::dirichlet_grad);
  m.def("normal_tensor", [](const TensorPtr& mean, const TensorPtr& std, std::vector<int64_t> shape, int dtype,
                            int device, Generator& g) {
    return ops::normal(mean, std, shape, dtype_from_code(dtype), device_from_code(device), g);
  });
  m.def("randperm", [](int64_t n, int dtype, int device, Generator& g) {
    return ops::randperm(n, dtype_from_code(dtype), device_from_code(device), g);
  });
}

}  // namespace lucid::bindings
