// The LSTM and GRU layer loops (seq_layers.h).
//
// Why one call per layer: recorded step by step, a layer costs T addmm nodes whose
// backward makes two small gemms per step plus T accumulations of a [G, H] gradient
// for w_hh. Here the forward loop keeps every step's activations, and the backward's
// d w_hh = dGates^T @ H_prev is one large gemm over all T * B rows.
#include "backend/cpu/seq_layers.h"

#include <cstring>
#include <utility>

#include "backend/common/seq_views.h"
#include "backend/cpu/blas.h"
#include "backend/cpu/seq_kernels.h"
#include "ops/seq_ops.h"

namespace lucid::cpu {

namespace {

using backend::as_matrix;
using backend::step_view;
using backend::transposed;

using ops::step_at;

template <class T>
T* data(const TensorImpl& t) {
  return reinterpret_cast<T*>(t.host_ptr());
}

// dw = dgates^T @ h_prev over all T * B rows.
void weight_grad(TensorImpl& dw, const TensorImpl& dgates, const TensorImpl& hprev) {
  gemm(dw, *as_matrix(dgates, true), *as_matrix(hprev, false), Scalar(1.0), Scalar(0.0));
}

template <class T>
void lstm_forward(const TensorImpl& gx, const TensorImpl& h0, const TensorImpl& c0, const TensorImpl& w,
                  TensorImpl& out, TensorImpl& cs, TensorImpl& act, bool reverse) {
  const int64_t Tn = gx.shape()[0], B = gx.shape()[1], G = gx.shape()[2], H = G / 4;
  TensorPtr w_t = transposed(w);
  const RepeatedRhs w_hh(*w_t, B);  // packed once for the T products
  TensorPtr h_prev, c_prev;
  for (int64_t k = 0; k < Tn; ++k) {
    const int64_t t = step_at(k, Tn, reverse);
    TensorPtr gates = step_view(act, t);  // the gates are built in place of the activations
    std::memcpy(data<T>(*gates), data<T>(gx) + t * B * G, sizeof(T) * B * G);
    w_hh.gemm(*gates, h_prev ? *h_prev : h0, Scalar(1.0));
    TensorPtr h = step_view(out, t), c = step_view(cs, t);
    lstm_cell_forward<T>(data<T>(*gates), data<T>(c_prev ? *c_prev : c0), data<T>(*h), data<T>(*c), data<T>(*gates),
                         B, H);
    h_prev = h;
    c_prev = c;
  }
}

template <class T>
void lstm_backward(const TensorImpl& g_out, const TensorImpl& g_h, const TensorImpl& g_c, const TensorImpl& h0,
                   const TensorImpl& c0, const TensorImpl& w, const TensorImpl& out, const TensorImpl& cs,
                   const TensorImpl& act, TensorImpl& dgx, TensorImpl& dh, TensorImpl& dc_out, TensorImpl& dw,
                   bool reverse) {
  const int64_t Tn = act.shape()[0], B = act.shape()[1], G = act.shape()[2], H = G / 4;
  TensorPtr hprev = TensorImpl::empty({Tn, B, H}, act.dtype(), act.device());
  TensorPtr dc_next = TensorImpl::empty({B, H}, act.dtype(), act.device());
  std::memcpy(data<T>(dh), data<T>(g_h), sizeof(T) * B * H);
  std::memcpy(data<T>(dc_out), data<T>(g_c), sizeof(T) * B * H);
  TensorImpl* dc = &dc_out;
  TensorImpl* dc_other = dc_next.get();
  const T* go = data<T>(g_out);
  const RepeatedRhs w_hh(w, B);
  for (int64_t k = Tn - 1; k >= 0; --k) {
    const int64_t t = step_at(k, Tn, reverse);
    const int64_t tp = k == 0 ? -1 : step_at(k - 1, Tn, reverse);
    T* dhp = data<T>(dh);
    const T* got = go + t * B * H;
    for (int64_t i = 0; i < B * H; ++i) dhp[i] += got[i];
    const T* cprev = tp < 0 ? data<T>(c0) : data<T>(cs) + tp * B * H;
    const T* hp = tp < 0 ? data<T>(h0) : data<T>(out) + tp * B * H;
    std::memcpy(data<T>(*hprev) + t * B * H, hp, sizeof(T) * B * H);
    TensorPtr dg = step_view(dgx, t);
    lstm_cell_backward<T>(dhp, data<T>(*dc), data<T>(act) + t * B * G, data<T>(cs) + t * B * H, cprev, data<T>(*dg),
                          data<T>(*dc_other), B, H);
    w_hh.gemm(dh, *dg, Scalar(0.0));  // dh_prev = dgates @ w_hh
    std::swap(dc, dc_other);
  }
  if (dc != &dc_out) std::memcpy(data<T>(dc_out), data<T>(*dc), sizeof(T) * B * H);
  weight_grad(dw, dgx, *hprev);
}

template <class T>
void gru_forward(const TensorImpl& gx, const TensorImpl& h0, const TensorImpl& w, const TensorImpl* b,
                 TensorImpl& out, TensorImpl& gh, TensorImpl& act, bool reverse) {
  const int64_t Tn = gx.shape()[0], B = gx.shape()[1], G = gx.shape()[2], H = G / 3;
  TensorPtr w_t = transposed(w);
  const RepeatedRhs w_hh(*w_t, B);  // packed once for the T products
  TensorPtr h_prev;
  for (int64_t k = 0; k < Tn; ++k) {
    const int64_t t = step_at(k, Tn, reverse);
    TensorPtr ght = step_view(gh, t);
    if (b)
      for (int64_t r = 0; r < B; ++r) std::memcpy(data<T>(*ght) + r * G, data<T>(*b), sizeof(T) * G);
    const TensorImpl& hp = h_prev ? *h_prev : h0;
    w_hh.gemm(*ght, hp, Scalar(b ? 1.0 : 0.0));
    TensorPtr h = step_view(out, t);
    gru_cell_forward<T>(data<T>(gx) + t * B * G, data<T>(*ght), data<T>(hp), data<T>(*h), data<T>(act) + t * B * G, B,
                        H);
    h_prev = h;
  }
}

template <class T>
void gru_backward(const TensorImpl& g_out, const TensorImpl& g_h, const TensorImpl& h0, const TensorImpl& w,
                  const TensorImpl& out, const TensorImpl& gh, const TensorImpl& act, TensorImpl& dgx,
                  TensorImpl& dgh, TensorImpl& dh_out, TensorImpl& dw, bool reverse) {
  const int64_t Tn = act.shape()[0], B = act.shape()[1], G = act.shape()[2], H = G / 3;
  TensorPtr hprev = TensorImpl::empty({Tn, B, H}, act.dtype(), act.device());
  TensorPtr dh_next = TensorImpl::empty({B, H}, act.dtype(), act.device());
  std::memcpy(data<T>(dh_out), data<T>(g_h), sizeof(T) * B * H);
  TensorImpl* dh = &dh_out;
  TensorImpl* dh_other = dh_next.get();
  const T* go = data<T>(g_out);
  const RepeatedRhs w_hh(w, B);
  for (int64_t k = Tn - 1; k >= 0; --k) {
    const int64_t t = step_at(k, Tn, reverse);
    const int64_t tp = k == 0 ? -1 : step_at(k - 1, Tn, reverse);
    T* dhp = data<T>(*dh);
    const T* got = go + t * B * H;
    for (int64_t i = 0; i < B * H; ++i) dhp[i] += got[i];
    const T* hp = tp < 0 ? data<T>(h0) : data<T>(out) + tp * B * H;
    std::memcpy(data<T>(*hprev) + t * B * H, hp, sizeof(T) * B * H);
    TensorPtr dght = step_view(dgh, t);
    gru_cell_backward<T>(dhp, data<T>(act) + t * B * G, data<T>(gh) + t * B * G, hp, data<T>(dgx) + t * B * G,
                         data<T>(*dght), data<T>(*dh_other), B, H);
    w_hh.gemm(*dh_other, *dght, Scalar(1.0));  // + d gh @ w_hh
    std::swap(dh, dh_other);
  }
  if (dh != &dh_out) std::memcpy(data<T>(dh_out), data<T>(*dh), sizeof(T) * B * H);
  weight_grad(dw, dgh, *hprev);
}

}  // namespace

void lstm_layer_forward(const TensorImpl& gx, const TensorImpl& h0, const TensorImpl& c0, const TensorImpl& w_hh,
                        TensorImpl& out, TensorImpl& cs, TensorImpl& act, bool reverse) {
  if (gx.dtype() == Dtype::F32) lstm_forward<float>(gx, h0, c0, w_hh, out, cs, act, reverse);
  else lstm_forward<double>(gx, h0, c0, w_hh, out, cs, act, reverse);
}

void lstm_layer_backward(const TensorImpl& g_out, const TensorImpl& g_h, const TensorImpl& g_c, const TensorImpl& h0,
                         const TensorImpl& c0, const TensorImpl& w_hh, const TensorImpl& out, const TensorImpl& cs,
                         const TensorImpl& act, TensorImpl& dgx, TensorImpl& dh, TensorImpl& dc, TensorImpl& dw,
                         bool reverse) {
  if (act.dtype() == Dtype::F32)
    lstm_backward<float>(g_out, g_h, g_c, h0, c0, w_hh, out, cs, act, dgx, dh, dc, dw, reverse);
  else
    lstm_backward<double>(g_out, g_h, g_c, h0, c0, w_hh, out, cs, act, dgx, dh, dc, dw, reverse);
}

void gru_layer_forward(const TensorImpl& gx, const TensorImpl& h0, const TensorImpl& w_hh, const TensorImpl* b_hh,
                       TensorImpl& out, TensorImpl& gh, TensorImpl& act, bool reverse) {
  if (gx.dtype() == Dtype::F32) gru_forward<float>(gx, h0, w_hh, b_hh, out, gh, act, reverse);
  else gru_forward<double>(gx, h0, w_hh, b_hh, out, gh, act, reverse);
}

void gru_layer_backward(const TensorImpl& g_out, const TensorImpl& g_h, const TensorImpl& h0, const TensorImpl& w_hh,
                        const TensorImpl& out, const TensorImpl& gh, const TensorImpl& act, TensorImpl& dgx,
                        TensorImpl& dgh, TensorImpl& dh, TensorImpl& dw, bool reverse) {
  if (act.dtype() == Dtype::F32) gru_backward<float>(g_out, g_h, h0, w_hh, out, gh, act, dgx, dgh, dh, dw, reverse);
  else gru_backward<double>(g_out, g_h, h0, w_hh, out, gh, act, dgx, dgh, dh, dw, reverse);
}

}  // namespace lucid::cpu
