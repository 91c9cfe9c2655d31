// Convolution, unfold/fold and pooling (ops/conv.h) as private _C functions; the
// public signatures (int-or-tuple arguments, 'same' padding, ...) live in
// python/lucid/nn/_functional_conv.py, which passes every per-dim list expanded.
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "bindings/common.h"
#include "ops/conv.h"

namespace lucid::bindings {

namespace {

TensorPtr opt_tensor(nb::handle h) { return h.is_none() ? nullptr : nb::cast<TensorPtr>(h); }

}  // namespace

void init_conv(nb::module_& m) {
  using ops::IntVec;
  m.def("_convolution",
        [](const std::string& name, const TensorPtr& input, const TensorPtr& weight, nb::handle bias,
           const IntVec& stride, const IntVec& padding, const IntVec& dilation, bool transposed,
           const IntVec& output_padding, int64_t groups) {
          TensorPtr x = input, w = weight, b = opt_tensor(bias);
          autocast_args(name.c_str(), x, w, b);  // name: conv2d, conv_transpose1d, ...
          return ops::convolution(name.c_str(), x, w, b, stride, padding, dilation, transposed, output_padding,
                                  groups);
        },
        nb::arg("name"), nb::arg("input"), nb::arg("weight"), nb::arg("bias").none(), nb::arg("stride"),
        nb::arg("padding"), nb::arg("dilation"), nb::arg("transposed"), nb::arg("output_padding"), nb::arg("groups"));
  m.def("_set_cudnn_allow_tf32", &ops::set_conv_allow_tf32, nb::arg("allow"));
  m.def("_set_conv_deterministic", &ops::set_conv_deterministic, nb::arg("deterministic"));
  m.def("_conv_deterministic", &ops::conv_deterministic);
  m.def("_im2col", &ops::unfold_im2col);
  m.def("_col2im", &ops::fold_col2im);
  m.def("_max_pool", [](const std::string& name, const TensorPtr& input, const IntVec& kernel, const IntVec& stride,
                        const IntVec& padding, const IntVec& dilation, bool ceil_mode) {
    TensorPtr x = input;
    autocast_args(name.c_str(), x);  // max_pool3d: float32 under the CPU's autocast
    return ops::max_pool(name.c_str(), x, kernel, stride, padding, dilation, ceil_mode);
  });
  m.def("_avg_pool", [](const std::string& name, const TensorPtr& input, const IntVec& kernel, const IntVec& stride,
                        const IntVec& padding, bool ceil_mode, bool count_include_pad,
                        std::optional<int64_t> divisor_override) {
    TensorPtr x = input;
    autocast_args(name.c_str(), x);
    return ops::avg_pool(name.c_str(), x, kernel, stride, padding, ceil_mode, count_include_pad, divisor_override);
  }, nb::arg("name"), nb::arg("input"), nb::arg("kernel"), nb::arg("stride"), nb::arg("padding"), nb::arg("ceil_mode"),
     nb::arg("count_include_pad"), nb::arg("divisor_override").none());
  m.def("_adaptive_avg_pool", [](const std::string& name, const TensorPtr& input, const IntVec& output_size) {
    TensorPtr x = input;
    autocast_args(name.c_str(), x);
    return ops::adaptive_avg_pool(name.c_str(), x, output_size);
  });
  m.def("_adaptive_max_pool", [](const std::string& name, const TensorPtr& input, const IntVec& output_size) {
    return ops::adaptive_max_pool(name.c_str(), input, output_size);
  });
}

}  // namespace lucid::bindings
