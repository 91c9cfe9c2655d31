// ctc_loss's engine part: the per-entry negative log-likelihood with a fused
// alpha-beta backward (backend/cpu/ctc_kernels.cpp). Reductions, zero_infinity and
// argument parsing are in python/lucid/nn/_functional_seq.py. Like PyTorch, the
// backward is not itself differentiable (double backward of ctc_loss is unsupported).
#include "autograd/record.h"
#include "backend/cpu/seq_kernels.h"
#include "ops/reduce_plan.h"
#include "ops/require_cpu.h"
#include "ops/seq_ops.h"

namespace lucid::ops {

TensorPtr ctc_loss_nll(const TensorPtr& log_probs, const TensorPtr& targets, const std::vector<int64_t>& il,
                       const std::vector<int64_t>& tl, int64_t blank) {
  const char* name = "ctc_loss";
  require_cpu(name, *log_probs);
  require_cpu(name, *targets);
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
  TensorPtr tg = contiguous_as(targets, Dtype::I64);
  const int64_t* tp = reinterpret_cast<const int64_t*>(tg->host_ptr());
  for (int64_t b = 0; b < N; ++b) {
    LUCID_CHECK(il[b] >= 0 && il[b] <= Tn, RuntimeError, name, "(): input_lengths[", b, "] = ", il[b],
                " must be in [0, ", Tn, "]");
    LUCID_CHECK(tl[b] >= 0 && tl[b] <= smax, RuntimeError, name, "(): target_lengths[", b, "] = ", tl[b],
                " must be in [0, ", smax, "]");
    for (int64_t j = 0; j < tl[b]; ++j)
      LUCID_CHECK(tp[b * smax + j] >= 0 && tp[b * smax + j] < C, RuntimeError, name, "(): target label ",
                  tp[b * smax + j], " is out of the class range [0, ", C, ")");
  }
  const Dtype dt = log_probs->dtype();
  TensorPtr lp = contiguous_as(log_probs, dt);
  TensorPtr alpha = TensorImpl::empty({N, Tn, 2 * smax + 1}, Dtype::F64, Device::cpu());
  TensorPtr nll = TensorImpl::empty({N}, Dtype::F64, Device::cpu());
  auto* ap = reinterpret_cast<double*>(alpha->host_ptr());
  auto* np = reinterpret_cast<double*>(nll->host_ptr());
  if (dt == Dtype::F32)
    cpu::ctc_forward<float>(reinterpret_cast<const float*>(lp->host_ptr()), tp, il.data(), tl.data(), Tn, N, C, smax,
                            blank, ap, np);
  else
    cpu::ctc_forward<double>(reinterpret_cast<const double*>(lp->host_ptr()), tp, il.data(), tl.data(), Tn, N, C,
                             smax, blank, ap, np);
  TensorPtr out = dt == Dtype::F64 ? nll->clone(Dtype::F64) : nll->clone(dt);
  if (autograd::needs_grad({&log_probs})) {
    auto node = autograd::record("CtcLossBackward0", {log_probs}, {out}, [=](const Node& n, const autograd::Grads& g) {
      TensorPtr lps = contiguous_as(n.saved(0), dt), tgs = n.saved(1), al = n.saved(2), nl = n.saved(3);
      TensorPtr gc = contiguous_as(g[0], dt);
      TensorPtr grad = TensorImpl::empty({Tn, N, C}, dt, Device::cpu());
      const auto* tgp = reinterpret_cast<const int64_t*>(tgs->host_ptr());
      const auto* alp = reinterpret_cast<const double*>(al->host_ptr());
      const auto* nlp = reinterpret_cast<const double*>(nl->host_ptr());
      if (dt == Dtype::F32)
        cpu::ctc_backward<float>(reinterpret_cast<const float*>(lps->host_ptr()), tgp, il.data(), tl.data(), Tn, N,
                                 C, smax, blank, alp, nlp, reinterpret_cast<const float*>(gc->host_ptr()),
                                 reinterpret_cast<float*>(grad->host_ptr()));
      else
        cpu::ctc_backward<double>(reinterpret_cast<const double*>(lps->host_ptr()), tgp, il.data(), tl.data(), Tn,
                                  N, C, smax, blank, alp, nlp, reinterpret_cast<const double*>(gc->host_ptr()),
                                  reinterpret_cast<double*>(grad->host_ptr()));
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
