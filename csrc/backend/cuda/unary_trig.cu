// The CUDA kernels of the unary ops in unit Trig (backend/common/elementwise_units.h).
#include "backend/cuda/elementwise_launch.cuh"

namespace lucid::cuda {

void unary_trig(ops::UnaryOp op, const EwCall& call) { run_unary_unit<backend::Unit::Trig>("unary_trig", op, call); }

}  // namespace lucid::cuda
