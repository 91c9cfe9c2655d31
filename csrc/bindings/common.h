// Shared helpers of the binding files. Python passes dtypes as integer codes (the
// Dtype enum) and devices as one integer: -1 for the CPU, k >= 0 for gpu:k.
#pragma once

#include <nanobind/nanobind.h>

#include "core/tensor_impl.h"

namespace lucid::bindings {

namespace nb = nanobind;

inline Device device_from_code(int code) { return code < 0 ? Device::cpu() : Device::gpu(code); }
inline int device_code(const Device& d) { return d.is_cpu() ? -1 : d.index; }

nb::object scalar_to_python(const Scalar& s);
Scalar scalar_from_python(nb::handle h);  // bool, int, float or complex; TypeError otherwise

void init_tensor(nb::module_& m);
void init_convert(nb::module_& m);
void init_dlpack(nb::module_& m);
void init_random(nb::module_& m);
void init_gpu(nb::module_& m);

}  // namespace lucid::bindings
