// The CUDA kernels of the binary ops in unit Arith (backend/common/elementwise_units.h).
#include "backend/cuda/elementwise_launch.cuh"

namespace lucid::cuda {

void binary_arith(ops::BinaryOp op, const EwCall& call) { run_binary_unit<backend::Unit::Arith>("binary_arith", op, call); }

}  // namespace lucid::cuda
