// The optimizers' steps (ops/optim.h): the per-parameter numbers on the host, then
// one OptimStep launch for the element loops of every parameter.
#include "ops/optim.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <utility>

#include "core/error.h"
#include "ops/prims/optim.h"

namespace lucid::ops::optim {

namespace {

// Every list that a step uses must pair with `params` one to one, each tensor like
// its parameter. `name` is the optimizer's, for the messages.
void check(const char* name, const TensorList& params, const TensorList& grads,
           std::initializer_list<std::pair<const char*, const TensorList*>> states) {
  LUCID_CHECK(grads.size() == params.size(), ValueError, name, ": got ", grads.size(), " gradients for ",
              params.size(), " parameters");
  for (auto [what, list] : states)
    LUCID_CHECK(list->size() == params.size(), ValueError, name, ": got ", list->size(), " ", what, " for ",
                params.size(), " parameters");
  for (size_t i = 0; i < params.size(); ++i) {
    const TensorPtr& p = params[i];
    LUCID_CHECK(p && grads[i], ValueError, name, ": parameter ", i, " or its gradient is missing");
    LUCID_CHECK(p->dtype() == Dtype::F32 || p->dtype() == Dtype::F64, TypeError, name,
                ": parameters must be float32 or float64, but parameter ", i, " is ", dtype_name(p->dtype()));
    auto like = [&](const TensorPtr& t, const char* what) {
      LUCID_CHECK(t, ValueError, name, ": the ", what, " of parameter ", i, " is missing");
      LUCID_CHECK(t->shape() == p->shape() && t->dtype() == p->dtype() && t->device() == p->device(), RuntimeError,
                  name, ": the ", what, " of parameter ", i, " has shape ", shape_str(t->shape()), " and dtype ",
                  dtype_name(t->dtype()), " on ", t->device().str(), "; expected shape ", shape_str(p->shape()),
                  " and dtype ", dtype_name(p->dtype()), " on ", p->device().str(), " like the parameter");
      LUCID_CHECK(t->is_contiguous(), RuntimeError, name, ": the ", what, " of parameter ", i,
                  " must be contiguous");
    };
    like(p, "memory");
    like(grads[i], "gradient");
    for (auto [what, list] : states) like((*list)[i], what);
  }
}

// Per-parameter scalar state, kept as torch keeps it (one-element float32 CPU
// tensors): `what` must pair with the parameters. Their values, to be read and
// written in place (the tensors are marked as written). They are host numbers on
// every device: a step reads them here and passes what it derives by value in
// OptimStep's arguments, so no kernel reads them.
std::vector<float*> scalar_slots(const char* name, const char* what, const TensorList& list, size_t count) {
  LUCID_CHECK(list.size() == count, ValueError, name, ": got ", list.size(), " ", what, " values for ", count,
              " parameters");
  std::vector<float*> slots(count);
  for (size_t i = 0; i < count; ++i) {
    const TensorPtr& s = list[i];
    LUCID_CHECK(s && s->numel() == 1 && s->dtype() == Dtype::F32 && s->device().is_cpu(), RuntimeError, name,
                ": the ", what, " of parameter ", i, " must be a one-element float32 CPU tensor");
    s->bump_version();
    slots[i] = host_data<float>(s);
  }
  return slots;
}

// The step counter of each parameter, incremented: the t of this step.
std::vector<double> next_steps(const char* name, const TensorList& steps, size_t count) {
  std::vector<double> t(count);
  std::vector<float*> slots = scalar_slots(name, "step", steps, count);
  for (size_t i = 0; i < count; ++i) t[i] = *slots[i] += 1.0f;
  return t;
}

using States = std::vector<const TensorList*>;

// This step's per-parameter arguments, made on the host from the optimizer's scalar
// state, which it advances (step counts, running products).
using ArgsMaker = std::function<std::vector<StepArgs>()>;

// Launches one OptimStep over every parameter (outs: the parameters, then each
// state list; ins: the gradients) with next()'s arguments, then marks the parameters
// and states as written. The primitive keeps next() for a replayed training step
// (Note [Replayed steps], core/pending.h): each replay advances the counters and takes
// new arguments, as this call did.
void step(const TensorList& params, const TensorList& grads, const States& states, ArgsMaker next) {
  if (params.empty()) return;
  std::vector<TensorImpl*> outs;
  std::vector<const TensorImpl*> ins;
  outs.reserve(params.size() * (1 + states.size()));
  for (const TensorPtr& p : params) outs.push_back(p.get());
  for (const TensorList* list : states)
    for (const TensorPtr& t : *list) outs.push_back(t.get());
  for (const TensorPtr& g : grads) ins.push_back(g.get());
  OptimStep p;
  p.args = next();
  p.next = std::move(next);
  launch(p, outs, ins);
  for (const TensorPtr& t : params) t->bump_version();
  for (const TensorList* list : states)
    for (const TensorPtr& t : *list) t->bump_version();
}

}  // namespace

const char* OptimStep::name() const {
  static constexpr const char* kNames[] = {"SGD",     "Adam",     "Adamax",  "NAdam", "RAdam",
                                           "Adagrad", "Adadelta", "RMSprop", "Rprop", "ASGD"};
  if (args.empty()) return "OptimStep";
  if (const auto* a = std::get_if<AdamArgs>(&args[0]); a && a->decoupled) return "AdamW";
  return kNames[args[0].index()];
}

void sgd(const TensorList& params, const TensorList& grads, const TensorList& momentum_buffers,
         const std::vector<bool>& fresh, const SgdOptions& o) {
  const bool momentum = o.momentum != 0;
  if (momentum) check("SGD", params, grads, {{"momentum buffer", &momentum_buffers}});
  else check("SGD", params, grads, {});
  LUCID_CHECK(!momentum || fresh.size() == params.size(), ValueError, "SGD: got ", fresh.size(),
              " fresh-buffer flags for ", params.size(), " parameters");
  std::vector<StepArgs> args;
  for (size_t i = 0; i < params.size(); ++i)
    args.push_back(SgdArgs{o.lr, o.momentum, o.dampening, o.weight_decay, o.nesterov, o.maximize,
                           momentum && fresh[i]});
  // A later run of this step finds every buffer made: none starts as the gradient.
  std::vector<StepArgs> later = args;
  for (StepArgs& a : later) std::get<SgdArgs>(a).first = false;
  step(params, grads, momentum ? States{&momentum_buffers} : States{},
       [args, later, first = true]() mutable { return std::exchange(first, false) ? args : later; });
}

void adam(const TensorList& params, const TensorList& grads, const TensorList& exp_avgs,
          const TensorList& exp_avg_sqs, const TensorList& max_exp_avg_sqs, const TensorList& steps,
          const AdamOptions& o) {
  const char* name = o.decoupled ? "AdamW" : "Adam";
  if (o.amsgrad)
    check(name, params, grads, {{"exp_avg", &exp_avgs}, {"exp_avg_sq", &exp_avg_sqs},
                                {"max_exp_avg_sq", &max_exp_avg_sqs}});
  else
    check(name, params, grads, {{"exp_avg", &exp_avgs}, {"exp_avg_sq", &exp_avg_sqs}});
  step(params, grads,
       o.amsgrad ? States{&exp_avgs, &exp_avg_sqs, &max_exp_avg_sqs} : States{&exp_avgs, &exp_avg_sqs},
       [name, steps, o, n = params.size()] {
         const std::vector<double> t = next_steps(name, steps, n);
         std::vector<StepArgs> args;
         for (size_t i = 0; i < n; ++i) {
           const double bias1 = 1 - std::pow(o.beta1, t[i]), bias2 = 1 - std::pow(o.beta2, t[i]);
           args.push_back(AdamArgs{o.lr, o.beta1, o.beta2, o.eps, o.weight_decay, o.lr / bias1, std::sqrt(bias2),
                                   o.decoupled, o.amsgrad, o.maximize});
         }
         return args;
       });
}

void adamax(const TensorList& params, const TensorList& grads, const TensorList& exp_avgs,
            const TensorList& exp_infs, const TensorList& steps, const AdamaxOptions& o) {
  check("Adamax", params, grads, {{"exp_avg", &exp_avgs}, {"exp_inf", &exp_infs}});
  step(params, grads, {&exp_avgs, &exp_infs}, [steps, o, n = params.size()] {
    const std::vector<double> t = next_steps("Adamax", steps, n);
    std::vector<StepArgs> args;
    for (size_t i = 0; i < n; ++i)
      args.push_back(
          AdamaxArgs{o.beta1, o.beta2, o.eps, o.weight_decay, o.lr / (1 - std::pow(o.beta1, t[i])), o.maximize});
    return args;
  });
}

void nadam(const TensorList& params, const TensorList& grads, const TensorList& exp_avgs, const TensorList& exp_avg_sqs,
           const TensorList& mu_products, const TensorList& steps, const NadamOptions& o) {
  check("NAdam", params, grads, {{"exp_avg", &exp_avgs}, {"exp_avg_sq", &exp_avg_sqs}});
  step(params, grads, {&exp_avgs, &exp_avg_sqs}, [mu_products, steps, o, n = params.size()] {
    std::vector<float*> products = scalar_slots("NAdam", "mu_product", mu_products, n);
    const std::vector<double> t = next_steps("NAdam", steps, n);
    std::vector<StepArgs> args;
    for (size_t i = 0; i < n; ++i) {
      const double mu = o.beta1 * (1 - 0.5 * std::pow(0.96, t[i] * o.momentum_decay));
      const double mu_next = o.beta1 * (1 - 0.5 * std::pow(0.96, (t[i] + 1) * o.momentum_decay));
      const double mu_product = *products[i] *= float(mu);  // a float32 running product, as torch keeps it
      args.push_back(NadamArgs{o.beta1, o.beta2, o.eps, o.weight_decay, o.lr, 1 - std::pow(o.beta2, t[i]),
                               o.lr * (1 - mu) / (1 - mu_product), o.lr * mu_next / (1 - mu_product * mu_next),
                               o.decoupled, o.maximize});
    }
    return args;
  });
}

void radam(const TensorList& params, const TensorList& grads, const TensorList& exp_avgs, const TensorList& exp_avg_sqs,
           const TensorList& steps, const RadamOptions& o) {
  check("RAdam", params, grads, {{"exp_avg", &exp_avgs}, {"exp_avg_sq", &exp_avg_sqs}});
  step(params, grads, {&exp_avgs, &exp_avg_sqs}, [steps, o, n = params.size()] {
    const std::vector<double> t = next_steps("RAdam", steps, n);
    std::vector<StepArgs> args;
    for (size_t i = 0; i < n; ++i) {
      const double bias1 = 1 - std::pow(o.beta1, t[i]), bias2 = 1 - std::pow(o.beta2, t[i]);
      const double rho_inf = 2 / (1 - o.beta2) - 1;
      const double rho_t = rho_inf - 2 * t[i] * std::pow(o.beta2, t[i]) / bias2;
      // The variance of the adaptive rate is tractable from rho_t > 5 (torch's rule).
      const double rect =
          rho_t > 5 ? std::sqrt((rho_t - 4) * (rho_t - 2) * rho_inf / ((rho_inf - 4) * (rho_inf - 2) * rho_t)) : -1;
      args.push_back(RadamArgs{o.beta1, o.beta2, o.eps, o.weight_decay, o.lr, bias1, std::sqrt(bias2), rect,
                               o.decoupled, o.maximize});
    }
    return args;
  });
}

void adagrad(const TensorList& params, const TensorList& grads, const TensorList& sums, const TensorList& steps,
             const AdagradOptions& o) {
  check("Adagrad", params, grads, {{"sum", &sums}});
  step(params, grads, {&sums}, [steps, o, n = params.size()] {
    const std::vector<double> t = next_steps("Adagrad", steps, n);
    std::vector<StepArgs> args;
    for (size_t i = 0; i < n; ++i)
      args.push_back(AdagradArgs{o.lr / (1 + (t[i] - 1) * o.lr_decay), o.eps, o.weight_decay, o.maximize});
    return args;
  });
}

void adadelta(const TensorList& params, const TensorList& grads, const TensorList& square_avgs,
              const TensorList& acc_deltas, const TensorList& steps, const AdadeltaOptions& o) {
  check("Adadelta", params, grads, {{"square_avg", &square_avgs}, {"acc_delta", &acc_deltas}});
  step(params, grads, {&square_avgs, &acc_deltas}, [steps, o, n = params.size()] {
    next_steps("Adadelta", steps, n);
    return std::vector<StepArgs>(n, AdadeltaArgs{o.lr, o.rho, o.eps, o.weight_decay, o.maximize});
  });
}

void rmsprop(const TensorList& params, const TensorList& grads, const TensorList& square_avgs,
             const TensorList& grad_avgs, const TensorList& momentum_buffers, const TensorList& steps,
             const RmspropOptions& o) {
  const bool momentum = o.momentum > 0;
  if (o.centered && momentum)
    check("RMSprop", params, grads, {{"square_avg", &square_avgs}, {"grad_avg", &grad_avgs},
                                     {"momentum_buffer", &momentum_buffers}});
  else if (o.centered)
    check("RMSprop", params, grads, {{"square_avg", &square_avgs}, {"grad_avg", &grad_avgs}});
  else if (momentum)
    check("RMSprop", params, grads, {{"square_avg", &square_avgs}, {"momentum_buffer", &momentum_buffers}});
  else
    check("RMSprop", params, grads, {{"square_avg", &square_avgs}});
  States states{&square_avgs};
  if (o.centered) states.push_back(&grad_avgs);
  if (momentum) states.push_back(&momentum_buffers);
  step(params, grads, states, [steps, o, n = params.size()] {
    next_steps("RMSprop", steps, n);
    return std::vector<StepArgs>(
        n, RmspropArgs{o.lr, o.alpha, o.eps, o.weight_decay, o.momentum, o.centered, o.maximize});
  });
}

void rprop(const TensorList& params, const TensorList& grads, const TensorList& prevs,
           const TensorList& step_sizes, const TensorList& steps, const RpropOptions& o) {
  check("Rprop", params, grads, {{"prev", &prevs}, {"step_size", &step_sizes}});
  step(params, grads, {&prevs, &step_sizes}, [steps, o, n = params.size()] {
    next_steps("Rprop", steps, n);
    return std::vector<StepArgs>(n, RpropArgs{o.eta_minus, o.eta_plus, o.step_min, o.step_max, o.maximize});
  });
}

void asgd(const TensorList& params, const TensorList& grads, const TensorList& axs, const TensorList& etas,
          const TensorList& mus, const TensorList& steps, const AsgdOptions& o) {
  check("ASGD", params, grads, {{"ax", &axs}});
  step(params, grads, {&axs}, [etas, mus, steps, o, n = params.size()] {
    std::vector<float*> eta = scalar_slots("ASGD", "eta", etas, n);
    std::vector<float*> mu = scalar_slots("ASGD", "mu", mus, n);
    const std::vector<double> t = next_steps("ASGD", steps, n);
    std::vector<StepArgs> args;
    for (size_t i = 0; i < n; ++i) {
      args.push_back(AsgdArgs{*eta[i], *mu[i], o.lambd, o.weight_decay, o.maximize});
      // The next step's rates (torch's schedule), stored as float32 like torch's state.
      *eta[i] = float(o.lr / std::pow(1 + o.lambd * o.lr * t[i], o.alpha));
      *mu[i] = float(1 / std::max(1.0, t[i] - o.t0));
    }
    return args;
  });
}

}  // namespace lucid::ops::optim
