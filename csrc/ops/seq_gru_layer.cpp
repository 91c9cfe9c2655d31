// One GRU layer direction over a whole sequence, as one graph node (the GRU twin of
// ops/seq_lstm_layer.cpp: C++ loop forward; reverse loop backward with d w_hh and
// d b_hh formed once over all steps; differentiable ops under create_graph).
#include <cstring>

#include "autograd/record.h"
#include "backend/cpu/blas.h"
#include "backend/cpu/seq_kernels.h"
#include "ops/elementwise.h"
#include "ops/linalg.h"
#include "ops/reduce.h"
#include "ops/reduce_plan.h"
#include "ops/seq_ops.h"
#include "ops/shape_ops.h"
#include "ops/views.h"

namespace lucid::ops {

namespace {

using autograd::Grads;

template <class T>
void forward_loop(const TensorPtr& gx, const TensorPtr& h0, const TensorPtr& w_t, const TensorPtr& b,
                  const TensorPtr& out, const TensorPtr& gh, const TensorPtr& act, bool reverse) {
  const int64_t Tn = gx->shape()[0], B = gx->shape()[1], G = gx->shape()[2], H = G / 3;
  TensorPtr h_prev = h0;
  const cpu::RepeatedRhs w_hh(*w_t, B);  // packed once for the T products
  for (int64_t k = 0; k < Tn; ++k) {
    const int64_t t = step_at(k, Tn, reverse);
    TensorPtr ght = select(gh, 0, t);
    if (b)
      for (int64_t r = 0; r < B; ++r) std::memcpy(host_data<T>(ght) + r * G, host_data<T>(b), sizeof(T) * G);
    w_hh.gemm(*ght, *h_prev, Scalar(b ? 1.0 : 0.0));
    TensorPtr h = select(out, 0, t);
    cpu::gru_cell_forward<T>(host_data<T>(gx) + t * B * G, host_data<T>(ght), host_data<T>(h_prev), host_data<T>(h),
                             host_data<T>(act) + t * B * G, B, H);
    h_prev = h;
  }
}

template <class T>
Grads backward_loop(const TensorPtr& g_out, const TensorPtr& g_h, const TensorPtr& h0, const TensorPtr& w,
                    bool has_b, const TensorPtr& out, const TensorPtr& gh, const TensorPtr& act, bool reverse,
                    Dtype ct) {
  const int64_t Tn = act->shape()[0], B = act->shape()[1], G = act->shape()[2], H = G / 3;
  TensorPtr dgx = TensorImpl::empty({Tn, B, G}, ct, Device::cpu());
  TensorPtr dgh = TensorImpl::empty({Tn, B, G}, ct, Device::cpu());
  TensorPtr hprev = TensorImpl::empty({Tn, B, H}, ct, Device::cpu());
  TensorPtr dh = g_h->clone(ct), dh_next = TensorImpl::empty({B, H}, ct, Device::cpu());
  const T* go = host_data<T>(g_out);
  const cpu::RepeatedRhs w_hh(*w, B);
  for (int64_t k = Tn - 1; k >= 0; --k) {
    const int64_t t = step_at(k, Tn, reverse);
    const int64_t tp = k == 0 ? -1 : step_at(k - 1, Tn, reverse);
    T* dhp = host_data<T>(dh);
    const T* got = go + t * B * H;
    for (int64_t i = 0; i < B * H; ++i) dhp[i] += got[i];
    const T* hp = tp < 0 ? host_data<T>(h0) : host_data<T>(out) + tp * B * H;
    std::memcpy(host_data<T>(hprev) + t * B * H, hp, sizeof(T) * B * H);
    TensorPtr dght = select(dgh, 0, t);
    cpu::gru_cell_backward<T>(dhp, host_data<T>(act) + t * B * G, host_data<T>(gh) + t * B * G, hp, host_data<T>(dgx) + t * B * G,
                              host_data<T>(dght), host_data<T>(dh_next), B, H);
    w_hh.gemm(*dh_next, *dght, Scalar(1.0));  // + d gh @ w_hh
    std::swap(dh, dh_next);
  }
  TensorPtr dw = TensorImpl::empty({G, H}, ct, Device::cpu());
  TensorPtr dgh2 = view(dgh, {Tn * B, G});
  cpu::gemm(*dw, *transpose(dgh2, 0, 1), *view(hprev, {Tn * B, H}), Scalar(1.0), Scalar(0.0));
  TensorPtr db = has_b ? sum(dgh2, {0}, false, std::nullopt) : nullptr;
  return {dgx, dh, dw, db};
}

Grads backward_with_ops(const Grads& g, const TensorPtr& gx, const TensorPtr& h0, const TensorPtr& w,
                        const TensorPtr& b, bool reverse) {
  const int64_t Tn = gx->shape()[0];
  TensorPtr w_t = transpose(w, 0, 1);
  std::vector<TensorPtr> ghs(Tn), h_prev(Tn);
  TensorPtr h = h0;
  for (int64_t k = 0; k < Tn; ++k) {
    const int64_t t = step_at(k, Tn, reverse);
    h_prev[t] = h;
    ghs[t] = b ? addmm(b, h, w_t, Scalar(1.0), Scalar(1.0)) : mm(h, w_t);
    h = gru_cell_fused(select(gx, 0, t), ghs[t], h);
  }
  TensorPtr dh = g[1], dw, db;
  std::vector<TensorPtr> dgx(Tn);
  for (int64_t k = Tn - 1; k >= 0; --k) {
    const int64_t t = step_at(k, Tn, reverse);
    dh = add(dh, select(g[0], 0, t));
    std::vector<TensorPtr> d = gru_cell_grads_with_ops(select(gx, 0, t), ghs[t], h_prev[t], dh);
    dgx[t] = unsqueeze(d[0], 0);
    TensorPtr dwt = mm(transpose(d[1], 0, 1), h_prev[t]);
    dw = dw ? add(dw, dwt) : dwt;
    if (b) db = db ? add(db, sum(d[1], {0}, false, std::nullopt)) : sum(d[1], {0}, false, std::nullopt);
    dh = add(d[2], mm(d[1], w));
  }
  return {cat(dgx, 0), dh, dw, db};
}

}  // namespace

std::vector<TensorPtr> gru_layer(const TensorPtr& gx, const TensorPtr& h0, const TensorPtr& w_hh,
                                 const TensorPtr& b_hh, bool reverse) {
  const char* name = "gru_layer";
  check_cpu_same_dtype(name, {gx, h0, w_hh, b_hh});
  const Dtype ct = gx->dtype();
  LUCID_CHECK(ct == Dtype::F32 || ct == Dtype::F64, RuntimeError, name, "(): float32 or float64 only, got ",
              dtype_name(ct));
  LUCID_CHECK(gx->ndim() == 3 && gx->shape()[2] % 3 == 0 && gx->shape()[0] > 0, RuntimeError, name,
              "(): gx must be [T > 0, B, 3H], got ", shape_str(gx->shape()));
  const int64_t Tn = gx->shape()[0], B = gx->shape()[1], G = gx->shape()[2], H = G / 3;
  LUCID_CHECK(h0->shape() == Shape({B, H}) && w_hh->shape() == Shape({G, H}) && (!b_hh || b_hh->shape() == Shape{G}),
              RuntimeError, name, "(): expected h0 [", B, ", ", H, "], w_hh [", G, ", ", H, "] and b_hh [", G,
              "], got ", shape_str(h0->shape()), ", ", shape_str(w_hh->shape()));
  TensorPtr gxc = contiguous_as(gx, ct), h0c = contiguous_as(h0, ct), wc = contiguous_as(w_hh, ct);
  TensorPtr bc = b_hh ? contiguous_as(b_hh, ct) : nullptr;
  TensorPtr out = TensorImpl::empty({Tn, B, H}, ct, Device::cpu());
  TensorPtr gh = TensorImpl::empty({Tn, B, G}, ct, Device::cpu());
  TensorPtr act = TensorImpl::empty({Tn, B, G}, ct, Device::cpu());
  TensorPtr w_t = transpose(wc, 0, 1);
  if (ct == Dtype::F32)
    forward_loop<float>(gxc, h0c, w_t, bc, out, gh, act, reverse);
  else
    forward_loop<double>(gxc, h0c, w_t, bc, out, gh, act, reverse);
  TensorPtr h_n = select(out, 0, step_at(Tn - 1, Tn, reverse))->clone(ct);
  if (autograd::needs_grad({&gx, &h0, &w_hh, &b_hh})) {
    const bool has_b = b_hh != nullptr;
    auto node = autograd::record("GruLayerBackward0", {gx, h0, w_hh, b_hh}, {out, h_n},
                                 [=](const Node& n, const Grads& g) {
      TensorPtr gxs = n.saved(0), h0s = n.saved(1), ws = n.saved(2), bs = n.saved(3);
      if (autograd::grad_enabled()) return backward_with_ops(g, gxs, h0s, ws, bs, reverse);
      TensorPtr outs = n.saved(4), ghs = n.saved(5), acts = n.saved(6);
      TensorPtr go = contiguous_as(g[0], ct), ghh = contiguous_as(g[1], ct);
      TensorPtr h0x = contiguous_as(h0s, ct), wx = contiguous_as(ws, ct);
      if (ct == Dtype::F32) return backward_loop<float>(go, ghh, h0x, wx, has_b, outs, ghs, acts, reverse, ct);
      return backward_loop<double>(go, ghh, h0x, wx, has_b, outs, ghs, acts, reverse, ct);
    });
    node->save(gx);
    node->save(h0);
    node->save(w_hh);
    node->save(b_hh);
    node->save(out, /*is_output=*/true);
    node->save(gh);
    node->save(act);
  }
  return {out, h_n};
}

}  // namespace lucid::ops
