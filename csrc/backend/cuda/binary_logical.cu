// The CUDA kernels of the binary ops in unit Logical (backend/common/elementwise_units.h).
#include "backend/cuda/elementwise_launch.cuh"

namespace lucid::cuda {

void binary_logical(ops::BinaryOp op, const EwCall& call) { run_binary_unit<backend::Unit::Logical>("binary_logical", op, call); }

}  // namespace lucid::cuda
