// ctc_loss's engine part: the per-entry negative log-likelihood with a fused
// alpha-beta backward (the CtcLoss primitives, ops/prims/seq.h). Reductions,
// zero_infinity and argument parsing are in python/lucid/nn/_functional_seq.py. Like
// PyTorch, the backward is not itself differentiable (double backward of ctc_loss is
// unsupported).
#include "autograd/record.h"
#include "ops/elementwise.h"
#include "ops/prims/seq.h"
#include "ops/reduce_plan.h"
#include "ops/seq_ops.h"

namespace lucid::ops {

TensorPtr ctc_loss_nll(const TensorPtr& log_probs, const TensorPtr& targets, const std::vector<int64_t>& il,
                       const std::vector<int64_t>& tl, int64_t blank) {
  const char* name = "ctc_loss";
  const Device device = op_device(name, {log_probs.get(), targets.get()});
  LUCID_CHECK(log_probs->ndim() == 3, RuntimeError, name, "(): log_probs must be [T, N, C], got ",
              shape_str(log_probs->shape()));
  LUCID_CHECK(log_probs->dtype() == Dtype::F32 || log_probs->dtype() == Dtype::F64, RuntimeError, name,
              "(): log_probs must be float32 or float64, got ", dtype_name(log_probs->dtype()));
  const int64_t Tn = log_probs->shape()[0], N = log_probs->shape()[1], C = log_probs->shape()[2];
  LUCID_CHECK(targets->ndim() == 2 && targets->shape()[0] == N && targets->dtype() == Dtype::I64, RuntimeError, name,
              "(): internal targets must be int64 [N, smax], got ", shape_str(targets->shape()));
  LUCID_CHECK(int64_t(il.size()) == N && int64_t(tl.size()) == N, RuntimeError, name, "(): expected ", N,
              " input and target lengths, got ", il.size(), " and ", tl.size());
  LUCID_CHECK(blank >= 0 && blank < C, RuntimeError, name, "(): blank must be in label range [0, ", C, "), got ",
              blank);
  const int64_t smax = targets->shape()[1];
  for (int64_t b = 0; b < N; ++b) {
    LUCID_CHECK(il[b] >= 0 && il[b] <= Tn, RuntimeError, name, "(): input_lengths[", b, "] = ", il[b],
                " must be in [0, ", Tn, "]");
    LUCID_CHECK(tl[b] >= 0 && tl[b] <= smax, RuntimeError, name, "(): target_lengths[", b, "] = ", tl[b],
                " must be in [0, ", smax, "]");
  }
  const Dtype dt = log_probs->dtype();
  TensorPtr tg = contiguous_as(targets, Dtype::I64), lp = contiguous_as(log_probs, dt);
  TensorPtr alpha = TensorImpl::empty({N, Tn, 2 * smax + 1}, Dtype::F64, device);
  TensorPtr nll = TensorImpl::empty({N}, Dtype::F64, device);
  CtcLoss p;  // the kernel checks the target labels (data) before anything else
  p.input_lengths = il;
  p.target_lengths = tl;
  p.blank = blank;
  launch(p, {alpha.get(), nll.get()}, {lp.get(), tg.get()});
  TensorPtr out = nll->clone(dt);
  if (autograd::needs_grad({&log_probs})) {
    auto node = autograd::record("CtcLossBackward0", {log_probs}, {out}, [=](const Node& n, const autograd::Grads& g) {
      TensorPtr lps = contiguous_as(n.saved(0), dt), tgs = n.saved(1), al = n.saved(2), nl = n.saved(3);
      TensorPtr gc = contiguous_as(g[0], dt);
      TensorPtr grad = TensorImpl::empty({Tn, N, C}, dt, lps->device());
      CtcLossBackward back;
      back.input_lengths = il;
      back.target_lengths = tl;
      back.blank = blank;
      launch(back, {grad.get()}, {lps.get(), tgs.get(), al.get(), nl.get(), gc.get()});
      return autograd::Grads{grad};
    });
    node->save(log_probs);
    node->save(tg);
    node->save(alpha);
    node->save(nll);
  }
  return out;
}

}  // namespace lucid::ops
