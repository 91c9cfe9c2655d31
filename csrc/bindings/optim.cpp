// The optimizers' fused steps (ops/optim.h) as lucid._C._<name>_step; the classes in
// python/lucid/optim keep the state and the param groups. The GIL is released while
// a step runs.
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/vector.h>

#include "bindings/common.h"
#include "ops/optim.h"

namespace lucid::bindings {

namespace o = ops::optim;
using List = o::TensorList;

void init_optim(nb::module_& m) {
  const auto release = nb::call_guard<nb::gil_scoped_release>();
  m.def("_sgd_step",
        [](const List& p, const List& g, const List& bufs, const std::vector<bool>& fresh, double lr,
           double momentum, double dampening, double weight_decay, bool nesterov, bool maximize) {
          o::sgd(p, g, bufs, fresh, {lr, momentum, dampening, weight_decay, nesterov, maximize});
        },
        release);
  m.def("_adam_step",
        [](const List& p, const List& g, const List& m1, const List& m2, const List& vmax, const List& steps,
           double lr, double beta1, double beta2, double eps, double weight_decay, bool amsgrad, bool maximize,
           bool decoupled) {
          o::adam(p, g, m1, m2, vmax, steps, {lr, beta1, beta2, eps, weight_decay, amsgrad, maximize, decoupled});
        },
        release);
  m.def("_adamax_step",
        [](const List& p, const List& g, const List& m1, const List& u, const List& steps, double lr, double beta1,
           double beta2, double eps, double weight_decay, bool maximize) {
          o::adamax(p, g, m1, u, steps, {lr, beta1, beta2, eps, weight_decay, maximize});
        },
        release);
  m.def("_nadam_step",
        [](const List& p, const List& g, const List& m1, const List& m2, const List& mu_products, const List& steps,
           double lr, double beta1, double beta2, double eps, double weight_decay, double momentum_decay,
           bool decoupled, bool maximize) {
          o::nadam(p, g, m1, m2, mu_products, steps,
                   {lr, beta1, beta2, eps, weight_decay, momentum_decay, decoupled, maximize});
        },
        release);
  m.def("_radam_step",
        [](const List& p, const List& g, const List& m1, const List& m2, const List& steps, double lr, double beta1,
           double beta2, double eps, double weight_decay, bool decoupled, bool maximize) {
          o::radam(p, g, m1, m2, steps, {lr, beta1, beta2, eps, weight_decay, decoupled, maximize});
        },
        release);
  m.def("_adagrad_step",
        [](const List& p, const List& g, const List& sums, const List& steps, double lr, double lr_decay,
           double weight_decay, double eps, bool maximize) {
          o::adagrad(p, g, sums, steps, {lr, lr_decay, weight_decay, eps, maximize});
        },
        release);
  m.def("_adadelta_step",
        [](const List& p, const List& g, const List& square_avgs, const List& acc_deltas, const List& steps,
           double lr, double rho, double eps, double weight_decay, bool maximize) {
          o::adadelta(p, g, square_avgs, acc_deltas, steps, {lr, rho, eps, weight_decay, maximize});
        },
        release);
  m.def("_rmsprop_step",
        [](const List& p, const List& g, const List& square_avgs, const List& grad_avgs, const List& bufs,
           const List& steps, double lr, double alpha, double eps, double weight_decay, double momentum,
           bool centered, bool maximize) {
          o::rmsprop(p, g, square_avgs, grad_avgs, bufs, steps,
                     {lr, alpha, eps, weight_decay, momentum, centered, maximize});
        },
        release);
  m.def("_rprop_step",
        [](const List& p, const List& g, const List& prevs, const List& step_sizes, const List& steps,
           double eta_minus, double eta_plus, double step_min, double step_max, bool maximize) {
          o::rprop(p, g, prevs, step_sizes, steps, {eta_minus, eta_plus, step_min, step_max, maximize});
        },
        release);
  m.def("_asgd_step",
        [](const List& p, const List& g, const List& axs, const List& etas, const List& mus, const List& steps,
           double lr, double lambd, double alpha, double t0, double weight_decay, bool maximize) {
          o::asgd(p, g, axs, etas, mus, steps, {lr, lambd, alpha, t0, weight_decay, maximize});
        },
        release);
}

}  // namespace lucid::bindings
