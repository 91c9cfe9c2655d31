// The optimizers' element loops (optim_kernels.h), written as PyTorch's
// single-tensor reference steps are, operation by operation, so that a step
// matches torch.optim's to rounding. Each loop is compiled once per instruction
// set (LUCID_CLONES) and vectorised by the compiler; this file is built with
// -fno-math-errno so that sqrt vectorises (lucid never reads errno).
#include "backend/cpu/optim_kernels.h"

#include <algorithm>
#include <cmath>

#include "backend/cpu/reduce_simd.h"

namespace lucid::cpu::optim {

namespace {

// torch.lerp's two forms: exact at w = 0 and at w = 1.
template <typename T>
LUCID_INLINE T lerp(T a, T b, T w) {
  return w < T(0.5) ? a + w * (b - a) : b - (b - a) * (T(1) - w);
}

template <typename T>
LUCID_INLINE void sgd_body(const SgdArgs& a, T* __restrict p, const T* __restrict g, T* __restrict buf, int64_t n) {
  const T lr = T(a.lr), mom = T(a.momentum), damp = T(1 - a.dampening), wd = T(a.weight_decay);
  const T sign = a.maximize ? T(-1) : T(1);
  for (int64_t i = 0; i < n; ++i) {
    T d = sign * g[i];
    if (a.weight_decay != 0) d += wd * p[i];
    if (a.momentum != 0) {
      const T b = a.first ? d : mom * buf[i] + damp * d;
      buf[i] = b;
      d = a.nesterov ? d + mom * b : b;
    }
    p[i] -= lr * d;
  }
}

template <typename T>
LUCID_INLINE void adam_body(const AdamArgs& a, T* __restrict p, const T* __restrict g, T* __restrict m,
                            T* __restrict v, T* __restrict vmax, int64_t n) {
  const T b1 = T(1 - a.beta1), b2 = T(a.beta2), nb2 = T(1 - a.beta2), eps = T(a.eps);
  const T step_size = T(a.step_size), bias2_sqrt = T(a.bias2_sqrt);
  const T decay = T(1 - a.lr * a.weight_decay), wd = T(a.weight_decay);
  const T sign = a.maximize ? T(-1) : T(1);
  for (int64_t i = 0; i < n; ++i) {
    T gi = sign * g[i];
    T pi = p[i];
    if (a.decoupled) pi *= decay;
    else if (a.weight_decay != 0) gi += wd * pi;
    const T mi = lerp(m[i], gi, b1);
    const T vi = b2 * v[i] + nb2 * gi * gi;
    m[i] = mi;
    v[i] = vi;
    T second = vi;
    if (a.amsgrad) {
      second = std::max(vmax[i], vi);
      vmax[i] = second;
    }
    const T denom = std::sqrt(second) / bias2_sqrt + eps;
    p[i] = pi - step_size * (mi / denom);
  }
}

template <typename T>
LUCID_INLINE void adamax_body(const AdamaxArgs& a, T* __restrict p, const T* __restrict g, T* __restrict m,
                              T* __restrict u, int64_t n) {
  const T b1 = T(1 - a.beta1), b2 = T(a.beta2), eps = T(a.eps), wd = T(a.weight_decay), clr = T(a.clr);
  const T sign = a.maximize ? T(-1) : T(1);
  for (int64_t i = 0; i < n; ++i) {
    T gi = sign * g[i];
    if (a.weight_decay != 0) gi += wd * p[i];
    const T mi = lerp(m[i], gi, b1);
    const T ui = std::max(u[i] * b2, std::abs(gi) + eps);
    m[i] = mi;
    u[i] = ui;
    p[i] -= clr * (mi / ui);
  }
}

template <typename T>
LUCID_INLINE void nadam_body(const NadamArgs& a, T* __restrict p, const T* __restrict g, T* __restrict m,
                             T* __restrict v, int64_t n) {
  const T b1 = T(1 - a.beta1), b2 = T(a.beta2), nb2 = T(1 - a.beta2), eps = T(a.eps), bias2 = T(a.bias2);
  const T decay = T(1 - a.lr * a.weight_decay), wd = T(a.weight_decay);
  const T gc = T(a.grad_coef), ac = T(a.avg_coef);
  const T sign = a.maximize ? T(-1) : T(1);
  for (int64_t i = 0; i < n; ++i) {
    T gi = sign * g[i];
    T pi = p[i];
    if (a.decoupled) pi *= decay;
    else if (a.weight_decay != 0) gi += wd * pi;
    const T mi = lerp(m[i], gi, b1);
    const T vi = b2 * v[i] + nb2 * gi * gi;
    m[i] = mi;
    v[i] = vi;
    const T denom = std::sqrt(vi / bias2) + eps;
    pi -= gc * (gi / denom);
    p[i] = pi - ac * (mi / denom);
  }
}

template <typename T>
LUCID_INLINE void radam_body(const RadamArgs& a, T* __restrict p, const T* __restrict g, T* __restrict m,
                             T* __restrict v, int64_t n) {
  const T b1 = T(1 - a.beta1), b2 = T(a.beta2), nb2 = T(1 - a.beta2), eps = T(a.eps), lr = T(a.lr);
  const T decay = T(1 - a.lr * a.weight_decay), wd = T(a.weight_decay);
  const T bias1 = T(a.bias1), bias2_sqrt = T(a.bias2_sqrt), rect = T(a.rect);
  const bool tractable = a.rect >= 0;
  const T sign = a.maximize ? T(-1) : T(1);
  for (int64_t i = 0; i < n; ++i) {
    T gi = sign * g[i];
    T pi = p[i];
    if (a.decoupled) pi *= decay;
    else if (a.weight_decay != 0) gi += wd * pi;
    const T mi = lerp(m[i], gi, b1);
    const T vi = b2 * v[i] + nb2 * gi * gi;
    m[i] = mi;
    v[i] = vi;
    const T m_hat = mi / bias1;
    if (tractable) {
      const T adaptive = bias2_sqrt / (std::sqrt(vi) + eps);
      p[i] = pi - m_hat * lr * adaptive * rect;
    } else {
      p[i] = pi - m_hat * lr;
    }
  }
}

template <typename T>
LUCID_INLINE void adagrad_body(const AdagradArgs& a, T* __restrict p, const T* __restrict g, T* __restrict sum,
                               int64_t n) {
  const T clr = T(a.clr), eps = T(a.eps), wd = T(a.weight_decay);
  const T sign = a.maximize ? T(-1) : T(1);
  for (int64_t i = 0; i < n; ++i) {
    T gi = sign * g[i];
    if (a.weight_decay != 0) gi += wd * p[i];
    const T s = sum[i] + gi * gi;
    sum[i] = s;
    p[i] -= clr * (gi / (std::sqrt(s) + eps));
  }
}

template <typename T>
LUCID_INLINE void adadelta_body(const AdadeltaArgs& a, T* __restrict p, const T* __restrict g,
                                T* __restrict square_avg, T* __restrict acc_delta, int64_t n) {
  const T rho = T(a.rho), nrho = T(1 - a.rho), eps = T(a.eps), wd = T(a.weight_decay), lr = T(a.lr);
  const T sign = a.maximize ? T(-1) : T(1);
  for (int64_t i = 0; i < n; ++i) {
    T gi = sign * g[i];
    if (a.weight_decay != 0) gi += wd * p[i];
    const T sa = rho * square_avg[i] + nrho * gi * gi;
    square_avg[i] = sa;
    const T delta = std::sqrt(acc_delta[i] + eps) / std::sqrt(sa + eps) * gi;
    acc_delta[i] = rho * acc_delta[i] + nrho * delta * delta;
    p[i] -= lr * delta;
  }
}

template <typename T>
LUCID_INLINE void rmsprop_body(const RmspropArgs& a, T* __restrict p, const T* __restrict g,
                               T* __restrict square_avg, T* __restrict grad_avg, T* __restrict buf, int64_t n) {
  const T alpha = T(a.alpha), nalpha = T(1 - a.alpha), eps = T(a.eps), wd = T(a.weight_decay), lr = T(a.lr);
  const T mom = T(a.momentum);
  const T sign = a.maximize ? T(-1) : T(1);
  for (int64_t i = 0; i < n; ++i) {
    T gi = sign * g[i];
    if (a.weight_decay != 0) gi += wd * p[i];
    const T sa = alpha * square_avg[i] + nalpha * gi * gi;
    square_avg[i] = sa;
    T avg;
    if (a.centered) {
      const T ga = lerp(grad_avg[i], gi, nalpha);
      grad_avg[i] = ga;
      avg = std::sqrt(sa - ga * ga) + eps;
    } else {
      avg = std::sqrt(sa) + eps;
    }
    if (a.momentum > 0) {
      const T b = mom * buf[i] + gi / avg;
      buf[i] = b;
      p[i] -= lr * b;
    } else {
      p[i] -= lr * (gi / avg);
    }
  }
}

template <typename T>
LUCID_INLINE void rprop_body(const RpropArgs& a, T* __restrict p, const T* __restrict g, T* __restrict prev,
                             T* __restrict step_size, int64_t n) {
  const T up = T(a.eta_plus), down = T(a.eta_minus), lo = T(a.step_min), hi = T(a.step_max);
  const T sign = a.maximize ? T(-1) : T(1);
  for (int64_t i = 0; i < n; ++i) {
    T gi = sign * g[i];
    const T s = gi * prev[i];
    const T factor = s > 0 ? up : s < 0 ? down : T(1);
    const T step = std::min(std::max(step_size[i] * factor, lo), hi);
    step_size[i] = step;
    if (s < 0) gi = 0;  // a sign change: no step, and no memory of this gradient
    const T dir = gi > 0 ? T(1) : gi < 0 ? T(-1) : T(0);
    p[i] -= dir * step;
    prev[i] = gi;
  }
}

template <typename T>
LUCID_INLINE void asgd_body(const AsgdArgs& a, T* __restrict p, const T* __restrict g, T* __restrict ax, int64_t n) {
  const T eta = T(a.eta), mu = T(a.mu), shrink = T(1 - a.lambd * a.eta), wd = T(a.weight_decay);
  const T sign = a.maximize ? T(-1) : T(1);
  for (int64_t i = 0; i < n; ++i) {
    T gi = sign * g[i];
    if (a.weight_decay != 0) gi += wd * p[i];
    const T pi = p[i] * shrink - eta * gi;
    p[i] = pi;
    ax[i] = a.mu != 1 ? ax[i] + (pi - ax[i]) * mu : pi;
  }
}

}  // namespace

// One clone per instruction set for each loop and dtype, and the header's template
// specialised to call it. PARAMS(T) spells a loop's pointer parameters for T.
#define LUCID_OPTIM_LOOP(name, Args, PARAMS, ARGS)                                  \
  LUCID_CLONES void name##_f32(const Args& a, PARAMS(float)) { name##_body<float> ARGS; }    \
  LUCID_CLONES void name##_f64(const Args& a, PARAMS(double)) { name##_body<double> ARGS; }  \
  template <>                                                                      \
  void name<float>(const Args& a, PARAMS(float)) {                                 \
    name##_f32 ARGS;                                                               \
  }                                                                                \
  template <>                                                                      \
  void name<double>(const Args& a, PARAMS(double)) {                               \
    name##_f64 ARGS;                                                               \
  }

#define SGD_PARAMS(T) T *p, const T *g, T *buf, int64_t n
#define ADAM_PARAMS(T) T *p, const T *g, T *m, T *v, T *vmax, int64_t n
#define TWO_STATE_PARAMS(T) T *p, const T *g, T *s1, T *s2, int64_t n
#define ONE_STATE_PARAMS(T) T *p, const T *g, T *s1, int64_t n
#define RMSPROP_PARAMS(T) T *p, const T *g, T *sa, T *ga, T *buf, int64_t n
LUCID_OPTIM_LOOP(sgd, SgdArgs, SGD_PARAMS, (a, p, g, buf, n))
LUCID_OPTIM_LOOP(adam, AdamArgs, ADAM_PARAMS, (a, p, g, m, v, vmax, n))
LUCID_OPTIM_LOOP(adamax, AdamaxArgs, TWO_STATE_PARAMS, (a, p, g, s1, s2, n))
LUCID_OPTIM_LOOP(nadam, NadamArgs, TWO_STATE_PARAMS, (a, p, g, s1, s2, n))
LUCID_OPTIM_LOOP(radam, RadamArgs, TWO_STATE_PARAMS, (a, p, g, s1, s2, n))
LUCID_OPTIM_LOOP(adagrad, AdagradArgs, ONE_STATE_PARAMS, (a, p, g, s1, n))
LUCID_OPTIM_LOOP(adadelta, AdadeltaArgs, TWO_STATE_PARAMS, (a, p, g, s1, s2, n))
LUCID_OPTIM_LOOP(rmsprop, RmspropArgs, RMSPROP_PARAMS, (a, p, g, sa, ga, buf, n))
LUCID_OPTIM_LOOP(rprop, RpropArgs, TWO_STATE_PARAMS, (a, p, g, s1, s2, n))
LUCID_OPTIM_LOOP(asgd, AsgdArgs, ONE_STATE_PARAMS, (a, p, g, s1, n))
#undef SGD_PARAMS
#undef ADAM_PARAMS
#undef TWO_STATE_PARAMS
#undef ONE_STATE_PARAMS
#undef RMSPROP_PARAMS
#undef LUCID_OPTIM_LOOP

}  // namespace lucid::cpu::optim
