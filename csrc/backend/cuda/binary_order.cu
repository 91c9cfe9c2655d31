// The CUDA kernels of the binary ops in unit Order (backend/common/elementwise_units.h).
#include "backend/cuda/elementwise_launch.cuh"

namespace lucid::cuda {

void binary_order(ops::BinaryOp op, const EwCall& call) { run_binary_unit<backend::Unit::Order>("binary_order", op, call); }

}  // namespace lucid::cuda
