// The primitive of the optimizers' fused multi-tensor steps (ops/optim.cpp), and the
// per-parameter arguments of each update rule. The op computes every per-parameter
// number on the host (step counts, bias corrections, schedules: torch keeps them as
// CPU values too), so a kernel only runs the element loop of each parameter.
#pragma once

#include <functional>
#include <variant>
#include <vector>

#include "ops/primitive.h"

namespace lucid::ops::optim {

struct SgdArgs {
  double lr, momentum, dampening, weight_decay;
  bool nesterov, maximize, first;  // first: the momentum buffer starts as the gradient
};

struct AdamArgs {
  double lr, beta1, beta2, eps, weight_decay;
  double step_size;        // lr / (1 - beta1^t)
  double bias2_sqrt;       // sqrt(1 - beta2^t)
  bool decoupled, amsgrad, maximize;
};

struct AdamaxArgs {
  double beta1, beta2, eps, weight_decay, clr;  // clr = lr / (1 - beta1^t)
  bool maximize;
};

struct NadamArgs {
  double beta1, beta2, eps, weight_decay, lr;
  double bias2;                    // 1 - beta2^t
  double grad_coef, avg_coef;      // lr (1 - mu) / (1 - mu_prod), lr mu_next / (1 - mu_prod mu_next)
  bool decoupled, maximize;
};

struct RadamArgs {
  double beta1, beta2, eps, weight_decay, lr;
  double bias1, bias2_sqrt, rect;  // rect < 0: the variance is not tractable yet (plain momentum step)
  bool decoupled, maximize;
};

struct AdagradArgs {
  double clr, eps, weight_decay;  // clr = lr / (1 + (t - 1) lr_decay)
  bool maximize;
};

struct AdadeltaArgs {
  double lr, rho, eps, weight_decay;
  bool maximize;
};

struct RmspropArgs {
  double lr, alpha, eps, weight_decay, momentum;
  bool centered, maximize;
};

struct RpropArgs {
  double eta_minus, eta_plus, step_min, step_max;
  bool maximize;
};

struct AsgdArgs {
  double eta, mu, lambd, weight_decay;  // eta, mu: this step's values (before their update)
  bool maximize;
};

using StepArgs = std::variant<SgdArgs, AdamArgs, AdamaxArgs, NadamArgs, RadamArgs, AdagradArgs, AdadeltaArgs,
                              RmspropArgs, RpropArgs, AsgdArgs>;

// The states each rule keeps per parameter, in the order a step lists them; the
// optional ones only when the arguments use them.
//   Sgd: momentum_buffer (momentum != 0)      Adam: exp_avg, exp_avg_sq, max_exp_avg_sq (amsgrad)
//   Adamax: exp_avg, exp_inf                  Nadam, Radam: exp_avg, exp_avg_sq
//   Adagrad: sum                              Adadelta: square_avg, acc_delta
//   Rmsprop: square_avg, grad_avg (centered), momentum_buffer (momentum > 0)
//   Rprop: prev, step_size                    Asgd: ax
//
// One step of one optimizer over n parameters: args[i] is parameter i's (every one
// the same alternative). outs: {the n parameters, then each state in turn, n tensors
// each}; ins: {the n gradients}. All float32 or float64 (each parameter's states and
// gradient like it), contiguous. The op bumps the versions.
struct OptimStep : PrimitiveOf<Prim::OptimStep, OptimStep> {
  std::vector<StepArgs> args;
  // Advances the optimizer's scalar state (step counts) and gives the next step's args:
  // what a replayed training step runs before each replay (Note [Replayed steps]).
  std::function<std::vector<StepArgs>()> next;
  const char* name() const override;  // the optimizer's: "Adam", "SGD", ...
};

}  // namespace lucid::ops::optim
