// The pointwise part of the LSTM and GRU cells as one op each (gates -> states), so a
// time step is a gemm plus one fused op instead of ~10 recorded elementwise ops. The
// backward is a fused kernel from the saved activations when no graph is being built,
// and the same derivatives written with differentiable ops under create_graph.
#include "autograd/record.h"
#include "ops/copy_ops.h"
#include "ops/elementwise.h"
#include "ops/prims/seq.h"
#include "ops/reduce_plan.h"
#include "ops/seq_ops.h"
#include "ops/shape_ops.h"
#include "ops/views.h"

namespace lucid::ops {

namespace {

using autograd::Grads;

Dtype compute_dtype(const char* name, const std::vector<TensorPtr>& ts) {
  check_same_device_and_dtype(name, ts);
  const Dtype d = ts[0]->dtype();
  LUCID_CHECK(is_floating(d), RuntimeError, name, "(): expected floating-point inputs, got ", dtype_name(d));
  return d == Dtype::F64 ? Dtype::F64 : Dtype::F32;
}

void check_2d(const char* name, const TensorPtr& t, int64_t batch, int64_t cols, const char* what) {
  LUCID_CHECK(t->ndim() == 2 && t->shape()[0] == batch && t->shape()[1] == cols, RuntimeError, name, "(): ", what,
              " must have shape [", batch, ", ", cols, "], got ", shape_str(t->shape()));
}

TensorPtr one_minus(const TensorPtr& t) { return add(neg(t), Scalar(1.0)); }

}  // namespace

void check_same_device_and_dtype(const char* name, const std::vector<TensorPtr>& ts) {
  const Dtype d = ts[0]->dtype();
  for (const TensorPtr& t : ts) {
    if (!t) continue;
    op_device(name, {ts[0].get(), t.get()});
    LUCID_CHECK(t->dtype() == d, RuntimeError, name, "(): expected all inputs to have dtype ", dtype_name(d),
                ", got ", dtype_name(t->dtype()));
  }
}

std::vector<TensorPtr> lstm_cell_grads_with_ops(const TensorPtr& gs, const TensorPtr& cps, const TensorPtr& gh,
                                                const TensorPtr& gc) {
  const int64_t H = gs->shape()[1] / 4;
  TensorPtr i = sigmoid(narrow(gs, 1, 0, H)), f = sigmoid(narrow(gs, 1, H, H));
  TensorPtr gg = tanh(narrow(gs, 1, 2 * H, H)), o = sigmoid(narrow(gs, 1, 3 * H, H));
  TensorPtr tc = tanh(add(mul(f, cps), mul(i, gg)));
  TensorPtr dc = add(gc, mul(mul(gh, o), one_minus(mul(tc, tc))));
  TensorPtr dg = cat({mul(mul(dc, gg), mul(i, one_minus(i))), mul(mul(dc, cps), mul(f, one_minus(f))),
                      mul(mul(dc, i), one_minus(mul(gg, gg))), mul(mul(gh, tc), mul(o, one_minus(o)))},
                     1);
  return {dg, mul(dc, f)};
}

std::vector<TensorPtr> lstm_cell_fused(const TensorPtr& gates, const TensorPtr& c_prev) {
  const char* name = "lstm_cell";
  const Dtype ct = compute_dtype(name, {gates, c_prev});
  LUCID_CHECK(gates->ndim() == 2 && gates->shape()[1] % 4 == 0, RuntimeError, name,
              "(): gates must be [batch, 4 * hidden], got ", shape_str(gates->shape()));
  const int64_t B = gates->shape()[0], H = gates->shape()[1] / 4;
  check_2d(name, c_prev, B, H, "c_prev");
  TensorPtr gc = contiguous_as(gates, ct), cp = contiguous_as(c_prev, ct);
  const Device device = gates->device();
  TensorPtr h = TensorImpl::empty({B, H}, ct, device), c = TensorImpl::empty({B, H}, ct, device);
  TensorPtr act = TensorImpl::empty({B, 4 * H}, ct, device);
  launch(LstmCell{}, {h.get(), c.get(), act.get()}, {gc.get(), cp.get()});
  const Dtype od = gates->dtype();
  if (od != ct) {
    h = h->clone(od);
    c = c->clone(od);
  }
  if (autograd::needs_grad({&gates, &c_prev})) {
    auto node = autograd::record("LstmCellBackward0", {gates, c_prev}, {h, c}, [=](const Node& n, const Grads& g) {
      TensorPtr gs = n.saved(0), cps = n.saved(1);
      if (autograd::grad_enabled()) return lstm_cell_grads_with_ops(gs, cps, g[0], g[1]);
      TensorPtr acts = n.saved(2), cs = contiguous_as(n.saved(3), ct), cpc = contiguous_as(cps, ct);
      TensorPtr gh = contiguous_as(g[0], ct), gcc = contiguous_as(g[1], ct);
      TensorPtr dg = TensorImpl::empty({B, 4 * H}, ct, device), dcp = TensorImpl::empty({B, H}, ct, device);
      launch(LstmCellBackward{}, {dg.get(), dcp.get()}, {gh.get(), gcc.get(), acts.get(), cs.get(), cpc.get()});
      return Grads{dg, dcp};
    });
    node->save(gates);
    node->save(c_prev);
    node->save(act);
    node->save(c, /*is_output=*/true);
  }
  return {h, c};
}

std::vector<TensorPtr> gru_cell_grads_with_ops(const TensorPtr& xs, const TensorPtr& hs, const TensorPtr& hps,
                                               const TensorPtr& g) {
  const int64_t H = xs->shape()[1] / 3;
  TensorPtr r = sigmoid(add(narrow(xs, 1, 0, H), narrow(hs, 1, 0, H)));
  TensorPtr z = sigmoid(add(narrow(xs, 1, H, H), narrow(hs, 1, H, H)));
  TensorPtr hn = narrow(hs, 1, 2 * H, H);
  TensorPtr nn = tanh(add(narrow(xs, 1, 2 * H, H), mul(r, hn)));
  TensorPtr dn = mul(mul(g, one_minus(z)), one_minus(mul(nn, nn)));
  TensorPtr dz = mul(mul(g, sub(hps, nn)), mul(z, one_minus(z)));
  TensorPtr dr = mul(mul(dn, hn), mul(r, one_minus(r)));
  return {cat({dr, dz, dn}, 1), cat({dr, dz, mul(dn, r)}, 1), mul(g, z)};
}

TensorPtr gru_cell_fused(const TensorPtr& gx, const TensorPtr& gh, const TensorPtr& h_prev) {
  const char* name = "gru_cell";
  const Dtype ct = compute_dtype(name, {gx, gh, h_prev});
  LUCID_CHECK(gx->ndim() == 2 && gx->shape()[1] % 3 == 0, RuntimeError, name,
              "(): input gates must be [batch, 3 * hidden], got ", shape_str(gx->shape()));
  const int64_t B = gx->shape()[0], H = gx->shape()[1] / 3;
  check_2d(name, gh, B, 3 * H, "hidden gates");
  check_2d(name, h_prev, B, H, "h_prev");
  TensorPtr xc = contiguous_as(gx, ct), hc = contiguous_as(gh, ct), hp = contiguous_as(h_prev, ct);
  const Device device = gx->device();
  TensorPtr h = TensorImpl::empty({B, H}, ct, device);
  TensorPtr act = TensorImpl::empty({B, 3 * H}, ct, device);
  launch(GruCell{}, {h.get(), act.get()}, {xc.get(), hc.get(), hp.get()});
  if (gx->dtype() != ct) h = h->clone(gx->dtype());
  if (autograd::needs_grad({&gx, &gh, &h_prev})) {
    auto node = autograd::record("GruCellBackward0", {gx, gh, h_prev}, {h}, [=](const Node& n, const Grads& g) {
      TensorPtr xs = n.saved(0), hs = n.saved(1), hps = n.saved(2);
      if (autograd::grad_enabled()) return gru_cell_grads_with_ops(xs, hs, hps, g[0]);
      TensorPtr acts = n.saved(3), hsc = contiguous_as(hs, ct), hpc = contiguous_as(hps, ct);
      TensorPtr dh = contiguous_as(g[0], ct);
      TensorPtr dgx = TensorImpl::empty({B, 3 * H}, ct, device);
      TensorPtr dgh = TensorImpl::empty({B, 3 * H}, ct, device);
      TensorPtr dhp = TensorImpl::empty({B, H}, ct, device);
      launch(GruCellBackward{}, {dgx.get(), dgh.get(), dhp.get()}, {dh.get(), acts.get(), hsc.get(), hpc.get()});
      return Grads{dgx, dgh, dhp};
    });
    node->save(gx);
    node->save(gh);
    node->save(h_prev);
    node->save(act);
  }
  return h;
}

}  // namespace lucid::ops
