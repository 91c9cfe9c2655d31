// The CUDA kernels of the binary ops in unit Equality (backend/common/elementwise_units.h).
#include "backend/cuda/elementwise_launch.cuh"

namespace lucid::cuda {

void binary_equality(ops::BinaryOp op, const EwCall& call) { run_binary_unit<backend::Unit::Equality>("binary_equality", op, call); }

}  // namespace lucid::cuda
