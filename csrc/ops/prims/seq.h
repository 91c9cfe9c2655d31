// Primitives of the sequence layers (ops/seq_norm.cpp, seq_cells.cpp,
// seq_lstm_layer.cpp, seq_gru_layer.cpp, ctc_loss.cpp). Every tensor is contiguous
// and float32 or float64 (CTC's targets int64, its alpha and nll float64); shapes come
// from the tensors. Optional tensors are listed only when present (the has_* flags).
#pragma once

#include <vector>

#include "core/generator.h"
#include "ops/primitive.h"

namespace lucid::ops {

// layer_norm / rms_norm of the rows of n elements (each row's mean and 1/std kept).
// ins: {x [rows, n], [weight [n]], [bias [n]]}; outs: {y, [mean [rows]] (not rms), rstd [rows]}.
struct NormRows : PrimitiveOf<Prim::NormRows, NormRows> {
  int64_t n = 0;
  double eps = 0;
  bool rms = false, has_weight = false, has_bias = false;
  const char* name() const override { return rms ? "rms_norm" : "layer_norm"; }

  // The launch's tensors by role (null where absent), for every backend's kernel.
  struct Tensors {
    const TensorImpl *x, *weight, *bias;
    TensorImpl *y, *mean, *rstd;
  };
  Tensors tensors(Outputs outs, Inputs ins) const {
    size_t i = 0, o = 0;
    Tensors t;
    t.x = next_tensor(ins, i), t.weight = next_tensor(ins, i, has_weight), t.bias = next_tensor(ins, i, has_bias);
    t.y = next_tensor(outs, o), t.mean = next_tensor(outs, o, !rms), t.rstd = next_tensor(outs, o);
    return t;
  }
  int64_t rows(Inputs ins) const { return n == 0 ? 0 : ins[0]->numel() / n; }
};

// Its fused backward. ins: {dy, x, [weight], [mean] (not rms), rstd};
// outs: {dx, [dweight] (has_weight), [dbias] (has_bias)}.
struct NormRowsBackward : PrimitiveOf<Prim::NormRowsBackward, NormRowsBackward> {
  int64_t n = 0;
  bool rms = false, has_weight = false, has_bias = false;
  const char* name() const override { return rms ? "rms_norm_backward" : "layer_norm_backward"; }

