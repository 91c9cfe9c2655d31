// The sequence-layer ops of issue 5 with fused kernels (ops/prims/seq.h): layer_norm /
// rms_norm and the pointwise LSTM / GRU cells (ops/seq_norm.cpp, ops/seq_cells.cpp).
#pragma once

#include <string>
#include <vector>

#include "core/tensor_impl.h"

namespace lucid::ops {

// Normalises over the last `norm_ndim` dims of x; weight/bias (may be null) have that
// shape. rms: y = x / sqrt(mean(x^2) + eps) * weight (bias must be null).
TensorPtr norm_last_dims(const TensorPtr& x, int64_t norm_ndim, const TensorPtr& weight, const TensorPtr& bias,
                         double eps, bool rms);

// Every tensor (nulls skipped) is on the first one's device and has its dtype, else a
// RuntimeError naming `name` (seq_cells.cpp).
void check_same_device_and_dtype(const char* name, const std::vector<TensorPtr>& ts);

// The time step that step k of a layer's loop over T steps handles (from the end
// for a reverse direction): the LSTM and GRU layers (seq_lstm_layer.cpp,
// seq_gru_layer.cpp, and their loops in backend/cpu/seq_layers.cpp).
inline int64_t step_at(int64_t k, int64_t T, bool reverse) { return reverse ? T - 1 - k : k; }

// gates [B, 4H] (i, f, g, o pre-activations, biases included), c_prev [B, H] -> {h, c}.
std::vector<TensorPtr> lstm_cell_fused(const TensorPtr& gates, const TensorPtr& c_prev);
// gx, gh [B, 3H] (r, z, n; biases included), h_prev [B, H] -> h.
TensorPtr gru_cell_fused(const TensorPtr& gx, const TensorPtr& gh, const TensorPtr& h_prev);

}  // namespace lucid::ops

namespace lucid::ops {

// CTC negative log-likelihood per batch entry ([N], log_probs' dtype) of log_probs
// [T, N, C] (float32/float64) and padded int64 targets [N, smax]. Impossible
// alignments give inf. The gradient is torch's (for logits through log_softmax).
TensorPtr ctc_loss_nll(const TensorPtr& log_probs, const TensorPtr& targets, const std::vector<int64_t>& input_lengths,
                       const std::vector<int64_t>& target_lengths, int64_t blank);

// torch's cross_entropy with class indices (ops/cross_entropy.cpp): x [N, C, d...]
// (floating), target int64 [N, d...], weight [C] or null; reduction "none" ([N, d...]),
// "sum" or "mean" (0-d), in x's dtype.
TensorPtr cross_entropy(const TensorPtr& x, const TensorPtr& target, const TensorPtr& weight, int64_t ignore_index,
                        const std::string& reduction, double label_smoothing);
// torch's nll_loss: the same with x holding log-probabilities (no softmax).
TensorPtr nll_loss(const TensorPtr& x, const TensorPtr& target, const TensorPtr& weight, int64_t ignore_index,
                   const std::string& reduction);

}  // namespace lucid::ops

namespace lucid::ops {

// One direction of one LSTM layer over a whole sequence: gx [T, B, 4H] (the input
// projections, biases included), h0, c0 [B, H], w_hh [4H, H] -> {out [T, B, H], h_T, c_T}.
// The loop runs in C++ (a gemm and the fused cell per step); the backward runs the
// reverse loop and forms d w_hh as one gemm over all steps (ops/seq_lstm_layer.cpp).
std::vector<TensorPtr> lstm_layer(const TensorPtr& gx, const TensorPtr& h0, const TensorPtr& c0,
                                  const TensorPtr& w_hh, bool reverse);

// d gates and d c_prev of the LSTM cell, written with differentiable ops (create_graph).
std::vector<TensorPtr> lstm_cell_grads_with_ops(const TensorPtr& gates, const TensorPtr& c_prev,
                                                const TensorPtr& gh, const TensorPtr& gc);

}  // namespace lucid::ops

namespace lucid::ops {

// One direction of one GRU layer: gx [T, B, 3H] (input projections with b_ih), h0 [B, H],
// w_hh [3H, H], b_hh [3H] or null -> {out [T, B, H], h_T} (ops/seq_gru_layer.cpp).
std::vector<TensorPtr> gru_layer(const TensorPtr& gx, const TensorPtr& h0, const TensorPtr& w_hh,
                                 const TensorPtr& b_hh, bool reverse);

// d gx, d gh, d h_prev of the GRU cell with differentiable ops (create_graph).
std::vector<TensorPtr> gru_cell_grads_with_ops(const TensorPtr& gx, const TensorPtr& gh, const TensorPtr& h_prev,
                                               const TensorPtr& g);

}  // namespace lucid::ops

namespace lucid::ops {

// lucid.fast.rope (MLX's mx.fast.rope): x ([..., L, D], floating) with its first `dims`
// features of row l turned pairwise by (offset + l) * scale * base^(-2i / dims); one
// kernel (the Rope primitive), differentiable (its gradient is the opposite rotation).
TensorPtr rope(const TensorPtr& x, int64_t dims, bool traditional, double base, double scale, int64_t offset);

// Fused scaled dot-product attention (ops/attention.cpp): q [B, Hq, Sq, D], k [B, Hk,
// Skv, D], v [B, Hk, Skv, Dv] of one floating dtype, Hq a multiple of Hk, and an
// optional additive mask `bias` [1 or B, 1 or Hq, Sq, Skv] of q's dtype that takes no
// gradient -> {o [B, Hq, Sq, Dv] (laid out as q), stats [B, Hq, Sq] (the rows'
// log-sum-exp)}, differentiable in q, k and v (once: no create_graph). A row whose
// mask is -inf everywhere has no weights: its output is 0 (the caller's to avoid).
// dropout in [0, 1): the weights' dropout (AttentionDropout), drawn from the default
// generator; the backward drops the same weights.
std::vector<TensorPtr> attention_fused(const TensorPtr& q, const TensorPtr& k, const TensorPtr& v, double scale,
                                       bool causal, const TensorPtr& bias = nullptr, double dropout = 0.0);
// t as the attention kernels read it: t itself when its rows are of unit stride and
// 16-byte aligned (cuDNN's requirement), else a contiguous copy. (A mask too.)
TensorPtr attention_operand(const TensorPtr& t);

}  // namespace lucid::ops
