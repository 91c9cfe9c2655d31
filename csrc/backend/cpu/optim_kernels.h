// Element loops of the optimizers' fused steps (ops/optim.h): one pass over a
// contiguous run of a parameter, its gradient and its state, with the per-tensor
// scalars (step sizes, bias corrections) computed once by the caller. T is float or
// double; 16-bit parameters are widened to float by the caller's staging.
#pragma once

#include <cstdint>

namespace lucid::cpu::optim {

struct SgdArgs {
  double lr, momentum, dampening, weight_decay;
  bool nesterov, maximize, first;  // first: the momentum buffer starts as the gradient
};
template <typename T>
void sgd(const SgdArgs& a, T* p, const T* g, T* buf, int64_t n);

struct AdamArgs {
  double lr, beta1, beta2, eps, weight_decay;
  double step_size;        // lr / (1 - beta1^t)
  double bias2_sqrt;       // sqrt(1 - beta2^t)
  bool decoupled, amsgrad, maximize;
};
template <typename T>
void adam(const AdamArgs& a, T* p, const T* g, T* m, T* v, T* vmax, int64_t n);

struct AdamaxArgs {
  double beta1, beta2, eps, weight_decay, clr;  // clr = lr / (1 - beta1^t)
  bool maximize;
};
template <typename T>
void adamax(const AdamaxArgs& a, T* p, const T* g, T* m, T* u, int64_t n);

struct NadamArgs {
  double beta1, beta2, eps, weight_decay, lr;
  double bias2;                    // 1 - beta2^t
  double grad_coef, avg_coef;      // lr (1 - mu) / (1 - mu_prod), lr mu_next / (1 - mu_prod mu_next)
  bool decoupled, maximize;
};
template <typename T>
void nadam(const NadamArgs& a, T* p, const T* g, T* m, T* v, int64_t n);

struct RadamArgs {
  double beta1, beta2, eps, weight_decay, lr;
  double bias1, bias2_sqrt, rect;  // rect < 0: the variance is not tractable yet (plain momentum step)
  bool decoupled, maximize;
};
template <typename T>
void radam(const RadamArgs& a, T* p, const T* g, T* m, T* v, int64_t n);

struct AdagradArgs {
  double clr, eps, weight_decay;  // clr = lr / (1 + (t - 1) lr_decay)
  bool maximize;
};
template <typename T>
void adagrad(const AdagradArgs& a, T* p, const T* g, T* sum, int64_t n);

struct AdadeltaArgs {
  double lr, rho, eps, weight_decay;
  bool maximize;
};
template <typename T>
void adadelta(const AdadeltaArgs& a, T* p, const T* g, T* square_avg, T* acc_delta, int64_t n);

struct RmspropArgs {
  double lr, alpha, eps, weight_decay, momentum;
  bool centered, maximize;
};
template <typename T>
void rmsprop(const RmspropArgs& a, T* p, const T* g, T* square_avg, T* grad_avg, T* buf, int64_t n);

struct RpropArgs {
  double eta_minus, eta_plus, step_min, step_max;
  bool maximize;
};
template <typename T>
void rprop(const RpropArgs& a, T* p, const T* g, T* prev, T* step_size, int64_t n);

struct AsgdArgs {
  double eta, mu, lambd, weight_decay;  // eta, mu: this step's values (before their update)
  bool maximize;
};
template <typename T>
void asgd(const AsgdArgs& a, T* p, const T* g, T* ax, int64_t n);

}  // namespace lucid::cpu::optim
