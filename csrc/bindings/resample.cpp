// interpolate's engine op (ops/resample.h), as the private lucid._C._resample_taps and
// _resample_taps_adjoint (nn/_functional_resample.py builds the taps), and grid_sample's
// 2-D kernel (ops/grid_sample.h) as _grid_sample2d.
#include <nanobind/stl/pair.h>
#include <nanobind/stl/shared_ptr.h>

#include "bindings/common.h"
#include "ops/grid_sample.h"
#include "ops/resample.h"

namespace lucid::bindings {

void init_resample(nb::module_& m) {
  m.def("_resample_taps", &ops::resample_taps, nb::arg("input"), nb::arg("dim"), nb::arg("index"),
        nb::arg("weight"));
  m.def("_resample_taps_adjoint", &ops::resample_taps_adjoint, nb::arg("grad"), nb::arg("dim"), nb::arg("index"),
        nb::arg("weight"), nb::arg("in_size"));
  m.def("_grid_sample2d", &ops::grid_sample2d, nb::arg("input"), nb::arg("grid"), nb::arg("mode"),
        nb::arg("padding_mode"), nb::arg("align_corners"));
  m.def("_grid_sample2d_backward", &ops::grid_sample2d_backward, nb::arg("grad"), nb::arg("input"), nb::arg("grid"),
        nb::arg("mode"), nb::arg("padding_mode"), nb::arg("align_corners"));
}

}  // namespace lucid::bindings
