// The CUDA kernels of the binary ops in unit Bitwise (backend/common/elementwise_units.h).
#include "backend/cuda/elementwise_launch.cuh"

namespace lucid::cuda {

void binary_bitwise(ops::BinaryOp op, const EwCall& call) { run_binary_unit<backend::Unit::Bitwise>("binary_bitwise", op, call); }

}  // namespace lucid::cuda
