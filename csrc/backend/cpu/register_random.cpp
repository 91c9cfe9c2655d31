// CPU kernels of the random primitives (ops/prims/random.h): adapters to the fills
// of backend/cpu/random.h, which read the draw the op reserved.
#include "backend/cpu/random.h"
#include "backend/cpu/register.h"
#include "ops/prims/random.h"

namespace lucid::cpu {

namespace {

using ops::Inputs;
using ops::Outputs;
using ops::prim_cast;

void uniform_kernel(const ops::Primitive& prim, Outputs outs, Inputs) {
  const auto& p = prim_cast<ops::RandomUniform>(prim);
  uniform_fill(*outs[0], p.from, p.to, p.draw);
}

void normal_kernel(const ops::Primitive& prim, Outputs outs, Inputs ins) {
  const auto& p = prim_cast<ops::RandomNormal>(prim);
  if (ins.empty()) normal_fill(*outs[0], p.mean, p.std, p.draw);
  else normal_fill(*outs[0], *ins[0], *ins[1], p.draw);
}

void integers_kernel(const ops::Primitive& prim, Outputs outs, Inputs) {
  const auto& p = prim_cast<ops::RandomIntegers>(prim);
  integers_fill(*outs[0], p.low, p.high, p.draw);
}

void bernoulli_kernel(const ops::Primitive& prim, Outputs outs, Inputs ins) {
  const auto& p = prim_cast<ops::RandomBernoulli>(prim);
  if (ins.empty()) bernoulli_fill(*outs[0], p.p, p.draw);
  else bernoulli_fill(*outs[0], *ins[0], p.draw);
}

void permutation_kernel(const ops::Primitive& prim, Outputs outs, Inputs) {
  randperm_fill(*outs[0], prim_cast<ops::RandomPermutation>(prim).draw);
}

void per_element_kernel(const ops::Primitive& prim, Outputs outs, Inputs ins) {
  const auto& p = prim_cast<ops::RandomPerElement>(prim);
  element_fill(*outs[0], ins, p.law, p.draw);
}

void reparam_grad_kernel(const ops::Primitive& prim, Outputs outs, Inputs ins) {
  reparam_grad(*outs[0], ins.data(), prim_cast<ops::ReparamGrad>(prim).dirichlet);
}

void check_kernel(const ops::Primitive& prim, Outputs, Inputs ins) {
  switch (prim_cast<ops::RandomCheck>(prim).what) {
    case ops::RandomArgument::Probabilities: return check_probabilities(*ins[0]);
    case ops::RandomArgument::StandardDeviations: return check_standard_deviations(*ins[0]);
    case ops::RandomArgument::PoissonRates: return check_poisson_rates(*ins[0]);
  }
}

}  // namespace

void register_random_kernels() {
  using ops::Prim;
  ops::register_kernel(Prim::RandomUniform, DeviceType::CPU, uniform_kernel);
  ops::register_kernel(Prim::RandomNormal, DeviceType::CPU, normal_kernel);
  ops::register_kernel(Prim::RandomIntegers, DeviceType::CPU, integers_kernel);
  ops::register_kernel(Prim::RandomBernoulli, DeviceType::CPU, bernoulli_kernel);
  ops::register_kernel(Prim::RandomPermutation, DeviceType::CPU, permutation_kernel);
  ops::register_kernel(Prim::RandomCheck, DeviceType::CPU, check_kernel);
  ops::register_kernel(Prim::RandomPerElement, DeviceType::CPU, per_element_kernel);
  ops::register_kernel(Prim::ReparamGrad, DeviceType::CPU, reparam_grad_kernel);
}

}  // namespace lucid::cpu
