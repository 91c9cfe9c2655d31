// lucid._C's Fourier transform (ops/fft.h), raw: lucid.fft adds torch's n/s/dim/norm
// handling and the gradients.
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/string.h>

#include "bindings/common.h"
#include "ops/fft.h"

namespace lucid::bindings {

void init_fft(nb::module_& m) {
  m.def("_fft", [](TensorPtr x, const std::string& kind, bool inverse, int rank, int64_t last_size) {
    ops::FftKind k = ops::FftKind::C2C;
    if (kind == "r2c") k = ops::FftKind::R2C;
    else if (kind == "c2r") k = ops::FftKind::C2R;
    else LUCID_CHECK(kind == "c2c", ValueError, "_fft: kind must be 'c2c', 'r2c' or 'c2r', got '", kind, "'");
    return ops::fft(x, k, inverse, rank, last_size);
  }, nb::arg("input"), nb::arg("kind"), nb::arg("inverse"), nb::arg("rank"), nb::arg("last_size") = -1);
  m.def("_set_mkl_library", &ops::set_mkl_library, nb::arg("path"));
}

}  // namespace lucid::bindings
