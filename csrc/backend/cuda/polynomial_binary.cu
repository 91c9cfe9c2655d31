// The CUDA kernels of the Polynomial unit (backend/common/elementwise_units.h):
// torch.special's orthogonal polynomial families (ops/polynomial_math.h).
#include "backend/cuda/elementwise_launch.cuh"

namespace lucid::cuda {

void binary_polynomial(ops::BinaryOp op, const EwCall& call) {
  run_binary_unit<backend::Unit::Polynomial>("binary_polynomial", op, call);
}

}  // namespace lucid::cuda
