// The CUDA kernels of the unary ops in unit Basic (backend/common/elementwise_units.h).
#include "backend/cuda/elementwise_launch.cuh"

namespace lucid::cuda {

void unary_basic(ops::UnaryOp op, const EwCall& call) { run_unary_unit<backend::Unit::Basic>("unary_basic", op, call); }

}  // namespace lucid::cuda
