// GPU kernels of the LSTM / GRU cell and layer primitives (ops/prims/seq.h): the cells
// are one launch of seq_cells.cu each; a layer is the CPU's loop (backend/cpu/
// seq_layers.cpp) run from the host with the device doing every step.
//
// Note [The layer loops on the GPU]
// The input projection of every step arrives precomputed (gx, one big product made by
// the caller). Each step is then a cuBLASLt product through the Gemm primitive
// (gemm.cpp, on the device's stream) and one fused cell kernel, both on the same
// stream, so the host only queues work and never waits. The LSTM builds its gates in
// place of `act` (gx copied there once, the product added with beta = 1, the cell
// activating in place); the GRU writes the bare product to gh and its cell adds b_hh
// and stores the sum back. The backward runs the loop in reverse with the state
// gradients updated in place (dc, dh), then forms d w_hh = dGates^T @ H_prev as ONE
// product over all T * B rows: deterministic, no atomics. H_prev is `out` shifted by
// one step with h0 at the first step, two copies.
#include <cuda_runtime_api.h>

#include "backend/common/seq_views.h"
#include "backend/cuda/check.h"
#include "backend/cuda/device_guard.h"
#include "backend/cuda/register.h"
#include "backend/cuda/seq_kernels.h"
#include "backend/cuda/stream.h"
#include "ops/prims/linalg.h"
#include "ops/prims/seq.h"
#include "ops/seq_ops.h"

