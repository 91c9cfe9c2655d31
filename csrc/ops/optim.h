// The optimizers' fused multi-tensor steps (lucid.optim): one call updates every
// parameter of a group, each in a single pass over its memory (parameter, gradient
// and state read and written once), all tensors' chunks in one pool dispatch.
// Python keeps the state tensors (PyTorch's state_dict layout) and calls these;
// the math follows torch.optim's single-tensor steps.
//
// Every list is indexed like `params`; state lists an optimizer does not use for
// its options (max_exp_avg_sqs without amsgrad, momentum buffers without momentum)
// are empty. `steps` are 0-d float32 tensors: each is incremented here and its new
// value is the t of the bias corrections. Parameters are float32 or float64
// tensors, contiguous; gradients and states match their parameter in shape, dtype
// and device.
#pragma once

#include <vector>

#include "core/tensor_impl.h"

namespace lucid::ops::optim {

using TensorList = std::vector<TensorPtr>;

struct SgdOptions {
  double lr, momentum, dampening, weight_decay;
  bool nesterov, maximize;
};
// momentum_buffers: empty when momentum is 0; `fresh[i]`: buffer i was just created
// (its first step stores the gradient instead of averaging).
void sgd(const TensorList& params, const TensorList& grads, const TensorList& momentum_buffers,
         const std::vector<bool>& fresh, const SgdOptions& o);

struct AdamOptions {
  double lr, beta1, beta2, eps, weight_decay;
  bool amsgrad, maximize, decoupled;  // decoupled: AdamW
};
void adam(const TensorList& params, const TensorList& grads, const TensorList& exp_avgs,
          const TensorList& exp_avg_sqs, const TensorList& max_exp_avg_sqs, const TensorList& steps,
          const AdamOptions& o);

struct AdamaxOptions {
  double lr, beta1, beta2, eps, weight_decay;
  bool maximize;
};
void adamax(const TensorList& params, const TensorList& grads, const TensorList& exp_avgs,
            const TensorList& exp_infs, const TensorList& steps, const AdamaxOptions& o);

struct NadamOptions {
  double lr, beta1, beta2, eps, weight_decay, momentum_decay;
  bool decoupled, maximize;
};
// mu_products: 0-d float32 tensors (the running product of the momentum schedule).
void nadam(const TensorList& params, const TensorList& grads, const TensorList& exp_avgs,
           const TensorList& exp_avg_sqs, const TensorList& mu_products, const TensorList& steps,
           const NadamOptions& o);

struct RadamOptions {
  double lr, beta1, beta2, eps, weight_decay;
  bool decoupled, maximize;
};
void radam(const TensorList& params, const TensorList& grads, const TensorList& exp_avgs,
           const TensorList& exp_avg_sqs, const TensorList& steps, const RadamOptions& o);

struct AdagradOptions {
  double lr, lr_decay, weight_decay, eps;
  bool maximize;
};
void adagrad(const TensorList& params, const TensorList& grads, const TensorList& sums, const TensorList& steps,
             const AdagradOptions& o);

struct AdadeltaOptions {
  double lr, rho, eps, weight_decay;
  bool maximize;
};
void adadelta(const TensorList& params, const TensorList& grads, const TensorList& square_avgs,
              const TensorList& acc_deltas, const TensorList& steps, const AdadeltaOptions& o);

struct RmspropOptions {
  double lr, alpha, eps, weight_decay, momentum;
  bool centered, maximize;
};
// grad_avgs: empty unless centered; momentum_buffers: empty unless momentum > 0.
void rmsprop(const TensorList& params, const TensorList& grads, const TensorList& square_avgs,
             const TensorList& grad_avgs, const TensorList& momentum_buffers, const TensorList& steps,
             const RmspropOptions& o);

struct RpropOptions {
  double eta_minus, eta_plus, step_min, step_max;
  bool maximize;
};
void rprop(const TensorList& params, const TensorList& grads, const TensorList& prevs,
           const TensorList& step_sizes, const TensorList& steps, const RpropOptions& o);

struct AsgdOptions {
  double lr, lambd, alpha, t0, weight_decay;
  bool maximize;
};
// etas, mus: 0-d float32 tensors, read for this step and replaced by the next step's.
void asgd(const TensorList& params, const TensorList& grads, const TensorList& axs, const TensorList& etas,
          const TensorList& mus, const TensorList& steps, const AsgdOptions& o);

}  // namespace lucid::ops::optim
