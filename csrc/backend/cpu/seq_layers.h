// The LSTM and GRU layer loops over a whole sequence (ops/prims/seq.h: LstmLayer,
// GruLayer and their backward): per step a gemm with the packed w_hh and the fused
// cell of seq_kernels.h, every step's activations kept; the backward runs the reverse
// loop and forms d w_hh as ONE gemm over all T * B rows. Every tensor is a contiguous
// float32 or float64 host tensor of one dtype; shapes as in ops/prims/seq.h.
#pragma once

#include "core/tensor_impl.h"

namespace lucid::cpu {

void lstm_layer_forward(const TensorImpl& gx, const TensorImpl& h0, const TensorImpl& c0, const TensorImpl& w_hh,
                        TensorImpl& out, TensorImpl& cs, TensorImpl& act, bool reverse);
void lstm_layer_backward(const TensorImpl& g_out, const TensorImpl& g_h, const TensorImpl& g_c, const TensorImpl& h0,
                         const TensorImpl& c0, const TensorImpl& w_hh, const TensorImpl& out, const TensorImpl& cs,
                         const TensorImpl& act, TensorImpl& dgx, TensorImpl& dh, TensorImpl& dc, TensorImpl& dw,
                         bool reverse);

// b_hh may be null.
void gru_layer_forward(const TensorImpl& gx, const TensorImpl& h0, const TensorImpl& w_hh, const TensorImpl* b_hh,
                       TensorImpl& out, TensorImpl& gh, TensorImpl& act, bool reverse);
void gru_layer_backward(const TensorImpl& g_out, const TensorImpl& g_h, const TensorImpl& h0, const TensorImpl& w_hh,
                        const TensorImpl& out, const TensorImpl& gh, const TensorImpl& act, TensorImpl& dgx,
                        TensorImpl& dgh, TensorImpl& dh, TensorImpl& dw, bool reverse);

}  // namespace lucid::cpu
