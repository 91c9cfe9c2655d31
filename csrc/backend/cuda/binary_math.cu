// The CUDA kernels of the binary ops in unit Math (backend/common/elementwise_units.h).
#include "backend/cuda/elementwise_launch.cuh"

namespace lucid::cuda {

void binary_math(ops::BinaryOp op, const EwCall& call) { run_binary_unit<backend::Unit::Math>("binary_math", op, call); }

}  // namespace lucid::cuda