  struct Tensors {
    const TensorImpl *dy, *x, *weight, *mean, *rstd;
    TensorImpl *dx, *dweight, *dbias;
  };
  Tensors tensors(Outputs outs, Inputs ins) const {
    size_t i = 0, o = 0;
    Tensors t;
    t.dy = next_tensor(ins, i), t.x = next_tensor(ins, i), t.weight = next_tensor(ins, i, has_weight);
    t.mean = next_tensor(ins, i, !rms), t.rstd = next_tensor(ins, i);
    t.dx = next_tensor(outs, o), t.dweight = next_tensor(outs, o, has_weight), t.dbias = next_tensor(outs, o, has_bias);
    return t;
  }
  int64_t rows(Inputs ins) const { return n == 0 ? 0 : ins[1]->numel() / n; }
};

// The pointwise LSTM cell. ins: {gates [B, 4H] (pre-activation i, f, g, o), c_prev [B, H]};
// outs: {h, c [B, H], act [B, 4H] (the activated gates, for the backward)}.
struct LstmCell : PrimitiveOf<Prim::LstmCell, LstmCell> {
  const char* name() const override { return "lstm_cell"; }
};
// ins: {dh, dc, act, c, c_prev}; outs: {d gates [B, 4H], d c_prev [B, H]}.
struct LstmCellBackward : PrimitiveOf<Prim::LstmCellBackward, LstmCellBackward> {
  const char* name() const override { return "lstm_cell_backward"; }
};

// The pointwise GRU cell. ins: {gx, gh [B, 3H] (r, z, n; biases included), h_prev [B, H]};
// outs: {h [B, H], act [B, 3H] (r, z, n)}.
struct GruCell : PrimitiveOf<Prim::GruCell, GruCell> {
  const char* name() const override { return "gru_cell"; }
};
// ins: {dh, act, gh, h_prev}; outs: {d gx, d gh [B, 3H], d h_prev [B, H]}.
struct GruCellBackward : PrimitiveOf<Prim::GruCellBackward, GruCellBackward> {
  const char* name() const override { return "gru_cell_backward"; }
};

// One direction of one LSTM layer over the whole sequence: per step a gemm adding
// h @ w_hh^T to the step's input projection and the fused cell; one primitive, so the
// CPU loop stays one call. ins: {gx [T, B, 4H], h0, c0 [B, H], w_hh [4H, H]};
// outs: {out [T, B, H], cs [T, B, H] (every step's c), act [T, B, 4H]}.
struct LstmLayer : PrimitiveOf<Prim::LstmLayer, LstmLayer> {
  bool reverse = false;
  const char* name() const override { return "lstm_layer"; }
};
// The reverse loop, then d w_hh as one gemm over all steps.
// ins: {d out [T, B, H], d h_T, d c_T, h0, c0, w_hh, out, cs, act};
// outs: {d gx [T, B, 4H], d h0, d c0 [B, H], d w_hh [4H, H]}.
struct LstmLayerBackward : PrimitiveOf<Prim::LstmLayerBackward, LstmLayerBackward> {
  bool reverse = false;
  const char* name() const override { return "lstm_layer_backward"; }
};

// One direction of one GRU layer. ins: {gx [T, B, 3H] (b_ih included), h0 [B, H],
// w_hh [3H, H], [b_hh [3H]]}; outs: {out [T, B, H], gh [T, B, 3H] (every step's
// hidden projection), act [T, B, 3H]}.
struct GruLayer : PrimitiveOf<Prim::GruLayer, GruLayer> {
  bool reverse = false, has_bias = false;
  const char* name() const override { return "gru_layer"; }
};
// ins: {d out [T, B, H], d h_T, h0, w_hh, out, gh, act};
// outs: {d gx, d gh [T, B, 3H], d h0 [B, H], d w_hh [3H, H]}.
struct GruLayerBackward : PrimitiveOf<Prim::GruLayerBackward, GruLayerBackward> {
  bool reverse = false;
  const char* name() const override { return "gru_layer_backward"; }
};

// CTC's negative log-likelihood per batch entry, in log space. ins: {log_probs
// [T, N, C], targets [N, smax] (int64)}; outs: {alpha [N, T, 2 smax + 1], nll [N]}
// (float64). RuntimeError for a target label outside [0, C).
struct CtcLoss : PrimitiveOf<Prim::CtcLoss, CtcLoss> {
  std::vector<int64_t> input_lengths, target_lengths;
  int64_t blank = 0;
  const char* name() const override { return "ctc_loss"; }
};
// d log_probs of sum_b g[b] nll[b]. ins: {log_probs, targets, alpha, nll, g [N]};
// outs: {grad [T, N, C]}.
struct CtcLossBackward : PrimitiveOf<Prim::CtcLossBackward, CtcLossBackward> {
  std::vector<int64_t> input_lengths, target_lengths;
  int64_t blank = 0;
  const char* name() const override { return "ctc_loss_backward"; }
};

// Fused scaled dot-product attention (ops/attention.cpp): softmax(q k^T * scale) v per
// (batch, query head), the weights never stored. Grouped-query heads: query head h
// reads key/value head h / (Hq / Hk). causal: query i sees keys 0..i (torch's
// is_causal, top-left). Tensors may be strided views (the GPU wants the last stride 1);
// stats is the log-sum-exp of each query's scaled scores, which the backward reuses.
// ins: {q [B, Hq, Sq, D], k [B, Hk, Skv, D], v [B, Hk, Skv, Dv][, bias]}, bias an
// additive mask [1 or B, 1 or Hq, Sq, Skv] of q's dtype added to the scaled scores;
// outs: {o [B, Hq, Sq, Dv] (q's dtype), stats [B, Hq, Sq] (float32; float64 for float64)}.
// A row masked everywhere (-inf) gets o = 0 and stats = -inf.
// Dropout (dropout > 0): each weight is kept with probability 1 - dropout and scaled by
// 1 / (1 - dropout), after the softmax (stats stay those of the undropped weights).
// Which weights are kept is a function of (draw, the weight's place): the forward and
// its backward, given the same draw, drop the same ones. On the CPU weight
// ((b * Hq + h) * Sq + i) * Skv + j is kept when Philox word of that index (Note
// [Philox stream layout]) is at least dropout * 2^32; on the GPU cuDNN's own Philox
// stream decides, seeded from the same draw.
struct AttentionDropout {
  double p = 0.0;
  PhiloxDraw draw{};
  bool on() const { return p > 0.0; }
};
struct AttentionForward : PrimitiveOf<Prim::AttentionForward, AttentionForward> {
  double scale = 1.0;
  bool causal = false;
  AttentionDropout dropout;
  const char* name() const override { return "scaled_dot_product_attention"; }
};
// ins: {q, k, v, o, d o, stats[, bias]}; outs: {d q, d k, d v} (shaped and typed as q, k, v).
struct AttentionBackward : PrimitiveOf<Prim::AttentionBackward, AttentionBackward> {
  double scale = 1.0;
  bool causal = false;
  AttentionDropout dropout;  // the forward's
  const char* name() const override { return "scaled_dot_product_attention_backward"; }
};

}  // namespace lucid::ops
