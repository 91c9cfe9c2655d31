// One LSTM layer direction over a whole sequence, as one graph node.
//
// Why: recorded step by step, a layer costs T addmm nodes whose backward makes two
// small gemms per step plus T accumulations of a [4H, H] gradient for w_hh. Here the
// forward loop is one primitive (per step: copy the step's input projection, one gemm
// adding h @ w_hh^T, the fused cell kernel), keeping every step's activations; the
// backward is another (the reverse loop of the fused cell backward and one gemm for
// dh, then d w_hh = dGates^T @ H_prev as ONE large gemm over all T * B rows).
// Under create_graph the backward is the same recurrence written with differentiable
// ops, so double backward works.
#include "autograd/record.h"
#include "ops/elementwise.h"
#include "ops/linalg.h"
#include "ops/prims/seq.h"
#include "ops/reduce_plan.h"
#include "ops/seq_ops.h"
#include "ops/shape_ops.h"
#include "ops/views.h"

namespace lucid::ops {

namespace {

using autograd::Grads;

// The same backward with differentiable ops, from the inputs (create_graph).
Grads backward_with_ops(const Grads& g, const TensorPtr& gx, const TensorPtr& h0, const TensorPtr& c0,
                        const TensorPtr& w, bool reverse) {
  const int64_t Tn = gx->shape()[0];
  TensorPtr w_t = transpose(w, 0, 1);
  std::vector<TensorPtr> gates(Tn), c_prev(Tn), h_prev(Tn);
  TensorPtr h = h0, c = c0;
  for (int64_t k = 0; k < Tn; ++k) {
    const int64_t t = step_at(k, Tn, reverse);
    h_prev[t] = h;
    c_prev[t] = c;
    gates[t] = addmm(select(gx, 0, t), h, w_t, Scalar(1.0), Scalar(1.0));
    std::vector<TensorPtr> hc = lstm_cell_fused(gates[t], c);
    h = hc[0];
    c = hc[1];
  }
  TensorPtr dh = g[1], dc = g[2];
  std::vector<TensorPtr> dgx(Tn);
  TensorPtr dw;
  for (int64_t k = Tn - 1; k >= 0; --k) {
    const int64_t t = step_at(k, Tn, reverse);
    dh = add(dh, select(g[0], 0, t));
    std::vector<TensorPtr> d = lstm_cell_grads_with_ops(gates[t], c_prev[t], dh, dc);
    dgx[t] = unsqueeze(d[0], 0);
    TensorPtr dwt = mm(transpose(d[0], 0, 1), h_prev[t]);
    dw = dw ? add(dw, dwt) : dwt;
    dh = mm(d[0], w);
    dc = d[1];
  }
  return {cat(dgx, 0), dh, dc, dw};
}

}  // namespace

std::vector<TensorPtr> lstm_layer(const TensorPtr& gx, const TensorPtr& h0, const TensorPtr& c0,
                                  const TensorPtr& w_hh, bool reverse) {
  const char* name = "lstm_layer";
  check_same_device_and_dtype(name, {gx, h0, c0, w_hh});
  const Dtype ct = gx->dtype();
  LUCID_CHECK(ct == Dtype::F32 || ct == Dtype::F64, RuntimeError, name, "(): float32 or float64 only, got ",
              dtype_name(ct));
  LUCID_CHECK(gx->ndim() == 3 && gx->shape()[2] % 4 == 0 && gx->shape()[0] > 0, RuntimeError, name,
              "(): gx must be [T > 0, B, 4H], got ", shape_str(gx->shape()));
  const int64_t Tn = gx->shape()[0], B = gx->shape()[1], G = gx->shape()[2], H = G / 4;
  LUCID_CHECK(h0->shape() == Shape({B, H}) && c0->shape() == Shape({B, H}) && w_hh->shape() == Shape({G, H}),
              RuntimeError, name, "(): expected h0, c0 [", B, ", ", H, "] and w_hh [", G, ", ", H, "], got ",
              shape_str(h0->shape()), ", ", shape_str(c0->shape()), ", ", shape_str(w_hh->shape()));
  TensorPtr gxc = contiguous_as(gx, ct), h0c = contiguous_as(h0, ct), c0c = contiguous_as(c0, ct);
  TensorPtr wc = contiguous_as(w_hh, ct);
  const Device device = gx->device();
  TensorPtr out = TensorImpl::empty({Tn, B, H}, ct, device);
  TensorPtr cs = TensorImpl::empty({Tn, B, H}, ct, device);
  TensorPtr act = TensorImpl::empty({Tn, B, G}, ct, device);
  LstmLayer p;
  p.reverse = reverse;
  launch(p, {out.get(), cs.get(), act.get()}, {gxc.get(), h0c.get(), c0c.get(), wc.get()});
  const int64_t last = step_at(Tn - 1, Tn, reverse);
  TensorPtr h_n = select(out, 0, last)->clone(ct), c_n = select(cs, 0, last)->clone(ct);
  if (autograd::needs_grad({&gx, &h0, &c0, &w_hh})) {
    auto node = autograd::record("LstmLayerBackward0", {gx, h0, c0, w_hh}, {out, h_n, c_n},
                                 [=](const Node& n, const Grads& g) {
      TensorPtr gxs = n.saved(0), h0s = n.saved(1), c0s = n.saved(2), ws = n.saved(3);
      if (autograd::grad_enabled()) return backward_with_ops(g, gxs, h0s, c0s, ws, reverse);
      TensorPtr outs = n.saved(4), css = n.saved(5), acts = n.saved(6);
      TensorPtr go = contiguous_as(g[0], ct), gh = contiguous_as(g[1], ct), gc = contiguous_as(g[2], ct);
      TensorPtr h0x = contiguous_as(h0s, ct), c0x = contiguous_as(c0s, ct), wx = contiguous_as(ws, ct);
      TensorPtr dgx = TensorImpl::empty({Tn, B, G}, ct, device);
      TensorPtr dh = TensorImpl::empty({B, H}, ct, device), dc = TensorImpl::empty({B, H}, ct, device);
      TensorPtr dw = TensorImpl::empty({G, H}, ct, device);
      LstmLayerBackward p;
      p.reverse = reverse;
      launch(p, {dgx.get(), dh.get(), dc.get(), dw.get()},
             {go.get(), gh.get(), gc.get(), h0x.get(), c0x.get(), wx.get(), outs.get(), css.get(), acts.get()});
      return Grads{dgx, dh, dc, dw};
    });
    node->save(gx);
    node->save(h0);
    node->save(c0);
    node->save(w_hh);
    node->save(out, /*is_output=*/true);
    node->save(cs);
    node->save(act);
  }
  return {out, h_n, c_n};
}

}  // namespace lucid::ops
