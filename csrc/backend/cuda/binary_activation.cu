// The CUDA kernels of the binary ops in unit Activation (backend/common/elementwise_units.h):
// the derivatives of gelu (exact and tanh) and silu.
#include "backend/cuda/elementwise_launch.cuh"

namespace lucid::cuda {

void binary_activation(ops::BinaryOp op, const EwCall& call) {
  run_binary_unit<backend::Unit::Activation>("binary_activation", op, call);
}

}  // namespace lucid::cuda
