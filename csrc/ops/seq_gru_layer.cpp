// One GRU layer direction over a whole sequence, as one graph node (the GRU twin of
// ops/seq_lstm_layer.cpp: one primitive for the forward loop; one for the reverse
// loop backward with d w_hh formed once over all steps, and d b_hh one sum;
// differentiable ops under create_graph).
#include "autograd/record.h"
#include "ops/elementwise.h"
#include "ops/linalg.h"
#include "ops/prims/seq.h"
#include "ops/reduce.h"
#include "ops/reduce_plan.h"
#include "ops/seq_ops.h"
#include "ops/shape_ops.h"
#include "ops/views.h"

namespace lucid::ops {

namespace {

using autograd::Grads;

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
  check_same_device_and_dtype(name, {gx, h0, w_hh, b_hh});
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
  const Device device = gx->device();
  TensorPtr out = TensorImpl::empty({Tn, B, H}, ct, device);
  TensorPtr gh = TensorImpl::empty({Tn, B, G}, ct, device);
  TensorPtr act = TensorImpl::empty({Tn, B, G}, ct, device);
  GruLayer p;
  p.reverse = reverse;
  p.has_bias = bool(bc);
  if (bc) launch(p, {out.get(), gh.get(), act.get()}, {gxc.get(), h0c.get(), wc.get(), bc.get()});
  else launch(p, {out.get(), gh.get(), act.get()}, {gxc.get(), h0c.get(), wc.get()});
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
      TensorPtr dgx = TensorImpl::empty({Tn, B, G}, ct, device), dgh = TensorImpl::empty({Tn, B, G}, ct, device);
      TensorPtr dh = TensorImpl::empty({B, H}, ct, device), dw = TensorImpl::empty({G, H}, ct, device);
      GruLayerBackward p;
      p.reverse = reverse;
      launch(p, {dgx.get(), dgh.get(), dh.get(), dw.get()},
             {go.get(), ghh.get(), h0x.get(), wx.get(), outs.get(), ghs.get(), acts.get()});
      TensorPtr db = has_b ? sum(view(dgh, {Tn * B, G}), {0}, false, std::nullopt) : nullptr;
      return Grads{dgx, dh, dw, db};
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
