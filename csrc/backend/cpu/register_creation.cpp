// CPU kernels of the creation primitives (ops/prims/creation.h): adapters to the
// kernels of backend/cpu/creation_kernels.h.
#include "backend/cpu/creation_kernels.h"
#include "backend/cpu/register.h"
#include "ops/prims/creation.h"

namespace lucid::cpu {

namespace {

using ops::Inputs;
using ops::Outputs;

void arange_kernel(const ops::Primitive& prim, Outputs outs, Inputs) {
  const auto& p = ops::prim_cast<ops::Arange>(prim);
  fill_arange(*outs[0], p.start, p.step);
}

void linspace_kernel(const ops::Primitive& prim, Outputs outs, Inputs) {
  const auto& p = ops::prim_cast<ops::Linspace>(prim);
  fill_linspace(*outs[0], p.start, p.end, p.log_base);
}

void eye_kernel(const ops::Primitive&, Outputs outs, Inputs) { fill_eye(*outs[0]); }

}  // namespace

void register_creation_kernels() {
  using ops::Prim;
  ops::register_kernel(Prim::Arange, DeviceType::CPU, arange_kernel);
  ops::register_kernel(Prim::Linspace, DeviceType::CPU, linspace_kernel);
  ops::register_kernel(Prim::Eye, DeviceType::CPU, eye_kernel);
}

}  // namespace lucid::cpu
