// Generators and the in-place random fills (uniform_, normal_, random_,
// bernoulli_, randperm). Values are drawn on the CPU; a GPU or non-contiguous
// target receives them through copy_ (a GPU Philox kernel comes with the GPU ops).
#include <nanobind/stl/optional.h>
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/vector.h>

#include "backend/cpu/random.h"
#include "bindings/common.h"
#include "core/generator.h"
#include "ops/views.h"

namespace lucid::bindings {

namespace {

// In-place fills write into the tensor itself when the CPU can, else draw into a
// contiguous host buffer and copy; either way the version counter is bumped once.
template <typename Fill>
void fill_in_place(TensorImpl& t, Fill fill) {
  if (!t.is_gpu_storage() && t.is_contiguous()) {
    fill(t);
    t.bump_version();
    return;
  }
  TensorPtr tmp = TensorImpl::empty(t.shape(), t.dtype(), Device::cpu());
  fill(*tmp);
  t.copy_from(*tmp);
}

// Creation functions (rand, randn, randint, ...) draw into a fresh host tensor and
// move it to its device: no version bump, so the result starts at version 0.
template <typename Fill>
TensorPtr fresh(const Shape& shape, Dtype dtype, int device, Fill fill) {
  TensorPtr t = TensorImpl::empty(shape, dtype, Device::cpu());
  fill(*t);
  return device < 0 ? t : t->transfer_to_device(device_from_code(device));
}

TensorPtr host_copy(const TensorImpl& t, Dtype dtype) {  // contiguous, on the CPU
  return t.clone(dtype, Device::cpu());
}

}  // namespace

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

  m.def("uniform_", [](TensorImpl& t, double from, double to, Generator& g) {
    fill_in_place(t, [&](TensorImpl& x) { cpu::uniform_(x, from, to, g); });
  });
  m.def("normal_", [](TensorImpl& t, double mean, double std, Generator& g) {
    fill_in_place(t, [&](TensorImpl& x) { cpu::normal_(x, mean, std, g); });
  });
  m.def("random_", [](TensorImpl& t, int64_t low, int64_t high, Generator& g) {
    fill_in_place(t, [&](TensorImpl& x) { cpu::random_(x, low, high, g); });
  });
  m.def("bernoulli_", [](TensorImpl& t, double p, Generator& g) {
    fill_in_place(t, [&](TensorImpl& x) { cpu::bernoulli_(x, p, g); });
  });
  m.def("bernoulli_tensor_", [](TensorImpl& t, const TensorImpl& probs, Generator& g) {
    TensorPtr p = host_copy(probs, probs.dtype());
    fill_in_place(t, [&](TensorImpl& x) { cpu::bernoulli_tensor(x, *p, g); });
  });

  m.def("uniform", [](std::vector<int64_t> shape, int dtype, int device, double from, double to, Generator& g) {
    return fresh(shape, dtype_from_code(dtype), device, [&](TensorImpl& x) { cpu::uniform_(x, from, to, g); });
  });
  m.def("normal", [](std::vector<int64_t> shape, int dtype, int device, double mean, double std, Generator& g) {
    return fresh(shape, dtype_from_code(dtype), device, [&](TensorImpl& x) { cpu::normal_(x, mean, std, g); });
  });
  m.def("integers", [](std::vector<int64_t> shape, int dtype, int device, int64_t low, int64_t high, Generator& g) {
    return fresh(shape, dtype_from_code(dtype), device, [&](TensorImpl& x) { cpu::random_(x, low, high, g); });
  });
  m.def("bernoulli", [](const TensorImpl& probs, std::optional<double> p, Generator& g) {
    int device = probs.device().is_cpu() ? -1 : probs.device().index;
    TensorPtr pr = p ? nullptr : host_copy(probs, probs.dtype());
    return fresh(probs.shape(), probs.dtype(), device, [&](TensorImpl& x) {
      if (p) cpu::bernoulli_(x, *p, g);
      else cpu::bernoulli_tensor(x, *pr, g);
    });
  });
  // torch.normal(Tensor mean, Tensor std): mean + std * z with z ~ N(0, 1), mean and
  // std broadcast to `shape`, computed in float64 on the host, then cast to `dtype`.
  m.def("normal_tensor", [](const TensorImpl& mean, const TensorImpl& std, std::vector<int64_t> shape, int dtype,
                            int device, Generator& g) {
    auto as_f64 = [&](const TensorImpl& t) {
      TensorPtr p = std::const_pointer_cast<TensorImpl>(t.shared_from_this());
      return host_copy(*ops::expand(p, shape), Dtype::F64);
    };
    TensorPtr m = as_f64(mean), s = as_f64(std);
    const double* mp = reinterpret_cast<const double*>(m->host_ptr());
    const double* sp = reinterpret_cast<const double*>(s->host_ptr());
    int64_t n = m->numel();
    for (int64_t i = 0; i < n; ++i)
      LUCID_CHECK(sp[i] >= 0.0, RuntimeError, "normal expects all elements of std >= 0.0, but found std ", sp[i]);
    TensorPtr z = fresh(shape, Dtype::F64, -1, [&](TensorImpl& x) { cpu::normal_(x, 0.0, 1.0, g); });
    double* zp = reinterpret_cast<double*>(z->host_ptr());
    for (int64_t i = 0; i < n; ++i) zp[i] = mp[i] + sp[i] * zp[i];
    return z->clone(dtype_from_code(dtype), device_from_code(device));
  });
  m.def("randperm", [](int64_t n, int dtype, int device, Generator& g) {
    TensorPtr t = cpu::randperm(n, dtype_from_code(dtype), g);
    return device < 0 ? t : t->transfer_to_device(device_from_code(device));
  });
}

}  // namespace lucid::bindings
