// The CUDA kernels of the binary ops in unit Division (backend/common/elementwise_units.h).
#include "backend/cuda/elementwise_launch.cuh"

namespace lucid::cuda {

void binary_division(ops::BinaryOp op, const EwCall& call) { run_binary_unit<backend::Unit::Division>("binary_division", op, call); }

}  // namespace lucid::cuda
