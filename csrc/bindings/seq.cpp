// The sequence-layer ops (ops/seq_ops.h) as lucid._C._<op>; argument checking in
// PyTorch's spellings lives in python/lucid/nn/_functional_seq.py.
#include <nanobind/stl/optional.h>
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "bindings/common.h"
#include "ops/seq_ops.h"
#ifdef LUCID_WITH_CUDA
#include "backend/cuda/register.h"
#endif

namespace lucid::bindings {

void init_seq(nb::module_& m) {
  m.def("_norm_last_dims", [](TensorPtr x, int64_t k, std::optional<TensorPtr> w, std::optional<TensorPtr> b,
                              double eps, bool rms) {
    return ops::norm_last_dims(x, k, w.value_or(nullptr), b.value_or(nullptr), eps, rms);
  }, nb::arg("x"), nb::arg("k"), nb::arg("weight").none(), nb::arg("bias").none(), nb::arg("eps"), nb::arg("rms"));
  m.def("_rope", &ops::rope, nb::arg("x"), nb::arg("dims"), nb::arg("traditional"), nb::arg("base"), nb::arg("scale"),
        nb::arg("offset"));
  m.def("_lstm_cell_fused", [](TensorPtr gates, TensorPtr c_prev) {
    auto r = ops::lstm_cell_fused(gates, c_prev);
    return nb::make_tuple(r[0], r[1]);
  });
  m.def("_fused_attention", [](TensorPtr q, TensorPtr k, TensorPtr v, double scale, bool causal,
                               std::optional<TensorPtr> mask, double dropout) {
    auto r = ops::attention_fused(q, k, v, scale, causal, mask.value_or(nullptr), dropout);
    return nb::make_tuple(r[0], r[1]);
  }, nb::arg("q"), nb::arg("k"), nb::arg("v"), nb::arg("scale"), nb::arg("causal"), nb::arg("mask").none() = nb::none(),
     nb::arg("dropout") = 0.0);
  // Whether _fused_attention of these operands runs a fused GPU kernel (cuDNN's flash
  // attention; its forward and backward plans are made and cached now). False on the
  // CPU, where scaled_dot_product_attention keeps its composite form.
  m.def("_fused_attention_supported", [](TensorPtr q, TensorPtr k, TensorPtr v, bool causal,
                                         std::optional<TensorPtr> mask, double dropout) {
#ifdef LUCID_WITH_CUDA
    if (q->is_gpu_storage()) {
      TensorPtr bias = mask ? ops::attention_operand(*mask) : nullptr;
      return cuda::attention_supported(*ops::attention_operand(q), *ops::attention_operand(k),
                                       *ops::attention_operand(v), causal, bias.get(), dropout);
    }
#endif
    (void)k, (void)v, (void)causal, (void)mask, (void)dropout;
    return false;
  }, nb::arg("q"), nb::arg("k"), nb::arg("v"), nb::arg("causal"), nb::arg("mask").none() = nb::none(),
     nb::arg("dropout") = 0.0);
  m.def("_ctc_loss_nll", [](TensorPtr lp, TensorPtr targets, std::vector<int64_t> il, std::vector<int64_t> tl,
                            int64_t blank) { return ops::ctc_loss_nll(lp, targets, il, tl, blank); });
  m.def("_cross_entropy", [](TensorPtr x, TensorPtr target, std::optional<TensorPtr> weight, int64_t ignore_index,
                             std::string reduction, double label_smoothing) {
    return ops::cross_entropy(x, target, weight.value_or(nullptr), ignore_index, reduction, label_smoothing);
  }, nb::arg("x"), nb::arg("target"), nb::arg("weight").none(), nb::arg("ignore_index"), nb::arg("reduction"),
        nb::arg("label_smoothing"));
  m.def("_nll_loss", [](TensorPtr x, TensorPtr target, std::optional<TensorPtr> weight, int64_t ignore_index,
                        std::string reduction) {
    return ops::nll_loss(x, target, weight.value_or(nullptr), ignore_index, reduction);
  }, nb::arg("x"), nb::arg("target"), nb::arg("weight").none(), nb::arg("ignore_index"), nb::arg("reduction"));
  m.def("_lstm_layer", [](TensorPtr gx, TensorPtr h0, TensorPtr c0, TensorPtr w_hh, bool reverse) {
    auto r = ops::lstm_layer(gx, h0, c0, w_hh, reverse);
    return nb::make_tuple(r[0], r[1], r[2]);
  });
  m.def("_gru_layer", [](TensorPtr gx, TensorPtr h0, TensorPtr w_hh, std::optional<TensorPtr> b_hh, bool reverse) {
    auto r = ops::gru_layer(gx, h0, w_hh, b_hh.value_or(nullptr), reverse);
    return nb::make_tuple(r[0], r[1]);
  }, nb::arg("gx"), nb::arg("h0"), nb::arg("w_hh"), nb::arg("b_hh").none(), nb::arg("reverse"));
  m.def("_gru_cell_fused", [](TensorPtr gx, TensorPtr gh, TensorPtr h_prev) { return ops::gru_cell_fused(gx, gh, h_prev); });
}

}  // namespace lucid::bindings