namespace lucid::cuda {

namespace {

using backend::as_matrix;
using backend::step_view;
using backend::transposed;

using ops::Inputs;
using ops::Outputs;
using ops::prim_cast;
using ops::step_at;

bool is_f64(const TensorImpl* t) { return t->dtype() == Dtype::F64; }

const void* cptr(const TensorImpl* t) { return t->data_ptr(); }
void* mptr(const TensorImpl* t) { return t->data_ptr(); }

// Element `e` of a contiguous tensor (the start of a step's [B, X] block).
const std::byte* at(const TensorImpl& t, int64_t e) { return t.data_ptr() + e * int64_t(t.itemsize()); }
std::byte* at_mut(const TensorImpl& t, int64_t e) { return t.data_ptr() + e * int64_t(t.itemsize()); }

// out = a @ b + beta * out through the Gemm primitive (cuBLASLt, exact float32).
void gemm(TensorImpl& out, const TensorImpl& a, const TensorImpl& b, double beta) {
  ops::Gemm p;
  p.alpha = Scalar(1.0);
  p.beta = Scalar(beta);
  ops::launch(p, {&out}, {&a, &b});
}

void copy(void* dst, const void* src, int64_t bytes, cudaStream_t s) {
  if (bytes > 0) LUCID_CUDA_CHECK(cudaMemcpyAsync(dst, src, size_t(bytes), cudaMemcpyDeviceToDevice, s));
}

// H_prev [T, B, H] of a layer: step t's previous hidden state (h0 at the first step).
TensorPtr previous_states(const TensorImpl& out, const TensorImpl& h0, bool reverse, cudaStream_t s) {
  const int64_t Tn = out.shape()[0], BH = h0.numel(), bytes = BH * int64_t(out.itemsize());
  TensorPtr hprev = TensorImpl::empty(out.shape(), out.dtype(), out.device());
  const int64_t first = step_at(0, Tn, reverse);
  copy(at_mut(*hprev, first * BH), cptr(&h0), bytes, s);
  // forward: hprev[1:] = out[:-1]; reverse: hprev[:-1] = out[1:]
  copy(at_mut(*hprev, (reverse ? 0 : 1) * BH), at(out, (reverse ? 1 : 0) * BH), (Tn - 1) * bytes, s);
  return hprev;
}

// ---- cells -------------------------------------------------------------------------

void lstm_cell_prim(const ops::Primitive&, Outputs outs, Inputs ins) {
  const int64_t B = ins[1]->shape()[0], H = ins[1]->shape()[1];
  const int device = ins[0]->device().index;
  DeviceGuard guard(device);
  lstm_cell(is_f64(ins[0]), cptr(ins[0]), cptr(ins[1]), mptr(outs[0]), mptr(outs[1]), mptr(outs[2]), B, H,
            stream(device));
}

void lstm_cell_backward_prim(const ops::Primitive&, Outputs outs, Inputs ins) {
  const int64_t B = outs[1]->shape()[0], H = outs[1]->shape()[1];
  const int device = ins[0]->device().index;
  DeviceGuard guard(device);
  lstm_cell_backward(is_f64(ins[0]), cptr(ins[0]), nullptr, cptr(ins[1]), cptr(ins[2]), cptr(ins[3]), cptr(ins[4]),
                     mptr(outs[0]), mptr(outs[1]), B, H, stream(device));
}

void gru_cell_prim(const ops::Primitive&, Outputs outs, Inputs ins) {
  const int64_t B = ins[2]->shape()[0], H = ins[2]->shape()[1];
  const int device = ins[0]->device().index;
  DeviceGuard guard(device);
  // No bias: gh is only read.
  gru_cell(is_f64(ins[0]), cptr(ins[0]), const_cast<void*>(cptr(ins[1])), nullptr, cptr(ins[2]), mptr(outs[0]),
           mptr(outs[1]), B, H, stream(device));
}

void gru_cell_backward_prim(const ops::Primitive&, Outputs outs, Inputs ins) {
  const int64_t B = outs[2]->shape()[0], H = outs[2]->shape()[1];
  const int device = ins[0]->device().index;
  DeviceGuard guard(device);
  gru_cell_backward(is_f64(ins[0]), cptr(ins[0]), nullptr, cptr(ins[1]), cptr(ins[2]), cptr(ins[3]), mptr(outs[0]),
                    mptr(outs[1]), mptr(outs[2]), B, H, stream(device));
}

// ---- layers (Note [The layer loops on the GPU]) ----------------------------------------

// ins: {gx [T, B, 4H], h0, c0, w_hh [4H, H]}; outs: {out, cs [T, B, H], act [T, B, 4H]}.
void lstm_layer_prim(const ops::Primitive& prim, Outputs outs, Inputs ins) {
  const bool reverse = prim_cast<ops::LstmLayer>(prim).reverse;
  const TensorImpl &gx = *ins[0], &h0 = *ins[1], &c0 = *ins[2], &w = *ins[3];
  TensorImpl &out = *outs[0], &cs = *outs[1], &act = *outs[2];
  const int64_t Tn = gx.shape()[0], B = gx.shape()[1], G = gx.shape()[2], BH = B * (G / 4);
  const int device = gx.device().index;
  DeviceGuard guard(device);
  const cudaStream_t s = stream(device);
  copy(mptr(&act), cptr(&gx), int64_t(gx.nbytes()), s);  // the gates start as the input projections
  const TensorPtr w_t = transposed(w);
  TensorPtr h_prev;
  const void* c_prev = cptr(&c0);
  for (int64_t k = 0; k < Tn; ++k) {
    const int64_t t = step_at(k, Tn, reverse);
    TensorPtr gates = step_view(act, t), h = step_view(out, t);
    gemm(*gates, h_prev ? *h_prev : h0, *w_t, 1.0);
    void* c = at_mut(cs, t * BH);
    lstm_cell(is_f64(&gx), gates->data_ptr(), c_prev, h->data_ptr(), c, gates->data_ptr(), B, G / 4, s);
    h_prev = h;
    c_prev = c;
  }
}

// ins: {d out [T, B, H], d h_T, d c_T, h0, c0, w_hh, out, cs, act};
// outs: {d gx [T, B, 4H], d h0, d c0 [B, H], d w_hh [4H, H]}.
void lstm_layer_backward_prim(const ops::Primitive& prim, Outputs outs, Inputs ins) {
  const bool reverse = prim_cast<ops::LstmLayerBackward>(prim).reverse;
  const TensorImpl &g_out = *ins[0], &g_h = *ins[1], &g_c = *ins[2], &h0 = *ins[3], &c0 = *ins[4], &w = *ins[5];
  const TensorImpl &out = *ins[6], &cs = *ins[7], &act = *ins[8];
  TensorImpl &dgx = *outs[0], &dh = *outs[1], &dc = *outs[2], &dw = *outs[3];
  const int64_t Tn = act.shape()[0], B = act.shape()[1], G = act.shape()[2], H = G / 4, BH = B * H;
  const int device = act.device().index;
  DeviceGuard guard(device);
  const cudaStream_t s = stream(device);
  copy(mptr(&dh), cptr(&g_h), int64_t(g_h.nbytes()), s);
  copy(mptr(&dc), cptr(&g_c), int64_t(g_c.nbytes()), s);
  for (int64_t k = Tn - 1; k >= 0; --k) {
    const int64_t t = step_at(k, Tn, reverse);
    const int64_t tp = k == 0 ? -1 : step_at(k - 1, Tn, reverse);
    const void* c_prev = tp < 0 ? cptr(&c0) : at(cs, tp * BH);
    TensorPtr dg = step_view(dgx, t);
    // dh + d out[t] -> d gates[t]; dc -> d c_prev in place
    lstm_cell_backward(is_f64(&act), cptr(&dh), at(g_out, t * BH), cptr(&dc), at(act, t * B * G), at(cs, t * BH),
                       c_prev, dg->data_ptr(), mptr(&dc), B, H, s);
    gemm(dh, *dg, w, 0.0);  // dh_prev = d gates @ w_hh
  }
  const TensorPtr hprev = previous_states(out, h0, reverse, s);
  gemm(dw, *as_matrix(dgx, true), *as_matrix(*hprev, false), 0.0);
}

// ins: {gx [T, B, 3H], h0 [B, H], w_hh [3H, H], [b_hh [3H]]};
// outs: {out [T, B, H], gh, act [T, B, 3H]}.
void gru_layer_prim(const ops::Primitive& prim, Outputs outs, Inputs ins) {
  const auto& p = prim_cast<ops::GruLayer>(prim);
  const TensorImpl &gx = *ins[0], &h0 = *ins[1], &w = *ins[2];
  const void* b_hh = p.has_bias ? cptr(ins[3]) : nullptr;
  TensorImpl &out = *outs[0], &gh = *outs[1], &act = *outs[2];
  const int64_t Tn = gx.shape()[0], B = gx.shape()[1], G = gx.shape()[2];
  const int device = gx.device().index;
  DeviceGuard guard(device);
  const cudaStream_t s = stream(device);
  const TensorPtr w_t = transposed(w);
  TensorPtr h_prev;
  for (int64_t k = 0; k < Tn; ++k) {
    const int64_t t = step_at(k, Tn, p.reverse);
    TensorPtr ght = step_view(gh, t), h = step_view(out, t);
    const TensorImpl& hp = h_prev ? *h_prev : h0;
    gemm(*ght, hp, *w_t, 0.0);  // the cell adds b_hh
    gru_cell(is_f64(&gx), at(gx, t * B * G), ght->data_ptr(), b_hh, cptr(&hp), h->data_ptr(),
             at_mut(act, t * B * G), B, G / 3, s);
    h_prev = h;
  }
}

// ins: {d out [T, B, H], d h_T, h0, w_hh, out, gh, act};
// outs: {d gx, d gh [T, B, 3H], d h0 [B, H], d w_hh [3H, H]}.
void gru_layer_backward_prim(const ops::Primitive& prim, Outputs outs, Inputs ins) {
  const bool reverse = prim_cast<ops::GruLayerBackward>(prim).reverse;
  const TensorImpl &g_out = *ins[0], &g_h = *ins[1], &h0 = *ins[2], &w = *ins[3];
  const TensorImpl &out = *ins[4], &gh = *ins[5], &act = *ins[6];
  TensorImpl &dgx = *outs[0], &dgh = *outs[1], &dh = *outs[2], &dw = *outs[3];
  const int64_t Tn = act.shape()[0], B = act.shape()[1], G = act.shape()[2], H = G / 3, BH = B * H;
  const int device = act.device().index;
  DeviceGuard guard(device);
  const cudaStream_t s = stream(device);
  copy(mptr(&dh), cptr(&g_h), int64_t(g_h.nbytes()), s);
  for (int64_t k = Tn - 1; k >= 0; --k) {
    const int64_t t = step_at(k, Tn, reverse);
    const int64_t tp = k == 0 ? -1 : step_at(k - 1, Tn, reverse);
    const void* hp = tp < 0 ? cptr(&h0) : at(out, tp * BH);
    TensorPtr dght = step_view(dgh, t);
    // dh + d out[t] -> d gx[t], d gh[t]; dh <- its direct part dh * z, in place
    gru_cell_backward(is_f64(&act), cptr(&dh), at(g_out, t * BH), at(act, t * B * G), at(gh, t * B * G), hp,
                      at_mut(dgx, t * B * G), dght->data_ptr(), mptr(&dh), B, H, s);
    gemm(dh, *dght, w, 1.0);  // + d gh @ w_hh
  }
  const TensorPtr hprev = previous_states(out, h0, reverse, s);
  gemm(dw, *as_matrix(dgh, true), *as_matrix(*hprev, false), 0.0);
}

}  // namespace

void register_seq_kernels() {
  using ops::Prim;
  ops::register_kernel(Prim::LstmCell, DeviceType::GPU, lstm_cell_prim);
  ops::register_kernel(Prim::LstmCellBackward, DeviceType::GPU, lstm_cell_backward_prim);
  ops::register_kernel(Prim::GruCell, DeviceType::GPU, gru_cell_prim);
  ops::register_kernel(Prim::GruCellBackward, DeviceType::GPU, gru_cell_backward_prim);
  ops::register_kernel(Prim::LstmLayer, DeviceType::GPU, lstm_layer_prim);
  ops::register_kernel(Prim::LstmLayerBackward, DeviceType::GPU, lstm_layer_backward_prim);
  ops::register_kernel(Prim::GruLayer, DeviceType::GPU, gru_layer_prim);
  ops::register_kernel(Prim::GruLayerBackward, DeviceType::GPU, gru_layer_backward_prim);
  register_ctc_kernels();
}

}  // namespace lucid::cuda
