// lucid.autocast's state and casts (ops/autocast.h, Note [Autocast]) for
// python/lucid/amp: the state per device type, and the casts of the Python-level ops
// (losses, norms) that have a policy.
#include <nanobind/stl/optional.h>
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "bindings/common.h"
#include "core/dtype.h"
#include "ops/autocast.h"

namespace lucid::bindings {

namespace {

DeviceType device_type_of(bool gpu) { return gpu ? DeviceType::GPU : DeviceType::CPU; }

}  // namespace

void init_amp(nb::module_& m) {
  namespace ac = ops::autocast;
  // (enabled, dtype code) of the CPU's (gpu=False) or the GPU's autocast on this thread.
  m.def("_autocast_get", [](bool gpu) {
    const ac::Mode mode = ac::mode(device_type_of(gpu));
    return nb::make_tuple(mode.enabled, int(mode.dtype));
  });
  m.def("_autocast_set", [](bool gpu, bool enabled, int dtype) {
    ac::set_mode(device_type_of(gpu), ac::Mode{enabled, dtype_from_code(dtype)});
  });
  m.def("_autocast_any", &ac::any_enabled);
  // The tensors op `name` computes with under the current state (None stays None).
  m.def("_autocast_cast", [](const std::string& name, std::vector<std::optional<TensorPtr>> tensors) {
    std::vector<TensorPtr> in;
    in.reserve(tensors.size());
    for (auto& t : tensors) in.push_back(t.value_or(nullptr));
    std::vector<TensorPtr> out = ac::cast(name.c_str(), std::move(in));
    nb::list result;
    for (auto& t : out) result.append(t ? nb::cast(t) : nb::none());
    return result;
  });
}

}  // namespace lucid::bindings
