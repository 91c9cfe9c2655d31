// The CUDA kernels of the binary ops in unit Extremum (backend/common/elementwise_units.h).
#include "backend/cuda/elementwise_launch.cuh"

namespace lucid::cuda {

void binary_extremum(ops::BinaryOp op, const EwCall& call) { run_binary_unit<backend::Unit::Extremum>("binary_extremum", op, call); }

}  // namespace lucid::cuda
