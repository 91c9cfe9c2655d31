// The CUDA kernels of the unary ops in unit Math (backend/common/elementwise_units.h).
#include "backend/cuda/elementwise_launch.cuh"

namespace lucid::cuda {

void unary_math(ops::UnaryOp op, const EwCall& call) { run_unary_unit<backend::Unit::Math>("unary_math", op, call); }

}  // namespace lucid::cuda
