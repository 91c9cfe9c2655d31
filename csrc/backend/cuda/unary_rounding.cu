// The CUDA kernels of the unary ops in unit Rounding (backend/common/elementwise_units.h).
#include "backend/cuda/elementwise_launch.cuh"

namespace lucid::cuda {

void unary_rounding(ops::UnaryOp op, const EwCall& call) { run_unary_unit<backend::Unit::Rounding>("unary_rounding", op, call); }

}  // namespace lucid::cuda
