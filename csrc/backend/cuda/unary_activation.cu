// The CUDA kernels of the unary ops in unit Activation (backend/common/elementwise_units.h):
// gelu (exact and tanh) and silu.
#include "backend/cuda/elementwise_launch.cuh"

namespace lucid::cuda {

void unary_activation(ops::UnaryOp op, const EwCall& call) {
  run_unary_unit<backend::Unit::Activation>("unary_activation", op, call);
}

}  // namespace lucid::cuda
