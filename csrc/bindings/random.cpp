// Generators and the in-place random fills (uniform_, normal_, random_,
// bernoulli_, randperm). Values are drawn on the CPU; a GPU or non-contiguous
// target receives them through copy_ (a GPU Philox kernel comes with the GPU ops).
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/vector.h>

#include "backend/cpu/random.h"
#include "bindings/common.h"
#include "core/generator.h"
#include "ops/views.h"

namespace lucid::bindings {

namespace {

template <typename Fill>
void fill_in_place(TensorImpl& t, Fill fill) {
  if (!t.is_gpu_storage() && t.is_contiguous()) {
    fill(t);  // the kernels bump the version counter themselves
    return;
  }
  TensorPtr tmp = TensorImpl::empty(t.shape(), t.dtype(), Device::cpu());
  fill(*tmp);
  t.copy_from(*tmp);
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
  // out = mean + std * z with z ~ N(0, 1), mean and std broadcast to out's shape:
  // torch.normal(Tensor mean, Tensor std). Computed in float64 on the host.
  m.def("normal_tensor", [](TensorImpl& out, const TensorImpl& mean, const TensorImpl& std, Generator& g) {
    auto as_f64 = [&](const TensorImpl& t) {
      TensorPtr p = std::const_pointer_cast<TensorImpl>(t.shared_from_this());
      return ops::expand(p, out.shape())->clone(Dtype::F64, Device::cpu());
    };
    TensorPtr m = as_f64(mean), s = as_f64(std), z = TensorImpl::empty(out.shape(), Dtype::F64, Device::cpu());
    const double* mp = reinterpret_cast<const double*>(m->host_ptr());
    const double* sp = reinterpret_cast<const double*>(s->host_ptr());
    int64_t n = out.numel();
    for (int64_t i = 0; i < n; ++i)
      LUCID_CHECK(sp[i] >= 0.0, RuntimeError, "normal expects all elements of std >= 0.0, but found std ", sp[i]);
    cpu::normal_(*z, 0.0, 1.0, g);
    double* zp = reinterpret_cast<double*>(z->host_ptr());
    for (int64_t i = 0; i < n; ++i) zp[i] = mp[i] + sp[i] * zp[i];
    out.copy_from(*z);
  });
  m.def("bernoulli_", [](TensorImpl& t, double p, Generator& g) {
    fill_in_place(t, [&](TensorImpl& x) { cpu::bernoulli_(x, p, g); });
  });
  m.def("bernoulli_tensor", [](TensorImpl& out, const TensorImpl& probs, Generator& g) {
    TensorPtr p = probs.clone(std::nullopt, Device::cpu());  // contiguous host copy
    fill_in_place(out, [&](TensorImpl& x) { cpu::bernoulli_tensor(x, *p, g); });
  });
  m.def("randperm", [](int64_t n, int dtype, int device, Generator& g) {
    TensorPtr t = cpu::randperm(n, dtype_from_code(dtype), g);
    return device < 0 ? t : t->transfer_to_device(device_from_code(device));
  });
}

}  // namespace lucid::bindings
