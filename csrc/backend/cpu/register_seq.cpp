// CPU kernels of the sequence-layer primitives (ops/prims/seq.h): adapters to the
// fused row and cell kernels and CTC of seq_kernels.h, and to the layer loops of
// seq_layers.h.
#include "backend/cpu/register.h"
#include "backend/cpu/norm_kernels.h"
#include "backend/cpu/seq_kernels.h"
#include "backend/cpu/seq_layers.h"
#include "core/error.h"
#include "ops/prims/seq.h"

namespace lucid::cpu {

namespace {

using ops::Inputs;
using ops::Outputs;
using ops::prim_cast;

// Element 0 of a host tensor as T*; null for an absent (null) tensor.
template <class T>
T* data(const TensorImpl* t) {
  return t ? reinterpret_cast<T*>(t->host_ptr()) : nullptr;
}

void norm_rows_kernel(const ops::Primitive& prim, Outputs outs, Inputs ins) {
  const auto& p = prim_cast<ops::NormRows>(prim);
  const auto t = p.tensors(outs, ins);
  auto half = [&]<typename T>() {  // 16-bit x and y, float32 the rest (ops/seq_norm.cpp)
    layer_norm_half_rows<T>(data<T>(t.x), data<float>(t.weight), data<float>(t.bias), data<T>(t.y),
                            data<float>(t.mean), data<float>(t.rstd), p.rows(ins), p.n, p.eps, p.rms);
  };
  if (t.x->dtype() == Dtype::F16) return half.template operator()<Half>();
  if (t.x->dtype() == Dtype::BF16) return half.template operator()<BFloat16>();
  visit_float32_or_64(t.x->dtype(), [&](auto z) {
    using T = decltype(z);
    layer_norm_rows<T>(data<T>(t.x), data<T>(t.weight), data<T>(t.bias), data<T>(t.y), data<T>(t.mean),
                         data<T>(t.rstd), p.rows(ins), p.n, p.eps, p.rms);
  });
}

void norm_rows_backward_kernel(const ops::Primitive& prim, Outputs outs, Inputs ins) {
  const auto& p = prim_cast<ops::NormRowsBackward>(prim);
  const auto t = p.tensors(outs, ins);
  visit_float32_or_64(t.x->dtype(), [&](auto z) {
    using T = decltype(z);
    layer_norm_rows_backward<T>(data<T>(t.dy), data<T>(t.x), data<T>(t.weight), data<T>(t.mean), data<T>(t.rstd),
                          data<T>(t.dx), data<T>(t.dweight), data<T>(t.dbias), p.rows(ins), p.n, p.rms);
  });
}

void lstm_cell_kernel(const ops::Primitive&, Outputs outs, Inputs ins) {
  const int64_t B = ins[1]->shape()[0], H = ins[1]->shape()[1];
  visit_float32_or_64(ins[0]->dtype(), [&](auto z) {
    using T = decltype(z);
    lstm_cell_forward<T>(data<T>(ins[0]), data<T>(ins[1]), data<T>(outs[0]), data<T>(outs[1]), data<T>(outs[2]), B, H);
  });
}

void lstm_cell_backward_kernel(const ops::Primitive&, Outputs outs, Inputs ins) {
  const int64_t B = outs[1]->shape()[0], H = outs[1]->shape()[1];
  visit_float32_or_64(ins[0]->dtype(), [&](auto z) {
    using T = decltype(z);
    lstm_cell_backward<T>(data<T>(ins[0]), data<T>(ins[1]), data<T>(ins[2]), data<T>(ins[3]), data<T>(ins[4]),
                          data<T>(outs[0]), data<T>(outs[1]), B, H);
  });
}

void gru_cell_kernel(const ops::Primitive&, Outputs outs, Inputs ins) {
  const int64_t B = ins[2]->shape()[0], H = ins[2]->shape()[1];
  visit_float32_or_64(ins[0]->dtype(), [&](auto z) {
    using T = decltype(z);
    gru_cell_forward<T>(data<T>(ins[0]), data<T>(ins[1]), data<T>(ins[2]), data<T>(outs[0]), data<T>(outs[1]), B, H);
  });
}

void gru_cell_backward_kernel(const ops::Primitive&, Outputs outs, Inputs ins) {
  const int64_t B = outs[2]->shape()[0], H = outs[2]->shape()[1];
  visit_float32_or_64(ins[0]->dtype(), [&](auto z) {
    using T = decltype(z);
    gru_cell_backward<T>(data<T>(ins[0]), data<T>(ins[1]), data<T>(ins[2]), data<T>(ins[3]), data<T>(outs[0]),
                         data<T>(outs[1]), data<T>(outs[2]), B, H);
  });
}

void lstm_layer_kernel(const ops::Primitive& prim, Outputs outs, Inputs ins) {
  lstm_layer_forward(*ins[0], *ins[1], *ins[2], *ins[3], *outs[0], *outs[1], *outs[2],
                     prim_cast<ops::LstmLayer>(prim).reverse);
}

void lstm_layer_backward_kernel(const ops::Primitive& prim, Outputs outs, Inputs ins) {
  lstm_layer_backward(*ins[0], *ins[1], *ins[2], *ins[3], *ins[4], *ins[5], *ins[6], *ins[7], *ins[8], *outs[0],
                      *outs[1], *outs[2], *outs[3], prim_cast<ops::LstmLayerBackward>(prim).reverse);
}

void gru_layer_kernel(const ops::Primitive& prim, Outputs outs, Inputs ins) {
  const auto& p = prim_cast<ops::GruLayer>(prim);
  gru_layer_forward(*ins[0], *ins[1], *ins[2], p.has_bias ? ins[3] : nullptr, *outs[0], *outs[1], *outs[2],
                    p.reverse);
}

void gru_layer_backward_kernel(const ops::Primitive& prim, Outputs outs, Inputs ins) {
  gru_layer_backward(*ins[0], *ins[1], *ins[2], *ins[3], *ins[4], *ins[5], *ins[6], *outs[0], *outs[1], *outs[2],
                     *outs[3], prim_cast<ops::GruLayerBackward>(prim).reverse);
}

// Every target label of every entry in [0, C), before anything is computed.
void check_target_labels(const int64_t* targets, const std::vector<int64_t>& tl, int64_t smax, int64_t C) {
  for (size_t b = 0; b < tl.size(); ++b)
    for (int64_t j = 0; j < tl[b]; ++j) {
      const int64_t label = targets[int64_t(b) * smax + j];
      LUCID_CHECK(label >= 0 && label < C, RuntimeError, "ctc_loss(): target label ", label,
                  " is out of the class range [0, ", C, ")");
    }
}

void ctc_loss_kernel(const ops::Primitive& prim, Outputs outs, Inputs ins) {
  const auto& p = prim_cast<ops::CtcLoss>(prim);
  const TensorImpl *lp = ins[0], *tg = ins[1];
  const int64_t Tn = lp->shape()[0], N = lp->shape()[1], C = lp->shape()[2], smax = tg->shape()[1];
  check_target_labels(data<int64_t>(tg), p.target_lengths, smax, C);
  visit_float32_or_64(lp->dtype(), [&](auto z) {
    using T = decltype(z);
    ctc_forward<T>(data<T>(lp), data<int64_t>(tg), p.input_lengths.data(), p.target_lengths.data(), Tn, N, C, smax,
                   p.blank, data<double>(outs[0]), data<double>(outs[1]));
  });
}

void ctc_loss_backward_kernel(const ops::Primitive& prim, Outputs outs, Inputs ins) {
  const auto& p = prim_cast<ops::CtcLossBackward>(prim);
  const TensorImpl *lp = ins[0], *tg = ins[1];
  const int64_t Tn = lp->shape()[0], N = lp->shape()[1], C = lp->shape()[2], smax = tg->shape()[1];
  visit_float32_or_64(lp->dtype(), [&](auto z) {
    using T = decltype(z);
    ctc_backward<T>(data<T>(lp), data<int64_t>(tg), p.input_lengths.data(), p.target_lengths.data(), Tn, N, C, smax,
                    p.blank, data<double>(ins[2]), data<double>(ins[3]), data<T>(ins[4]), data<T>(outs[0]));
  });
}

}  // namespace

void register_seq_kernels() {
  using ops::Prim;
  ops::register_kernel(Prim::NormRows, DeviceType::CPU, norm_rows_kernel);
  ops::register_kernel(Prim::NormRowsBackward, DeviceType::CPU, norm_rows_backward_kernel);
  ops::register_kernel(Prim::LstmCell, DeviceType::CPU, lstm_cell_kernel);
  ops::register_kernel(Prim::LstmCellBackward, DeviceType::CPU, lstm_cell_backward_kernel);
  ops::register_kernel(Prim::GruCell, DeviceType::CPU, gru_cell_kernel);
  ops::register_kernel(Prim::GruCellBackward, DeviceType::CPU, gru_cell_backward_kernel);
  ops::register_kernel(Prim::LstmLayer, DeviceType::CPU, lstm_layer_kernel);
  ops::register_kernel(Prim::LstmLayerBackward, DeviceType::CPU, lstm_layer_backward_kernel);
  ops::register_kernel(Prim::GruLayer, DeviceType::CPU, gru_layer_kernel);
  ops::register_kernel(Prim::GruLayerBackward, DeviceType::CPU, gru_layer_backward_kernel);
  ops::register_kernel(Prim::CtcLoss, DeviceType::CPU, ctc_loss_kernel);
  ops::register_kernel(Prim::CtcLossBackward, DeviceType::CPU, ctc_loss_backward_kernel);
  register_attention_kernels();
  register_rope_kernels();
}

}  // namespace lucid::cpu
