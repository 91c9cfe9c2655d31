// CPU kernels of the shape primitives (ops/prims/shape.h): adapters to the kernels of
// backend/cpu/gather_scatter.h.
#include "backend/cpu/gather_scatter.h"
#include "backend/cpu/register.h"
#include "ops/prims/shape.h"

namespace lucid::cpu {

namespace {

using ops::Inputs;
using ops::Outputs;

void flip_kernel(const ops::Primitive& p, Outputs outs, Inputs ins) {
  flip(*outs[0], *ins[0], ops::prim_cast<ops::Flip>(p).dims);
}

void tri_kernel(const ops::Primitive& prim, Outputs outs, Inputs) {
  const auto& p = ops::prim_cast<ops::Tri>(prim);
  tri_zero(*outs[0], p.diagonal, p.lower);
}

}  // namespace

void register_shape_kernels() {
  using ops::Prim;
  ops::register_kernel(Prim::Flip, DeviceType::CPU, flip_kernel);
  ops::register_kernel(Prim::Tri, DeviceType::CPU, tri_kernel);
}

}  // namespace lucid::cpu
