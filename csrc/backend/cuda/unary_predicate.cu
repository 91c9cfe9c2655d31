// The CUDA kernels of the unary ops in unit Predicate (backend/common/elementwise_units.h).
#include "backend/cuda/elementwise_launch.cuh"

namespace lucid::cuda {

void unary_predicate(ops::UnaryOp op, const EwCall& call) { run_unary_unit<backend::Unit::Predicate>("unary_predicate", op, call); }

}  // namespace lucid::cuda
